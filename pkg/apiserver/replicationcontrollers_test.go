package apiserver_test

import (
	"net/http"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func replicationController(name string, replicas int) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ReplicationController",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"replicas": replicas, "template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}},
		}},
	}
}

// ReplicationControllers: defaulting from the template, 422 with upstream's
// messages, the status and scale subresources and the status.replicas
// field selector.
func TestReplicationControllers(t *testing.T) {
	c := start(t)
	ns := c.namespace("rc")
	base := "/api/v1/namespaces/" + ns + "/replicationcontrollers"
	var rc corev1.ReplicationController
	c.call(http.MethodPost, base, replicationController("web", 2), http.StatusCreated, &rc)
	if rc.Spec.Selector["app"] != "web" || rc.Labels["app"] != "web" || rc.Generation != 1 {
		t.Errorf("created: selector %v labels %v generation %d", rc.Spec.Selector, rc.Labels, rc.Generation)
	}

	bad := replicationController("bad", 1)
	bad["spec"].(map[string]any)["selector"] = map[string]any{"app": "other"}
	code, _, data := c.do(http.MethodPost, base, bad, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`ReplicationController "bad" is invalid: spec.template.metadata.labels: Invalid value: {"app":"bad"}: `+"`selector` does not match template `labels`")

	// status through /status only
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1, FullyLabeledReplicas: 2, ObservedGeneration: 1}
	c.call(http.MethodPut, base+"/web/status", rc, http.StatusOK, &rc)
	if rc.Status.Replicas != 2 {
		t.Errorf("status after /status update: %+v", rc.Status)
	}
	rc.Status.ReadyReplicas = 5
	code, _, data = c.do(http.MethodPut, base+"/web/status", rc, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`ReplicationController "web" is invalid: status.readyReplicas: Invalid value: 5: cannot be greater than status.replicas`)

	// scale
	var sc autoscalingv1.Scale
	c.call(http.MethodGet, base+"/web/scale", nil, http.StatusOK, &sc)
	if sc.Spec.Replicas != 2 || sc.Status.Replicas != 2 || sc.Status.Selector != "app=web" {
		t.Errorf("scale: %+v", sc)
	}
	sc.Spec.Replicas = 5
	c.call(http.MethodPut, base+"/web/scale", sc, http.StatusOK, nil)
	c.call(http.MethodGet, base+"/web", nil, http.StatusOK, &rc)
	if *rc.Spec.Replicas != 5 || rc.Generation != 2 {
		t.Errorf("after scaling: replicas %d generation %d", *rc.Spec.Replicas, rc.Generation)
	}

	// field selector
	c.call(http.MethodPost, base, replicationController("idle", 0), http.StatusCreated, nil)
	for sel, want := range map[string]string{"status.replicas=2": "web", "status.replicas=0": "idle"} {
		var list corev1.ReplicationControllerList
		c.call(http.MethodGet, base+"?fieldSelector="+sel, nil, http.StatusOK, &list)
		if len(list.Items) != 1 || list.Items[0].Name != want {
			t.Errorf("fieldSelector %s: %d items, want %s", sel, len(list.Items), want)
		}
	}
}

// Deleting a ReplicationController without a propagation policy orphans its
// pods (upstream's default for core/v1); kubectl, which sends Background,
// deletes them.
func TestReplicationControllerDeletePropagation(t *testing.T) {
	fake := clock.NewFake(time.Now())
	c := start(t, withGC(testenv.Config{Clock: fake}))
	sweep := func() { fake.Step(5 * time.Second) }
	ns := c.namespace("rc-gc")
	base := "/api/v1/namespaces/" + ns
	tests := []struct {
		name, query string
		podLives    bool
	}{
		{"no policy", "", true},
		{"orphanDependents=false", "?orphanDependents=false", false},
		{"Background", "?propagationPolicy=Background", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			name := []string{"a", "b", "c"}[i]
			var rc corev1.ReplicationController
			c.call(http.MethodPost, base+"/replicationcontrollers", replicationController("rc-"+name, 1), http.StatusCreated, &rc)
			p := pod("pod-"+name, "nginx:1.27")
			p["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ReplicationController",
				"name": rc.Name, "uid": string(rc.UID), "controller": true, "blockOwnerDeletion": true}}
			c.call(http.MethodPost, base+"/pods", p, http.StatusCreated, nil)

			code, _, data := c.do(http.MethodDelete, base+"/replicationcontrollers/"+rc.Name+tt.query, nil, "", "")
			if code != http.StatusOK {
				t.Fatalf("delete: %d %s", code, data)
			}
			if tt.podLives {
				if m := metaOf(t, data); m.DeletionTimestamp == nil || !contains(m.Finalizers, "orphan") {
					t.Errorf("after DELETE without a policy: deletionTimestamp %v finalizers %v, want the orphan finalizer", m.DeletionTimestamp, m.Finalizers)
				}
			}
			eventually(t, "the controller to go", func() bool {
				sweep()
				code, _, _ := c.do(http.MethodGet, base+"/replicationcontrollers/"+rc.Name, nil, "", "")
				return code == http.StatusNotFound
			})
			if tt.podLives {
				var got corev1.Pod
				eventually(t, "the pod's ownerReference to be removed", func() bool {
					sweep()
					got = corev1.Pod{} // decoding leaves fields absent from the answer as they were
					c.call(http.MethodGet, base+"/pods/pod-"+name, nil, http.StatusOK, &got)
					return len(got.OwnerReferences) == 0
				})
				if got.DeletionTimestamp != nil {
					t.Errorf("the orphaned pod is being deleted")
				}
				return
			}
			eventually(t, "the pod to be deleted", func() bool {
				sweep()
				code, _, _ := c.do(http.MethodGet, base+"/pods/pod-"+name, nil, "", "")
				return code == http.StatusNotFound
			})
		})
	}
}
