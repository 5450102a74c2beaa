package controllerref_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

func owner(uid types.UID, deleting bool) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: uid}}
	if deleting {
		now := metav1.Now()
		rs.DeletionTimestamp = &now
	}
	return rs
}

func pod(name string, lbls map[string]string, ctrl *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("pod-" + name), Labels: lbls}}
	if ctrl != nil {
		p.OwnerReferences = []metav1.OwnerReference{*ctrl}
	}
	return p
}

type patchRec struct {
	name  string
	patch map[string]any
}

func TestClaim(t *testing.T) {
	mine := owner("rs-uid", false)
	other := owner("other-uid", false)
	app := map[string]string{"app": "web"}
	tests := []struct {
		name      string
		owner     *appsv1.ReplicaSet
		pod       *corev1.Pod
		canAdopt  error
		patchErr  error
		want      bool
		wantErr   bool
		wantPatch string // "", "adopt", "release"
	}{
		{name: "owned and matching", owner: mine, pod: pod("a", app, controllerref.NewControllerRef(mine, rsKind)), want: true},
		{name: "owned, no longer matching: released", owner: mine, pod: pod("a", nil, controllerref.NewControllerRef(mine, rsKind)), wantPatch: "release"},
		{name: "owned, not matching, owner deleting: left alone", owner: owner("rs-uid", true), pod: pod("a", nil, controllerref.NewControllerRef(mine, rsKind))},
		{name: "release of a gone pod succeeds", owner: mine, pod: pod("a", nil, controllerref.NewControllerRef(mine, rsKind)),
			patchErr: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "a"), wantPatch: "release"},
		{name: "release refused as invalid (recreated) succeeds", owner: mine, pod: pod("a", nil, controllerref.NewControllerRef(mine, rsKind)),
			patchErr: apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "a", nil), wantPatch: "release"},
		{name: "someone else's", owner: mine, pod: pod("a", app, controllerref.NewControllerRef(other, rsKind))},
		{name: "matching orphan adopted", owner: mine, pod: pod("a", app, nil), want: true, wantPatch: "adopt"},
		{name: "orphan not matching", owner: mine, pod: pod("a", map[string]string{"app": "db"}, nil)},
		{name: "orphan, owner deleting", owner: owner("rs-uid", true), pod: pod("a", app, nil)},
		{name: "orphan being deleted", owner: mine, pod: func() *corev1.Pod {
			p := pod("a", app, nil)
			now := metav1.Now()
			p.DeletionTimestamp = &now
			return p
		}()},
		{name: "orphan in another namespace", owner: mine, pod: func() *corev1.Pod {
			p := pod("a", app, nil)
			p.Namespace = "elsewhere"
			return p
		}()},
		{name: "CanAdopt refuses", owner: mine, pod: pod("a", app, nil), canAdopt: errors.New("gone"), wantErr: true},
		{name: "adopting a pod gone meanwhile", owner: mine, pod: pod("a", app, nil),
			patchErr: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "a"), wantPatch: "adopt"},
		{name: "adoption conflict is an error", owner: mine, pod: pod("a", app, nil),
			patchErr: apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "a", errors.New("x")), wantPatch: "adopt", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var patches []patchRec
			m := &controllerref.Manager{
				Controller: tt.owner, Kind: rsKind, Selector: labels.SelectorFromSet(app),
				CanAdopt: func(context.Context) error { return tt.canAdopt },
				Patch: func(_ context.Context, ns, name string, data []byte) error {
					var p map[string]any
					if err := json.Unmarshal(data, &p); err != nil {
						t.Fatal(err)
					}
					patches = append(patches, patchRec{name, p})
					return tt.patchErr
				},
			}
			got, err := m.Claim(context.Background(), tt.pod)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("claimed = %v, want %v", got, tt.want)
			}
			kind := ""
			if len(patches) > 1 {
				t.Fatalf("%d patches", len(patches))
			}
			if len(patches) == 1 {
				md := patches[0].patch["metadata"].(map[string]any)
				if md["uid"] != string(tt.pod.UID) {
					t.Errorf("patch uid precondition %v, want %s", md["uid"], tt.pod.UID)
				}
				ref := md["ownerReferences"].([]any)[0].(map[string]any)
				switch {
				case ref["$patch"] == "delete" && ref["uid"] == string(tt.owner.UID):
					kind = "release"
				case ref["uid"] == string(tt.owner.UID) && ref["controller"] == true && ref["blockOwnerDeletion"] == true &&
					ref["kind"] == "ReplicaSet" && ref["apiVersion"] == "apps/v1" && ref["name"] == "rs":
					kind = "adopt"
				default:
					t.Errorf("unexpected patch %v", patches[0].patch)
				}
			}
			if kind != tt.wantPatch {
				t.Errorf("patch %q, want %q", kind, tt.wantPatch)
			}
		})
	}
}

func TestCanAdoptCheckedOnce(t *testing.T) {
	mine := owner("rs-uid", false)
	calls := 0
	m := &controllerref.Manager{
		Controller: mine, Kind: rsKind, Selector: labels.Everything(),
		CanAdopt: func(context.Context) error { calls++; return nil },
		Patch:    func(context.Context, string, string, []byte) error { return nil },
	}
	pods := []*corev1.Pod{pod("a", nil, nil), pod("b", nil, nil), pod("c", nil, controllerref.NewControllerRef(owner("x", false), rsKind)), pod("d", nil, nil)}
	claimed, err := controllerref.Claim(context.Background(), m, pods, func(p *corev1.Pod) bool { return p.Name != "d" })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range claimed {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("claimed %v, want [a b]", names)
	}
	if calls != 1 {
		t.Errorf("CanAdopt called %d times, want 1", calls)
	}
}

func TestGetControllerOf(t *testing.T) {
	yes, no := true, false
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{UID: "a", Controller: &no}, {UID: "b"}, {UID: "c", Controller: &yes},
	}}}
	ref := controllerref.GetControllerOf(p)
	if ref == nil || ref.UID != "c" {
		t.Fatalf("GetControllerOf = %v", ref)
	}
	*ref.Controller = false
	if !*p.OwnerReferences[2].Controller {
		t.Error("GetControllerOf did not copy")
	}
	if !controllerref.IsControlledBy(p, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "c"}}) ||
		controllerref.IsControlledBy(p, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a"}}) {
		t.Error("IsControlledBy")
	}
	if controllerref.GetControllerOf(&corev1.Pod{}) != nil {
		t.Error("controller of an unowned pod")
	}
}

// TestPatchesAgainstServer applies the adoption and release patches
// through a real API server: adoption sets the reference, release removes
// only ours, and a patch for a recreated object (another UID) changes
// nothing.
func TestPatchesAgainstServer(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	ownerCM, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kind := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other-uid"}
	child, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Labels: map[string]string{"app": "x"},
		OwnerReferences: []metav1.OwnerReference{other}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := &controllerref.Manager{Controller: ownerCM, Kind: kind, Selector: labels.SelectorFromSet(map[string]string{"app": "x"}),
		CanAdopt: controllerref.RecheckDeletionTimestamp(ownerCM, func(ctx context.Context) (metav1.Object, error) {
			return cms.Get(ctx, "owner", metav1.GetOptions{})
		}),
		Patch: controllerref.PatcherFor(client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c))}
	if ok, err := m.Claim(ctx, child); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	got, err := cms.Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !controllerref.IsControlledBy(got, ownerCM) || len(got.OwnerReferences) != 2 {
		t.Fatalf("after adoption: %+v", got.OwnerReferences)
	}
	// The selector no longer matches: released, the other reference kept.
	got.Labels = nil
	if got, err = cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.Claim(ctx, got); err != nil || ok {
		t.Fatalf("Claim after relabel = %v, %v", ok, err)
	}
	got, err = cms.Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != "other-uid" {
		t.Fatalf("after release: %+v", got.OwnerReferences)
	}
	// A patch carrying a stale UID does not apply to a recreated object.
	if err := cms.Delete(ctx, "child", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Labels: map[string]string{"app": "x"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := child.DeepCopy()
	stale.OwnerReferences = nil
	err = m.Adopt(ctx, stale)
	if err == nil {
		t.Fatal("adoption with a stale UID succeeded")
	}
	got, _ = cms.Get(ctx, "child", metav1.GetOptions{})
	if len(got.OwnerReferences) != 0 {
		t.Fatalf("recreated object changed: %+v", got.OwnerReferences)
	}
	// CanAdopt refuses an owner that is being deleted or gone.
	if err := cms.Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	m2 := &controllerref.Manager{Controller: ownerCM, Kind: kind, Selector: labels.Everything(), Patch: m.Patch,
		CanAdopt: controllerref.RecheckDeletionTimestamp(ownerCM, func(ctx context.Context) (metav1.Object, error) {
			return cms.Get(ctx, "owner", metav1.GetOptions{})
		})}
	if ok, err := m2.Claim(ctx, got); err == nil || ok {
		t.Fatalf("adoption by a deleted owner: %v, %v", ok, err)
	}
}
