package apiserver_test

import (
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// pods/ephemeralcontainers as kubectl debug uses it: a strategic merge
// patch adds a defaulted ephemeral container; nothing else of the pod
// changes through it; existing ones cannot be removed; the main resource
// cannot change them.
func TestEphemeralContainersSubresource(t *testing.T) {
	c := start(t)
	ns := c.namespace("debug")
	base := "/api/v1/namespaces/" + ns + "/pods/p"
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod("p", "nginx"), http.StatusCreated, nil)

	patch := `{"metadata":{"labels":{"sneaky":"yes"}},"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox:1.35.0","targetContainerName":"app","stdin":true,"tty":true}]}}`
	code, _, body := c.do(http.MethodPatch, base+"/ephemeralcontainers", []byte(patch), "application/strategic-merge-patch+json", "")
	if code != http.StatusOK {
		t.Fatalf("patch: %d %s", code, body)
	}
	var got corev1.Pod
	c.call(http.MethodGet, base+"/ephemeralcontainers", nil, http.StatusOK, &got)
	if len(got.Spec.EphemeralContainers) != 1 {
		t.Fatalf("ephemeral containers %v", got.Spec.EphemeralContainers)
	}
	ec := got.Spec.EphemeralContainers[0]
	if ec.TargetContainerName != "app" || ec.TerminationMessagePolicy != corev1.TerminationMessageReadFile || ec.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("ephemeral container %+v: want target app and defaults", ec)
	}
	if got.Labels["sneaky"] != "" {
		t.Errorf("labels changed through the subresource: %v", got.Labels)
	}
	if got.Generation != 2 {
		t.Errorf("generation %d, want 2", got.Generation)
	}

	for _, tc := range []struct{ name, patch, ctype, want string }{
		{"remove", `{"spec":{"ephemeralContainers":null}}`, "application/merge-patch+json", `existing ephemeral containers \"debugger\" may not be removed`},
		{"change", `{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox:1.36"}]}}`, "application/strategic-merge-patch+json", `existing ephemeral containers \"debugger\" may not be changed`},
		{"unknown target", `{"spec":{"ephemeralContainers":[{"name":"two","image":"busybox","targetContainerName":"nope"}]}}`, "application/strategic-merge-patch+json", "spec.ephemeralContainers[0].targetContainerName: Not found"},
		{"ports", `{"spec":{"ephemeralContainers":[{"name":"two","image":"busybox","ports":[{"containerPort":80}]}]}}`, "application/strategic-merge-patch+json", "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container"},
		{"same name as a container", `{"spec":{"ephemeralContainers":[{"name":"app","image":"busybox"}]}}`, "application/strategic-merge-patch+json", `spec.ephemeralContainers[0].name: Duplicate value: \"app\"`},
	} {
		code, _, body := c.do(http.MethodPatch, base+"/ephemeralcontainers", []byte(tc.patch), tc.ctype, "")
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want 422 with %q", tc.name, code, body, tc.want)
		}
	}
	// The main resource cannot change them.
	code, _, body = c.do(http.MethodPatch, base, []byte(`{"spec":{"ephemeralContainers":[{"name":"other","image":"busybox"}]}}`), "application/strategic-merge-patch+json", "")
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "pod updates may not change fields") {
		t.Errorf("main resource patch: %d %s, want 422", code, body)
	}
}
