package openapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlBinary returns the versioned kubectl binary ("1.33") installed next to
// the kubectl found on PATH, or "" when there is none.
func kubectlBinary(version string) string {
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	candidate := filepath.Join(filepath.Dir(p), "kubectl."+version)
	if st, err := os.Stat(candidate); err == nil && !st.IsDir() {
		return candidate
	}
	return ""
}

// fakeAPIServer serves legacy discovery for core/v1 and apps/v1 plus h, and
// extra on other paths when set.
func fakeAPIServer(t *testing.T, h http.Handler, extra ...func(*http.ServeMux)) *httptest.Server {
	t.Helper()
	verbs := metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.Handle("/openapi/", h)
	mux.Handle("/openapi/v2", h)
	mux.Handle("/openapi/v3", h)
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	})
	mux.HandleFunc("/api/v1", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, &metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "v1",
			APIResources: []metav1.APIResource{
				{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: verbs, ShortNames: []string{"po"}},
				{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get", "patch", "update"}},
				{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", Verbs: verbs, ShortNames: []string{"ns"}},
			},
		})
	})
	mux.HandleFunc("/apis", func(w http.ResponseWriter, r *http.Request) {
		gv := metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}
		writeJSON(w, &metav1.APIGroupList{
			TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
			Groups:   []metav1.APIGroup{{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}},
		})
	})
	mux.HandleFunc("/apis/apps/v1", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, &metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "apps/v1",
			APIResources: []metav1.APIResource{
				{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: verbs, ShortNames: []string{"deploy"}},
				{Name: "deployments/status", Namespaced: true, Kind: "Deployment", Verbs: metav1.Verbs{"get", "patch", "update"}},
				{Name: "deployments/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: metav1.Verbs{"get", "patch", "update"}},
			},
		})
	})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
	})
	for _, e := range extra {
		e(mux)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: skiff
  cluster:
    server: ` + server + `
contexts:
- name: skiff
  context:
    cluster: skiff
    user: skiff
    namespace: default
current-context: skiff
users:
- name: skiff
  user:
    token: test
`
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestKubectlExplain(t *testing.T) {
	k133, k127 := kubectlBinary("1.33"), kubectlBinary("1.27")
	if k133 == "" && k127 == "" {
		t.Skip("no versioned kubectl binary found next to kubectl on PATH")
	}
	h, err := New(Info{Title: "Kubernetes", Version: "v1.37.2"}, []Resource{
		{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, Verbs: allVerbs,
			Object: &corev1.Pod{}, List: &corev1.PodList{},
			Subresources: []Subresource{{Name: "status", Verbs: []string{"get", "update", "patch"}}}},
		{Version: "v1", Resource: "namespaces", Kind: "Namespace", Verbs: allVerbs,
			Object: &corev1.Namespace{}, List: &corev1.NamespaceList{}},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true, Verbs: allVerbs,
			Object: &appsv1.Deployment{}, List: &appsv1.DeploymentList{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeAPIServer(t, h)
	kubeconfig := writeKubeconfig(t, srv.URL)
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nginx\nspec:\n  unknownField: x\n  containers:\n  - name: nginx\n    image: nginx\n"
	if err := os.WriteFile(manifest, []byte(pod), 0o600); err != nil {
		t.Fatal(err)
	}

	run := func(t *testing.T, bin string, args ...string) string {
		t.Helper()
		home := t.TempDir()
		cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	expect := func(t *testing.T, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
	}

	cases := []struct {
		bin  string
		args []string
		want []string
	}{
		{k133, []string{"explain", "pod.spec"}, []string{"containers", "List of containers belonging to the pod", "<[]Container> -required-"}},
		{k133, []string{"explain", "deployment.spec.strategy", "--recursive"}, []string{"rollingUpdate", "maxSurge", "maxUnavailable", "type"}},
		{k133, []string{"explain", "pods.spec.containers.resources.limits"}, []string{"Limits describes the maximum amount of compute resources allowed"}},
		{k133, []string{"explain", "pods", "--output=plaintext-openapiv2"}, []string{"Pod is a collection of containers", "spec"}},
		{k133, []string{"explain", "pod.spec.containers.imagePullPolicy"}, []string{"ENUM:", "IfNotPresent", "Possible enum values"}},
		// With --validate=strict (the default) kubectl looks for fieldValidation on
		// the kind's PATCH operation; finding it, it leaves validation to the
		// server instead of rejecting the unknown field itself.
		{k133, []string{"create", "--dry-run=client", "-o", "yaml", "-f", podWithUnknownField}, []string{"unknownField: x", "name: nginx"}},
		{k127, []string{"create", "--dry-run=client", "-o", "yaml", "-f", podWithUnknownField}, []string{"unknownField: x"}},
		{k127, []string{"explain", "pod.spec"}, []string{"containers", "List of containers belonging to the pod"}},
		{k127, []string{"explain", "deployment.spec.strategy", "--recursive"}, []string{"rollingUpdate", "maxSurge"}},
	}
	for _, c := range cases {
		for i, a := range c.args {
			if a == podWithUnknownField {
				c.args[i] = manifest
			}
		}
		if c.bin == "" {
			continue
		}
		t.Run(filepath.Base(c.bin)+" "+strings.Join(c.args, " "), func(t *testing.T) {
			out := run(t, c.bin, c.args...)
			if testing.Verbose() && os.Getenv("OPENAPI_SHOW_KUBECTL") != "" {
				t.Log(out)
			}
			expect(t, out, c.want...)
		})
	}
}

const podWithUnknownField = "<pod manifest>"

var allVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// TestKubectlApplyStrategicMerge checks that client-side kubectl apply finds
// the merge keys in the documents: the patch it sends for a changed container
// image merges the containers list by name.
func TestKubectlApplyStrategicMerge(t *testing.T) {
	bins := []string{kubectlBinary("1.33"), kubectlBinary("1.27")}
	if bins[0] == "" && bins[1] == "" {
		t.Skip("no versioned kubectl binary found next to kubectl on PATH")
	}
	h, err := New(Info{}, []Resource{
		{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, Verbs: allVerbs, Object: &corev1.Pod{}, List: &corev1.PodList{}},
		{Version: "v1", Resource: "namespaces", Kind: "Namespace", Verbs: allVerbs, Object: &corev1.Namespace{}, List: &corev1.NamespaceList{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	applied := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nginx","namespace":"default"},"spec":{"containers":[{"image":"nginx:1","name":"nginx"},{"image":"sidecar:1","name":"sidecar"}]}}`
	live := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default", ResourceVersion: "1",
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": applied}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}, {Name: "sidecar", Image: "sidecar:1"}}},
	}
	var mu sync.Mutex
	var patches []string
	srv := fakeAPIServer(t, h, func(mux *http.ServeMux) {
		mux.HandleFunc("/api/v1/namespaces/default/pods/nginx", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPatch {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				patches = append(patches, r.Header.Get("Content-Type")+" "+string(body))
				mu.Unlock()
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(live)
		})
	})
	kubeconfig := writeKubeconfig(t, srv.URL)
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	newPod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nginx\n  namespace: default\nspec:\n  containers:\n  - name: nginx\n    image: nginx:2\n  - name: sidecar\n    image: sidecar:1\n"
	if err := os.WriteFile(manifest, []byte(newPod), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bin := range bins {
		if bin == "" {
			continue
		}
		t.Run(filepath.Base(bin), func(t *testing.T) {
			mu.Lock()
			patches = nil
			mu.Unlock()
			home := t.TempDir()
			cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(home, "cache"), "apply", "-f", manifest)
			cmd.Env = append(os.Environ(), "HOME="+home)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("apply: %v\n%s", err, out)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(patches) != 1 {
				t.Fatalf("patches: %q", patches)
			}
			p := patches[0]
			for _, want := range []string{"application/strategic-merge-patch+json", `"$setElementOrder/containers":[{"name":"nginx"},{"name":"sidecar"}]`, `"containers":[{"image":"nginx:2","name":"nginx"}]}`} {
				if !strings.Contains(p, want) {
					t.Errorf("patch lacks %s:\n%s", want, p)
				}
			}
		})
	}
}
