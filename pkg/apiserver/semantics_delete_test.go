package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// An object with finalizers only gets deletionTimestamp on delete (watchers
// see MODIFIED); deleting again changes nothing; removing the last
// finalizer deletes it (watchers see DELETED).
func TestSemanticsDeleteWithFinalizers(t *testing.T) {
	c := start(t)
	ns := c.namespace("finalizers")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	body := configMap("x", nil, map[string]string{"k": "v"})
	body["metadata"].(map[string]any)["finalizers"] = []string{"example.com/a", "example.com/b"}
	var created corev1.ConfigMap
	c.call(http.MethodPost, base, body, http.StatusCreated, &created)
	w := c.watch(base + "?watch=true&fieldSelector=metadata.name%3Dx&resourceVersion=" + created.ResourceVersion)

	// First delete: 200 with the object, now marked.
	var marked corev1.ConfigMap
	c.call(http.MethodDelete, base+"/x", nil, http.StatusOK, &marked)
	if marked.DeletionTimestamp == nil {
		t.Fatalf("first delete did not set deletionTimestamp: %+v", marked.ObjectMeta)
	}
	if marked.DeletionGracePeriodSeconds == nil || *marked.DeletionGracePeriodSeconds != 0 {
		t.Errorf("deletionGracePeriodSeconds = %v, want 0", marked.DeletionGracePeriodSeconds)
	}
	if len(marked.Finalizers) != 2 {
		t.Errorf("finalizers = %v, want both kept", marked.Finalizers)
	}
	ev := w.expectEvent("MODIFIED", "x")
	if m := metaOf(t, ev.Object); m.DeletionTimestamp == nil || m.ResourceVersion != marked.ResourceVersion {
		t.Errorf("MODIFIED event %s, want the marked object at rv %s", ev.Object, marked.ResourceVersion)
	}

	// Second delete: success, nothing changes.
	var again corev1.ConfigMap
	c.call(http.MethodDelete, base+"/x", nil, http.StatusOK, &again)
	if again.ResourceVersion != marked.ResourceVersion || !again.DeletionTimestamp.Equal(marked.DeletionTimestamp) {
		t.Errorf("second delete changed the object: rv %s -> %s, ts %v -> %v",
			marked.ResourceVersion, again.ResourceVersion, marked.DeletionTimestamp, again.DeletionTimestamp)
	}

	// Removing one of two finalizers is a plain update: deletionTimestamp stays.
	again.Finalizers = []string{"example.com/b"}
	var one corev1.ConfigMap
	c.call(http.MethodPut, base+"/x", again, http.StatusOK, &one)
	if one.DeletionTimestamp == nil || len(one.Finalizers) != 1 {
		t.Errorf("after removing one finalizer: %+v", one.ObjectMeta)
	}
	w.expectEvent("MODIFIED", "x")

	// Removing the last finalizer deletes the object.
	one.Finalizers = nil
	// Upstream answers 200 (not 201) with the updated object (no finalizers).
	code, _, data := c.do(http.MethodPut, base+"/x", one, "", "")
	if code != http.StatusOK {
		t.Errorf("removing the last finalizer: status %d, want 200: %s", code, data)
	}
	if m := metaOf(t, data); m.Name != "x" || len(m.Finalizers) != 0 {
		t.Errorf("removing the last finalizer answered %s, want the updated object without finalizers", data)
	}
	ev = w.expectEvent("DELETED", "x")
	if rvInt(t, metaOf(t, ev.Object).ResourceVersion) <= rvInt(t, one.ResourceVersion) {
		t.Errorf("DELETED event rv %s not after %s", metaOf(t, ev.Object).ResourceVersion, one.ResourceVersion)
	}
	code, _, data = c.do(http.MethodGet, base+"/x", nil, "", "")
	expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `configmaps "x" not found`)
}

// Deleting an object without finalizers removes it at once and answers with
// a success Status (for most resources) naming it.
func TestSemanticsDeleteImmediate(t *testing.T) {
	c := start(t)
	ns := c.namespace("delete-now")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	var cm corev1.ConfigMap
	c.call(http.MethodPost, base, configMap("x", nil, nil), http.StatusCreated, &cm)
	var st metav1.Status
	c.call(http.MethodDelete, base+"/x", nil, http.StatusOK, &st)
	if st.Kind != "Status" || st.Status != metav1.StatusSuccess || st.Details == nil ||
		st.Details.Name != "x" || st.Details.Kind != "configmaps" || st.Details.UID != cm.UID {
		t.Errorf("delete answer %+v, want a Success Status with details name x kind configmaps uid %s", st, cm.UID)
	}
	code, _, data := c.do(http.MethodDelete, base+"/x", nil, "", "")
	expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `configmaps "x" not found`)

	// Preconditions: a wrong uid is a 409.
	c.call(http.MethodPost, base, configMap("y", nil, nil), http.StatusCreated, nil)
	code, _, data = c.do(http.MethodDelete, base+"/y", map[string]any{
		"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": map[string]any{"uid": "not-the-uid"},
	}, "", "")
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict, "")
	c.call(http.MethodGet, base+"/y", nil, http.StatusOK, nil)
}

// POST pods/x/binding sets spec.nodeName (once) and PodScheduled.
func TestSemanticsPodBinding(t *testing.T) {
	c := start(t)
	ns := c.namespace("binding")
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod("p", "nginx:1.27"), http.StatusCreated, nil)
	var st metav1.Status
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods/p/binding", map[string]any{
		"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": "p"},
		"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": "node-1"},
	}, http.StatusCreated, &st)
	if st.Status != metav1.StatusSuccess {
		t.Errorf("binding answer %+v, want Success", st)
	}
	var p corev1.Pod
	c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/p", nil, http.StatusOK, &p)
	if p.Spec.NodeName != "node-1" {
		t.Errorf("spec.nodeName = %q, want node-1", p.Spec.NodeName)
	}
	// Upstream's binding bypasses the pod strategy: the generation stays.
	if p.Generation != 1 {
		t.Errorf("metadata.generation = %d after binding, want 1 (unchanged)", p.Generation)
	}
	scheduled := false
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionTrue {
			scheduled = true
		}
	}
	if !scheduled {
		t.Errorf("no PodScheduled=True condition: %+v", p.Status.Conditions)
	}
	// A second binding conflicts.
	code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods/p/binding", map[string]any{
		"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": "p"},
		"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": "node-2"},
	}, "", "")
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
		`Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-1"`)
	// A pod with scheduling gates cannot be bound.
	gated := pod("gated", "nginx:1.27")
	gated["spec"].(map[string]any)["schedulingGates"] = []any{map[string]any{"name": "example.com/gate"}}
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", gated, http.StatusCreated, nil)
	code, _, data = c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods/gated/binding", map[string]any{
		"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": "gated"},
		"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": "node-1"},
	}, "", "")
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
		`Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates`)
}

// Pods on a node are deleted gracefully (deletionTimestamp +
// deletionGracePeriodSeconds, still present) until a delete with
// gracePeriodSeconds=0; unscheduled pods go at once.
func TestSemanticsPodGracefulDeletion(t *testing.T) {
	c := start(t)
	ns := c.namespace("graceful")
	base := "/api/v1/namespaces/" + ns + "/pods"
	onNode := pod("on-node", "nginx:1.27")
	// Created on a node directly so that this test does not depend on
	// pods/binding (TestSemanticsPodBinding covers that).
	onNode["spec"].(map[string]any)["nodeName"] = "node-1"
	c.call(http.MethodPost, base, onNode, http.StatusCreated, nil)
	c.call(http.MethodPost, base, pod("pending", "nginx:1.27"), http.StatusCreated, nil)
	onNode["metadata"].(map[string]any)["name"] = "on-node-2"
	c.call(http.MethodPost, base, onNode, http.StatusCreated, nil)

	t.Run("pod on a node", func(t *testing.T) {
		c := c.on(t)
		var p corev1.Pod
		c.call(http.MethodDelete, base+"/on-node", nil, http.StatusOK, &p)
		if p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
			t.Fatalf("graceful delete gave deletionTimestamp %v deletionGracePeriodSeconds %v, want set and 30",
				p.DeletionTimestamp, p.DeletionGracePeriodSeconds)
		}
		if d := p.DeletionTimestamp.Sub(p.CreationTimestamp.Time); d < 25e9 || d > 40e9 {
			t.Errorf("deletionTimestamp %v is not about 30s after now (created %v)", p.DeletionTimestamp, p.CreationTimestamp)
		}
		var still corev1.Pod
		c.call(http.MethodGet, base+"/on-node", nil, http.StatusOK, &still)
		if still.DeletionTimestamp == nil {
			t.Errorf("pod lost its deletionTimestamp")
		}
		// A second delete without a shorter grace period changes nothing.
		var again corev1.Pod
		c.call(http.MethodDelete, base+"/on-node", nil, http.StatusOK, &again)
		if again.ResourceVersion != still.ResourceVersion {
			t.Errorf("second delete changed the pod (rv %s -> %s)", still.ResourceVersion, again.ResourceVersion)
		}
		// The kubelet's final delete.
		c.call(http.MethodDelete, base+"/on-node?gracePeriodSeconds=0", nil, http.StatusOK, nil)
		code, _, data := c.do(http.MethodGet, base+"/on-node", nil, "", "")
		expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "on-node" not found`)
	})
	t.Run("pod on a node with gracePeriodSeconds=0", func(t *testing.T) {
		c := c.on(t)
		c.call(http.MethodDelete, base+"/on-node-2?gracePeriodSeconds=0", nil, http.StatusOK, nil)
		code, _, data := c.do(http.MethodGet, base+"/on-node-2", nil, "", "")
		expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "on-node-2" not found`)
	})
	t.Run("unscheduled pod", func(t *testing.T) {
		c := c.on(t)
		var p corev1.Pod
		c.call(http.MethodDelete, base+"/pending", nil, http.StatusOK, &p)
		if p.Name != "pending" {
			t.Errorf("pod delete should answer with the pod, got %+v", p)
		}
		code, _, data := c.do(http.MethodGet, base+"/pending", nil, "", "")
		expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "pending" not found`)
	})
}

// ownerRef makes an ownerReference to a ConfigMap.
func ownerRef(owner corev1.ConfigMap) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.Name, "uid": string(owner.UID)}
}

// propagationPolicy drives garbage collection through finalizers: Orphan
// adds "orphan" (dependents keep living without the ownerReference),
// Foreground adds "foregroundDeletion" (dependents go first), Background
// deletes the owner at once and the dependents after.
func TestSemanticsDeletePropagation(t *testing.T) {
	tests := []struct {
		policy        string
		wantFinalizer string // on the owner right after DELETE; "" = gone at once
		dependentLive bool
	}{
		{"Orphan", "orphan", true},
		{"Foreground", "foregroundDeletion", false},
		{"Background", "", false},
	}
	// The garbage collector of the in-process controller manager carries
	// out the policies (the fake clock's steps are harmless leftovers).
	fake := clock.NewFake(time.Now())
	c := start(t, withGC(testenv.Config{Clock: fake}))
	sweep := func() { fake.Step(5 * time.Second) }
	ns := c.namespace("propagation")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			c := c.on(t)
			var owner corev1.ConfigMap
			c.call(http.MethodPost, base, configMap("owner-"+strings.ToLower(tt.policy), nil, nil), http.StatusCreated, &owner)
			depName := "dep-" + strings.ToLower(tt.policy)
			dep := configMap(depName, nil, nil)
			dep["metadata"].(map[string]any)["ownerReferences"] = []any{ownerRef(owner)}
			c.call(http.MethodPost, base, dep, http.StatusCreated, nil)

			code, _, data := c.do(http.MethodDelete, base+"/"+owner.Name+"?propagationPolicy="+tt.policy, nil, "", "")
			if code != http.StatusOK {
				t.Fatalf("delete: %d %s", code, data)
			}
			if tt.wantFinalizer != "" {
				m := metaOf(t, data)
				if m.DeletionTimestamp == nil || !contains(m.Finalizers, tt.wantFinalizer) {
					t.Errorf("owner after DELETE: deletionTimestamp %v finalizers %v, want set and %q",
						m.DeletionTimestamp, m.Finalizers, tt.wantFinalizer)
				}
			} else if st := decodeStatus(t, data); st.Status != metav1.StatusSuccess {
				t.Errorf("background delete answer %s", data)
			}
			eventually(t, "the owner to disappear", func() bool {
				sweep()
				code, _, _ := c.do(http.MethodGet, base+"/"+owner.Name, nil, "", "")
				return code == http.StatusNotFound
			})
			if tt.dependentLive {
				var d corev1.ConfigMap
				eventually(t, "the dependent's ownerReference to be removed", func() bool {
					sweep()
					c.call(http.MethodGet, base+"/"+depName, nil, http.StatusOK, &d)
					return len(d.OwnerReferences) == 0
				})
				if d.DeletionTimestamp != nil {
					t.Errorf("orphaned dependent is being deleted")
				}
			} else {
				eventually(t, "the dependent to be deleted", func() bool {
					sweep()
					code, _, _ := c.do(http.MethodGet, base+"/"+depName, nil, "", "")
					return code == http.StatusNotFound
				})
			}
		})
	}
	t.Run("invalid policy", func(t *testing.T) {
		c := c.on(t)
		c.call(http.MethodPost, base, configMap("z", nil, nil), http.StatusCreated, nil)
		code, _, data := c.do(http.MethodDelete, base+"/z?propagationPolicy=Sometimes", nil, "", "")
		if code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
			t.Errorf("invalid propagationPolicy: %d %s, want 400 or 422", code, data)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSemanticsGarbageCollectionConfirmsOwners: the garbage collector
// deletes a dependent only when every owner is confirmed absent (not found,
// or found with another uid); an owner of a kind skiff does not serve, or a
// namespaced owner of a cluster-scoped dependent, cannot be resolved and
// keeps its dependent, as upstream's collector does.
func TestSemanticsGarbageCollectionConfirmsOwners(t *testing.T) {
	fake := clock.NewFake(time.Now())
	c := start(t, withGC(testenv.Config{Clock: fake}))
	sweep := func() { fake.Step(5 * time.Second) }
	ns := c.namespace("gc-owners")
	base := "/api/v1/namespaces/" + ns + "/configmaps"

	var alive corev1.ConfigMap
	c.call(http.MethodPost, base, configMap("alive", nil, nil), http.StatusCreated, &alive)
	missing := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "never-was", "uid": "00000000-0000-0000-0000-000000000001"}
	otherUID := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "alive", "uid": "00000000-0000-0000-0000-000000000002"}
	unserved := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "00000000-0000-0000-0000-000000000003"}

	tests := []struct {
		name     string
		owners   []any
		wantLive bool
	}{
		{"owner exists", []any{ownerRef(alive)}, true},
		{"one of two owners exists", []any{missing, ownerRef(alive)}, true},
		{"owner of a kind not served", []any{unserved}, true},
		{"owner not found", []any{missing}, false},
		{"owner name taken by another uid", []any{otherUID}, false},
	}
	for _, tt := range tests {
		dep := configMap("dep-"+strings.ReplaceAll(tt.name, " ", "-"), nil, nil)
		dep["metadata"].(map[string]any)["ownerReferences"] = tt.owners
		c.call(http.MethodPost, base, dep, http.StatusCreated, nil)
	}
	// A cluster-scoped dependent with a namespaced owner: unresolvable.
	c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterroles", map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": "gc-dep", "ownerReferences": []any{missing}},
	}, http.StatusCreated, nil)

	// Two sentinels, each created once the one before is collected: when
	// the second is gone, a whole pass has run over everything above.
	for i := range 2 {
		name := fmt.Sprintf("sentinel-%d", i)
		s := configMap(name, nil, nil)
		s["metadata"].(map[string]any)["ownerReferences"] = []any{missing}
		c.call(http.MethodPost, base, s, http.StatusCreated, nil)
		eventually(t, name+" to be collected", func() bool {
			sweep()
			code, _, _ := c.do(http.MethodGet, base+"/"+name, nil, "", "")
			return code == http.StatusNotFound
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, data := c.on(t).do(http.MethodGet, base+"/dep-"+strings.ReplaceAll(tt.name, " ", "-"), nil, "", "")
			if live := code == http.StatusOK; live != tt.wantLive {
				t.Errorf("dependent live = %v (%d %s), want %v", live, code, data, tt.wantLive)
			}
		})
	}
	if code, _, data := c.do(http.MethodGet, "/apis/rbac.authorization.k8s.io/v1/clusterroles/gc-dep", nil, "", ""); code != http.StatusOK {
		t.Errorf("cluster-scoped dependent of a namespaced owner was collected: %d %s", code, data)
	}
}
