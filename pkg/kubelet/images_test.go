package kubelet

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
)

const testDigest = "sha256:e6693c20186f837fc393390135d8a598a96a833917917789d63766cab6c59582"

func TestParseImageName(t *testing.T) {
	for _, tc := range []struct{ in, repo, tag, digest, err string }{
		{in: "ubuntu", repo: "docker.io/library/ubuntu", tag: "latest"},
		{in: "ubuntu:2342", repo: "docker.io/library/ubuntu", tag: "2342"},
		{in: "foo/bar:445566", repo: "docker.io/foo/bar", tag: "445566"},
		{in: "index.docker.io/foo/bar", repo: "docker.io/foo/bar", tag: "latest"},
		{in: "docker.io/busybox", repo: "docker.io/library/busybox", tag: "latest"},
		{in: "registry.example.com:5000/foobar:latest", repo: "registry.example.com:5000/foobar", tag: "latest"},
		{in: "registry.example.com:5000/foobar", repo: "registry.example.com:5000/foobar", tag: "latest"},
		{in: "registry.example.com/foo/bar/baz:v1.2_3", repo: "registry.example.com/foo/bar/baz", tag: "v1.2_3"},
		{in: "localhost/skiff/pause:3.10", repo: "localhost/skiff/pause", tag: "3.10"},
		{in: "ubuntu@" + testDigest, repo: "docker.io/library/ubuntu", digest: testDigest},
		{in: "ubuntu:tag1@" + testDigest, repo: "docker.io/library/ubuntu", tag: "tag1", digest: testDigest},
		{in: "Ubuntu", err: `couldn't parse image name "Ubuntu": invalid reference format: repository name (Ubuntu) must be lowercase`},
		{in: "", err: `couldn't parse image name "": invalid reference format`},
		{in: "foo:bar:baz", err: `couldn't parse image name "foo:bar:baz": invalid reference format`},
		{in: "foo@sha256:abc", err: `couldn't parse image name "foo@sha256:abc": invalid reference format`},
	} {
		repo, tag, digest, err := parseImageName(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || repo != tc.repo || tag != tc.tag || digest != tc.digest {
			t.Errorf("%q: %q %q %q %v, want %q %q %q", tc.in, repo, tag, digest, err, tc.repo, tc.tag, tc.digest)
		}
	}
}

func TestApplyDefaultImageTagAndPullPolicy(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		policy   corev1.PullPolicy
	}{
		{"busybox", "busybox:latest", corev1.PullAlways},
		{"busybox:latest", "busybox:latest", corev1.PullAlways},
		{"busybox:1.36", "busybox:1.36", corev1.PullIfNotPresent},
		{"busybox@" + testDigest, "busybox@" + testDigest, corev1.PullIfNotPresent},
		{"localhost:5000/x", "localhost:5000/x:latest", corev1.PullAlways},
		{"localhost/skiff/pause:3.10", "localhost/skiff/pause:3.10", corev1.PullIfNotPresent},
	} {
		got, err := applyDefaultImageTag(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("applyDefaultImageTag(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if p := pullPolicy(&corev1.Container{Image: tc.in}); p != tc.policy {
			t.Errorf("pullPolicy(%q) = %s, want %s", tc.in, p, tc.policy)
		}
	}
	if p := pullPolicy(&corev1.Container{Image: "busybox", ImagePullPolicy: corev1.PullNever}); p != corev1.PullNever {
		t.Errorf("an explicit policy is kept: %s", p)
	}
}

func dockerConfigJSONSecret(name string, auths map[string]string) *corev1.Secret {
	var parts []string
	for host, userPass := range auths {
		parts = append(parts, fmt.Sprintf("%q:{\"auth\":%q}", host, base64.StdEncoding.EncodeToString([]byte(userPass))))
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{` + strings.Join(parts, ",") + `}}`)}}
}

func TestKeyring(t *testing.T) {
	secrets := []*corev1.Secret{
		dockerConfigJSONSecret("hub", map[string]string{"https://index.docker.io/v1/": "hubuser:hubpass"}),
		dockerConfigJSONSecret("corp", map[string]string{"registry.example.com:5000": "portuser:p", "*.corp.example": "globuser:g",
			"registry.example.com/team": "teamuser:t", "registry.example.com": "exuser:e"}),
		{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Type: corev1.SecretTypeDockercfg,
			Data: map[string][]byte{corev1.DockerConfigKey: []byte(`{"quay.io":{"username":"quser","password":"qpass"}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "opaque"}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"quay.io":{"username":"no","password":"no"}}}`)}},
	}
	kr, err := makeKeyring(secrets)
	if err != nil {
		t.Fatal(err)
	}
	users := func(image string) string {
		repo, _, _, err := parseImageName(image)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range kr.lookup(repo) {
			out = append(out, a.Username+":"+a.Password)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct{ image, want string }{
		{"busybox", "hubuser:hubpass"},
		{"docker.io/someone/app:1", "hubuser:hubpass"},
		{"registry.example.com:5000/app", "portuser:p"},
		{"registry.example.com/team/app", "teamuser:t,exuser:e"},
		{"registry.example.com/other/app", "exuser:e"},
		{"a.corp.example/app", "globuser:g"},
		{"a.b.corp.example/app", ""},
		{"quay.io/org/app", "quser:qpass"},
		{"ghcr.io/org/app", ""},
	} {
		if got := users(tc.image); got != tc.want {
			t.Errorf("%s: credentials %q, want %q", tc.image, got, tc.want)
		}
	}
	if _, err := makeKeyring([]*corev1.Secret{{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte("{")}}}); err == nil {
		t.Error("a broken .dockerconfigjson is an error")
	}
}

func TestImageBackOff(t *testing.T) {
	var b imageBackOff
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if in, _ := b.inBackOff("k", t0); in {
		t.Fatal("no failure yet")
	}
	now := t0
	for _, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second} {
		b.failed("k", now, "ErrImagePull: boom")
		if in, msg := b.inBackOff("k", now.Add(want-time.Millisecond)); !in || msg != "ErrImagePull: boom" {
			t.Fatalf("back-off %v: in back-off %v (%q) just before its end", want, in, msg)
		}
		if in, _ := b.inBackOff("k", now.Add(want)); in {
			t.Fatalf("back-off %v: still in back-off at its end", want)
		}
		now = now.Add(want)
	}
	// Idle for more than twice the maximum: it starts over.
	now = now.Add(11 * time.Minute)
	b.failed("k", now, "x")
	if in, _ := b.inBackOff("k", now.Add(10*time.Second)); in {
		t.Error("the back-off did not start over")
	}
}

// Pull failures: ErrImagePull, then ImagePullBackOff with upstream's
// messages and events, then the pull is tried again after the back-off
// and the pod runs; pull secrets become the CRI auth of the pull.
func TestImagePullFailureBackOffAndSecrets(t *testing.T) {
	h := newHarness(t, sim.Config{})
	secrets := client.For[*corev1.Secret, *corev1.SecretList](h.c).Namespace("default")
	if _, err := secrets.Create(h.ctx, dockerConfigJSONSecret("regcred", map[string]string{"registry.example": "alice:s3cret"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	broken := true
	h.cri.mu.Lock()
	h.cri.pullErr = func(image string) error {
		if broken {
			return errors.New("rpc error: code = NotFound desc = failed to pull and unpack image")
		}
		return nil
	}
	h.cri.mu.Unlock()
	pod := simplePod("pullpod", "app")
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}, {Name: "missing"}}
	h.create(t, pod)
	waiting := func(reason string) func(p *corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == reason
		}
	}
	// ErrImagePull turns ImagePullBackOff at the next sync (the status
	// update's own event), as upstream's.
	p := h.podWhere(t, "pullpod", 0, waiting("ImagePullBackOff"))
	if msg := p.Status.ContainerStatuses[0].State.Waiting.Message; msg != `Back-off pulling image "registry.example/app:1": ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image` {
		t.Errorf("ImagePullBackOff message %q", msg)
	}
	ev := strings.Join(h.events(), "\n")
	for _, want := range []string{
		`Warning FailedToRetrieveImagePullSecret Unable to retrieve some image pull secrets (missing); attempting to pull the image may not succeed.`,
		`Normal Pulling Pulling image "registry.example/app:1"`,
		`Warning Failed Failed to pull image "registry.example/app:1": rpc error: code = NotFound desc = failed to pull and unpack image`,
		`Warning Failed Error: ErrImagePull`,
		`Normal BackOff Back-off pulling image "registry.example/app:1"`,
		`Warning Failed Error: ImagePullBackOff`,
	} {
		if !strings.Contains(ev, want) {
			t.Errorf("missing event %q in:\n%s", want, ev)
		}
	}
	h.cri.mu.Lock()
	broken = false
	pulls := append([]*runtimeapi.PullImageRequest(nil), h.cri.pulls...)
	statuses := append([]string(nil), h.cri.statuses...)
	h.cri.mu.Unlock()
	if len(pulls) == 0 || pulls[0].Auth.GetUsername() != "alice" || pulls[0].Auth.GetPassword() != "s3cret" || pulls[0].Image.Image != "registry.example/app:1" {
		t.Errorf("pull requests %v", pulls)
	}
	if len(statuses) == 0 || statuses[0] != "registry.example/app:1" {
		t.Errorf("no ImageStatus before pulling with IfNotPresent: %v", statuses)
	}
	h.podWhere(t, "pullpod", 2*time.Second, isReady)
	if ev := strings.Join(h.events(), "\n"); !strings.Contains(ev, `Normal Pulled Successfully pulled image "registry.example/app:1" in`) {
		t.Errorf("events after the pull:\n%s", ev)
	}
}

// Never: a missing image is ErrImageNeverPull; a present one runs without
// a pull.
func TestImagePullPolicyNever(t *testing.T) {
	h := newHarness(t, sim.Config{})
	if _, err := h.rt.PullImage(h.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "registry.example/here:1"}}); err != nil {
		t.Fatal(err)
	}
	pod := simplePod("never", "here", "absent")
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].ImagePullPolicy = corev1.PullNever
	}
	h.create(t, pod)
	p := h.podWhere(t, "never", 0, func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 2 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "ErrImageNeverPull" && cs[1].State.Running != nil
	})
	if msg := p.Status.ContainerStatuses[0].State.Waiting.Message; msg != `Container image "registry.example/absent:1" is not present with pull policy of Never` {
		t.Errorf("message %q", msg)
	}
	ev := strings.Join(h.events(), "\n")
	for _, want := range []string{`Warning ErrImageNeverPull Container image "registry.example/absent:1" is not present with pull policy of Never`,
		`Normal Pulled Container image "registry.example/here:1" already present on machine`, "Warning Failed Error: ErrImageNeverPull"} {
		if !strings.Contains(ev, want) {
			t.Errorf("missing event %q in:\n%s", want, ev)
		}
	}
	h.cri.mu.Lock()
	defer h.cri.mu.Unlock()
	if len(h.cri.pulls) != 0 {
		t.Errorf("pulls with policy Never: %v", h.cri.pulls)
	}
}
