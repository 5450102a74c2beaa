package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
)

// recordingRuntime is the simulated runtime that keeps the sandbox,
// container and pull requests the kubelet sent, and can fail pulls.
type recordingRuntime struct {
	*sim.Runtime

	mu        sync.Mutex
	sandboxes []*runtimeapi.RunPodSandboxRequest
	creates   []*runtimeapi.CreateContainerRequest
	pulls     []*runtimeapi.PullImageRequest
	statuses  []string // images asked for by ImageStatus
	pullErr   func(image string) error
	// sandboxErr fails RunPodSandbox while it returns an error.
	sandboxErr func() error
}

func (r *recordingRuntime) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	r.mu.Lock()
	r.sandboxes = append(r.sandboxes, req)
	fail := r.sandboxErr
	r.mu.Unlock()
	if fail != nil {
		if err := fail(); err != nil {
			return nil, err
		}
	}
	return r.Runtime.RunPodSandbox(ctx, req)
}

func (r *recordingRuntime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	r.mu.Lock()
	r.creates = append(r.creates, req)
	r.mu.Unlock()
	return r.Runtime.CreateContainer(ctx, req)
}

func (r *recordingRuntime) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	r.mu.Lock()
	r.pulls = append(r.pulls, req)
	fail := r.pullErr
	r.mu.Unlock()
	if fail != nil {
		if err := fail(req.GetImage().GetImage()); err != nil {
			return nil, err
		}
	}
	return r.Runtime.PullImage(ctx, req)
}

func (r *recordingRuntime) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	r.mu.Lock()
	r.statuses = append(r.statuses, req.GetImage().GetImage())
	r.mu.Unlock()
	return r.Runtime.ImageStatus(ctx, req)
}

// created is the last CreateContainer request of container name.
func (r *recordingRuntime) created(name string) *runtimeapi.CreateContainerRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.creates) - 1; i >= 0; i-- {
		if r.creates[i].GetConfig().GetMetadata().GetName() == name {
			return r.creates[i]
		}
	}
	return nil
}

func criEnv(cfg *runtimeapi.ContainerConfig) map[string]string {
	m := map[string]string{}
	for _, kv := range cfg.GetEnvs() {
		m[kv.Key] = string(kv.Value)
	}
	return m
}

// A container whose configMapKeyRef names a missing key waits with
// CreateContainerConfigError and upstream's message, then starts once the
// key exists, with its environment resolved.
func TestContainerEnvThroughTheKubelet(t *testing.T) {
	h := newHarness(t, sim.Config{}, func(c *Config) { c.PodLogDir = t.TempDir() })
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](h.c).Namespace("default")
	if _, err := cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"other": "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := simplePod("envpod", "app")
	pod.Spec.Containers[0].Command = []string{"/bin/sh", "-c", "echo $(GREETING) $$(GREETING)"}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "greeting"}}},
		{Name: "MY_POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		{Name: "MY_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
		{Name: "MY_HOST", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.hostIP"}}},
	}
	h.create(t, pod)
	want := "couldn't find key greeting in ConfigMap default/cfg"
	h.podWhere(t, "envpod", 0, func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CreateContainerConfigError" &&
			cs[0].State.Waiting.Message == want
	})
	if ev := strings.Join(h.events(), "\n"); !strings.Contains(ev, "Warning Failed Error: "+want) {
		t.Errorf("events:\n%s", ev)
	}
	if _, err := cms.Update(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"greeting": "hello"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The worker retries after its back-off.
	h.podWhere(t, "envpod", 2*time.Second, isReady)
	req := h.cri.created("app")
	if req == nil {
		t.Fatal("no CreateContainer request")
	}
	env := criEnv(req.Config)
	if env["GREETING"] != "hello" || env["MY_POD"] != "envpod" || env["MY_IP"] != "10.88.0.2" || env["MY_HOST"] != "10.0.0.7" {
		t.Errorf("env %v", env)
	}
	if env["KUBERNETES_SERVICE_HOST"] == "" || env["KUBERNETES_PORT_443_TCP_PROTO"] != "tcp" {
		t.Errorf("master service variables missing: %v", env)
	}
	if got := req.Config.Command; strings.Join(got, "|") != "/bin/sh|-c|echo hello $(GREETING)" {
		t.Errorf("command %q", got)
	}
	if req.Config.LogPath != "app/0.log" || !strings.HasSuffix(req.SandboxConfig.LogDirectory, "/default_envpod_"+string(req.SandboxConfig.Metadata.Uid)) {
		t.Errorf("log path %q, directory %q", req.Config.LogPath, req.SandboxConfig.LogDirectory)
	}
}

func TestManagedHostsFile(t *testing.T) {
	root := t.TempDir()
	nodeHosts := filepath.Join(root, "node-hosts")
	if err := os.WriteFile(nodeHosts, []byte("127.0.0.1 localhost\n10.0.0.7 node-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &podConfig{ClusterDomain: "cluster.local", NodeHostsFile: nodeHosts,
		PodDir: func(uid types.UID) string { return filepath.Join(root, "pods", string(uid)) }}
	pod := cfgPod(corev1.Container{Name: "c"})
	pod.Spec.Hostname, pod.Spec.Subdomain = "web-0", "web"
	pod.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo.local", "bar.local"}}}
	m, err := b.hostsMount(pod, &pod.Spec.Containers[0], []string{"10.244.1.5", "fd00::5"})
	if err != nil {
		t.Fatal(err)
	}
	if m == nil || m.ContainerPath != "/etc/hosts" || m.HostPath != filepath.Join(root, "pods", "uid-1", "etc-hosts") || m.Readonly {
		t.Fatalf("mount %+v", m)
	}
	got, _ := os.ReadFile(m.HostPath)
	want := "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n" +
		"fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
		"10.244.1.5\tweb-0.web.ns.svc.cluster.local\tweb-0\nfd00::5\tweb-0.web.ns.svc.cluster.local\tweb-0\n" +
		"\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n"
	if string(got) != want {
		t.Errorf("hosts file:\n%s\nwant:\n%s", got, want)
	}
	// The host network: the node's file under the header.
	pod.Spec.HostNetwork, pod.Spec.HostAliases = true, nil
	m, err = b.hostsMount(pod, &pod.Spec.Containers[0], nil)
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	if got, _ := os.ReadFile(m.HostPath); string(got) != "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n10.0.0.7 node-1\n" {
		t.Errorf("host network hosts file %q", got)
	}
	// No IPs yet, a container mounting /etc/hosts itself, no pod dir: none.
	pod.Spec.HostNetwork = false
	if m, _ := b.hostsMount(pod, &pod.Spec.Containers[0], nil); m != nil {
		t.Errorf("mount without pod IPs: %v", m)
	}
	c := corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}}
	if m, _ := b.hostsMount(pod, &c, []string{"10.244.1.5"}); m != nil {
		t.Errorf("mount over the container's own /etc/hosts: %v", m)
	}
	if m, _ := (&podConfig{}).hostsMount(pod, &pod.Spec.Containers[0], []string{"10.244.1.5"}); m != nil {
		t.Errorf("mount without PodDir: %v", m)
	}
}

func TestTerminationMessage(t *testing.T) {
	dir := t.TempDir()
	b := &podConfig{PodDir: func(uid types.UID) string { return filepath.Join(dir, "pods", string(uid)) }}
	pod := cfgPod(corev1.Container{Name: "c", TerminationMessagePath: "/dev/termination-log"})
	m := b.terminationMessageMount(pod, &pod.Spec.Containers[0])
	if m == nil || m.ContainerPath != "/dev/termination-log" || filepath.Dir(m.HostPath) != filepath.Join(dir, "pods", "uid-1", "containers", "c") {
		t.Fatalf("mount %+v", m)
	}
	if fi, err := os.Stat(m.HostPath); err != nil || fi.Mode().Perm() != 0o666 {
		t.Fatalf("file %v %v", fi, err)
	}
	if m2 := b.terminationMessageMount(pod, &pod.Spec.Containers[0]); m2.HostPath == m.HostPath {
		t.Error("each run gets its own file")
	}
	logPath := filepath.Join(dir, "0.log")
	var log strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&log, "2026-01-01T00:00:00Z stdout F line %d\n", i)
	}
	log.WriteString("2026-01-01T00:00:00Z stderr P part one, \n2026-01-01T00:00:00Z stderr F part two\n")
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	status := func(exit int32, policy corev1.TerminationMessagePolicy) *runtimeapi.ContainerStatus {
		return &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: exit, Reason: "Error", LogPath: logPath,
			Annotations: map[string]string{annotationTerminationMessage: "/dev/termination-log", annotationTerminationMessagePol: string(policy)},
			Mounts:      []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: m.HostPath}}}
	}
	// An empty file: nothing, unless the policy falls back to the logs
	// of a failed container (their last 80 lines).
	if got := withTerminationMessage(status(1, corev1.TerminationMessageReadFile)); got != "" {
		t.Errorf("empty file: %q", got)
	}
	got := withTerminationMessage(status(1, corev1.TerminationMessageFallbackToLogsOnError))
	if !strings.HasPrefix(got, "line 21\n") || !strings.HasSuffix(got, "line 99\npart one, part two\n") {
		t.Errorf("from the logs: %q", got)
	}
	if got := withTerminationMessage(status(0, corev1.TerminationMessageFallbackToLogsOnError)); got != "" {
		t.Errorf("a success does not read the logs: %q", got)
	}
	if err := os.WriteFile(m.HostPath, []byte("bye"), 0o666); err != nil {
		t.Fatal(err)
	}
	s := status(1, corev1.TerminationMessageFallbackToLogsOnError)
	s.Message = "runtime says"
	if got := withTerminationMessage(s); got != "runtime says: bye" {
		t.Errorf("file message: %q", got)
	}
	s.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	if got := withTerminationMessage(s); got != "runtime says" {
		t.Errorf("running container: %q", got)
	}
}

// A sandbox that could not be created is tried again after 10 s.
func TestSandboxCreationRetried(t *testing.T) {
	h := newHarness(t, sim.Config{})
	failing := true
	h.cri.mu.Lock()
	h.cri.sandboxErr = func() error {
		h.cri.mu.Lock()
		defer h.cri.mu.Unlock()
		if failing {
			return errors.New("failed to set up the pod network: cni not ready")
		}
		return nil
	}
	h.cri.mu.Unlock()
	h.create(t, simplePod("retry", "app"))
	waitFor(t, "the failed sandbox event", func() (bool, error) {
		for _, e := range h.events() {
			if e == "Warning FailedCreatePodSandBox Failed to create pod sandbox: failed to set up the pod network: cni not ready" {
				return true, nil
			}
		}
		return false, nil
	})
	h.cri.mu.Lock()
	failing = false
	h.cri.mu.Unlock()
	h.podWhere(t, "retry", 2*time.Second, isReady)
}
