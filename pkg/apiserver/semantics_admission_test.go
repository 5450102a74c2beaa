package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// NamespaceLifecycle: no content in missing or terminating namespaces; the
// system namespaces exist from the start and "default" cannot be deleted.
func TestSemanticsNamespaceLifecycle(t *testing.T) {
	// The namespace controller of the in-process controller manager
	// empties and releases deleted namespaces.
	fake := clock.NewFake(time.Now())
	c := start(t, withGC(testenv.Config{Clock: fake}))
	t.Run("system namespaces exist", func(t *testing.T) {
		c := c.on(t)
		for _, n := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			var ns corev1.Namespace
			c.call(http.MethodGet, "/api/v1/namespaces/"+n, nil, http.StatusOK, &ns)
			if ns.Status.Phase != corev1.NamespaceActive {
				t.Errorf("%s phase %q, want Active", n, ns.Status.Phase)
			}
		}
	})
	t.Run("create in a missing namespace", func(t *testing.T) {
		c := c.on(t)
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/nope/configmaps", configMap("x", nil, nil), "", "")
		st := expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `namespaces "nope" not found`)
		if st.Details == nil || st.Details.Name != "nope" || st.Details.Kind != "namespaces" {
			t.Errorf("details %+v, want name nope kind namespaces", st.Details)
		}
	})
	t.Run("missing namespace before validation", func(t *testing.T) {
		// NamespaceLifecycle is a mutating plugin, first of the chain: an
		// invalid object in a missing namespace gets the 404, as upstream.
		c := c.on(t)
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/nope/configmaps", configMap("Not_Valid", nil, nil), "", "")
		expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `namespaces "nope" not found`)
	})
	t.Run("create in a terminating namespace", func(t *testing.T) {
		c := c.on(t)
		// A finalizer of our own keeps the namespace Terminating.
		c.call(http.MethodPost, "/api/v1/namespaces", map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": "going", "finalizers": []string{"example.com/hold"}},
		}, http.StatusCreated, nil)
		var ns corev1.Namespace
		c.call(http.MethodDelete, "/api/v1/namespaces/going", nil, http.StatusOK, &ns)
		if ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating {
			t.Errorf("deleted namespace: deletionTimestamp %v phase %q, want set and Terminating", ns.DeletionTimestamp, ns.Status.Phase)
		}
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/going/configmaps", configMap("x", nil, nil), "", "")
		st := expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
			`configmaps "x" is forbidden: unable to create new content in namespace going because it is being terminated`)
		found := false
		if st.Details != nil {
			for _, cause := range st.Details.Causes {
				if cause.Type == corev1.NamespaceTerminatingCause {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("causes %+v, want a NamespaceTerminating cause", st.Details)
		}
	})
	t.Run("delete default", func(t *testing.T) {
		c := c.on(t)
		code, _, data := c.do(http.MethodDelete, "/api/v1/namespaces/default", nil, "", "")
		expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
			`namespaces "default" is forbidden: this namespace may not be deleted`)
		var ns corev1.Namespace
		c.call(http.MethodGet, "/api/v1/namespaces/default", nil, http.StatusOK, &ns)
		if ns.DeletionTimestamp != nil {
			t.Errorf("default namespace is being deleted")
		}
	})
	t.Run("an emptied namespace goes away", func(t *testing.T) {
		c := c.on(t)
		c.namespace("short-lived")
		c.call(http.MethodPost, "/api/v1/namespaces/short-lived/configmaps", configMap("x", nil, nil), http.StatusCreated, nil)
		c.call(http.MethodDelete, "/api/v1/namespaces/short-lived", nil, http.StatusOK, nil)
		eventually(t, "the namespace to be deleted", func() bool {
			fake.Step(5 * time.Second)
			code, _, _ := c.do(http.MethodGet, "/api/v1/namespaces/short-lived", nil, "", "")
			return code == http.StatusNotFound
		})
	})
}

// The default admission chain: ServiceAccount, DefaultTolerationSeconds,
// TaintNodesByCondition, Priority, LimitRanger.
func TestSemanticsAdmission(t *testing.T) {
	c := start(t)
	ns := c.namespace("admission")
	pods := "/api/v1/namespaces/" + ns + "/pods"

	t.Run("service account and API credentials", func(t *testing.T) {
		c := c.on(t)
		var p corev1.Pod
		c.call(http.MethodPost, pods, pod("sa", "nginx:1.27"), http.StatusCreated, &p)
		if p.Spec.ServiceAccountName != "default" {
			t.Errorf("serviceAccountName %q, want default", p.Spec.ServiceAccountName)
		}
		var vol *corev1.Volume
		for i := range p.Spec.Volumes {
			if strings.HasPrefix(p.Spec.Volumes[i].Name, "kube-api-access-") {
				vol = &p.Spec.Volumes[i]
			}
		}
		if vol == nil || vol.Projected == nil || len(vol.Name) != len("kube-api-access-")+5 {
			t.Fatalf("no kube-api-access-xxxxx projected volume: %+v", p.Spec.Volumes)
		}
		src := vol.Projected.Sources
		if len(src) != 3 || src[0].ServiceAccountToken == nil || src[0].ServiceAccountToken.Path != "token" ||
			src[0].ServiceAccountToken.ExpirationSeconds == nil || *src[0].ServiceAccountToken.ExpirationSeconds != 3607 ||
			src[1].ConfigMap == nil || src[1].ConfigMap.Name != "kube-root-ca.crt" ||
			src[2].DownwardAPI == nil || src[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
			t.Errorf("projected sources %+v", src)
		}
		mounted := false
		for _, m := range p.Spec.Containers[0].VolumeMounts {
			if m.Name == vol.Name && m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount" && m.ReadOnly {
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("volume not mounted read-only at the service account path: %+v", p.Spec.Containers[0].VolumeMounts)
		}
	})
	t.Run("missing service account", func(t *testing.T) {
		c := c.on(t)
		body := pod("nosa", "nginx:1.27")
		body["spec"].(map[string]any)["serviceAccountName"] = "ghost"
		code, _, data := c.do(http.MethodPost, pods, body, "", "")
		expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
			`pods "nosa" is forbidden: error looking up service account admission/ghost: serviceaccount "ghost" not found`)
	})
	t.Run("default toleration seconds", func(t *testing.T) {
		c := c.on(t)
		var p corev1.Pod
		c.call(http.MethodPost, pods, pod("tol", "nginx:1.27"), http.StatusCreated, &p)
		for _, key := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} {
			found := false
			for _, tol := range p.Spec.Tolerations {
				if tol.Key == key && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoExecute &&
					tol.TolerationSeconds != nil && *tol.TolerationSeconds == 300 {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s:NoExecute toleration for 300s: %+v", key, p.Spec.Tolerations)
			}
		}
	})
	t.Run("new node is tainted not-ready", func(t *testing.T) {
		c := c.on(t)
		var n corev1.Node
		c.call(http.MethodPost, "/api/v1/nodes", map[string]any{
			"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "node-1"},
		}, http.StatusCreated, &n)
		found := false
		for _, taint := range n.Spec.Taints {
			if taint.Key == "node.kubernetes.io/not-ready" && taint.Effect == corev1.TaintEffectNoSchedule {
				found = true
			}
		}
		if !found {
			t.Errorf("taints %+v, want node.kubernetes.io/not-ready:NoSchedule", n.Spec.Taints)
		}
	})
	priorityTests := []struct {
		name, class  string
		wantCode     int
		wantPriority int32
		wantMsg      string
	}{
		{"no class", "", http.StatusCreated, 0, ""},
		{"system-cluster-critical", "system-cluster-critical", http.StatusCreated, 2000000000, ""},
		{"system-node-critical", "system-node-critical", http.StatusCreated, 2000001000, ""},
		{"unknown class", "nope", http.StatusForbidden, 0, `pods "prio-unknown-class" is forbidden: no PriorityClass with name nope was found`},
	}
	for _, tt := range priorityTests {
		t.Run("priority "+tt.name, func(t *testing.T) {
			c := c.on(t)
			name := "prio-" + strings.ReplaceAll(tt.name, " ", "-")
			body := pod(name, "nginx:1.27")
			if tt.class != "" {
				body["spec"].(map[string]any)["priorityClassName"] = tt.class
			}
			code, _, data := c.do(http.MethodPost, pods, body, "", "")
			if tt.wantCode != http.StatusCreated {
				expectStatus(t, code, data, tt.wantCode, metav1.StatusReasonForbidden, tt.wantMsg)
				return
			}
			if code != tt.wantCode {
				t.Fatalf("status %d: %s", code, data)
			}
			var p corev1.Pod
			jsonUnmarshal(data, &p)
			if p.Spec.Priority == nil || *p.Spec.Priority != tt.wantPriority {
				t.Errorf("priority %v, want %d", p.Spec.Priority, tt.wantPriority)
			}
		})
	}
	t.Run("limit range defaults", func(t *testing.T) {
		c := c.on(t)
		lrns := c.namespace("limits")
		c.call(http.MethodPost, "/api/v1/namespaces/"+lrns+"/limitranges", map[string]any{
			"apiVersion": "v1", "kind": "LimitRange", "metadata": map[string]any{"name": "defaults"},
			"spec": map[string]any{"limits": []any{map[string]any{
				"type":           "Container",
				"default":        map[string]any{"cpu": "500m", "memory": "256Mi"},
				"defaultRequest": map[string]any{"cpu": "100m", "memory": "128Mi"},
			}}},
		}, http.StatusCreated, nil)
		body := pod("limited", "nginx:1.27")
		body["spec"].(map[string]any)["containers"] = []any{
			map[string]any{"name": "app", "image": "nginx:1.27"},
			map[string]any{"name": "own", "image": "nginx:1.27", "resources": map[string]any{"limits": map[string]any{"cpu": "1"}}},
		}
		var p corev1.Pod
		c.call(http.MethodPost, "/api/v1/namespaces/"+lrns+"/pods", body, http.StatusCreated, &p)
		app, own := p.Spec.Containers[0].Resources, p.Spec.Containers[1].Resources
		if app.Limits.Cpu().String() != "500m" || app.Limits.Memory().String() != "256Mi" ||
			app.Requests.Cpu().String() != "100m" || app.Requests.Memory().String() != "128Mi" {
			t.Errorf("container app resources %+v, want the LimitRange defaults", app)
		}
		if own.Limits.Cpu().String() != "1" {
			t.Errorf("container own kept limit cpu %s, want 1", own.Limits.Cpu())
		}
		if !strings.HasPrefix(p.Annotations["kubernetes.io/limit-ranger"], "LimitRanger plugin set: ") {
			t.Errorf("annotations %v, want kubernetes.io/limit-ranger", p.Annotations)
		}
		if p.Status.QOSClass != corev1.PodQOSBurstable {
			t.Errorf("qosClass %q after defaults, want Burstable", p.Status.QOSClass)
		}
	})
}
