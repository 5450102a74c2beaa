package replicaset

import (
	"errors"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func pod(name, node string, phase corev1.PodPhase, ready bool, readySince time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}}
	p.Spec.NodeName = node
	p.Status.Phase = phase
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(readySince)}}
	return p
}

func TestDeletePreference(t *testing.T) {
	now := t0
	older := now.Add(-10 * time.Hour)
	cases := []struct {
		name        string
		first, then *corev1.Pod // first must be deleted before then
	}{
		{"unassigned before assigned", pod("a", "", corev1.PodRunning, true, older), pod("b", "n1", corev1.PodPending, false, older)},
		{"pending before unknown", pod("a", "n1", corev1.PodPending, false, older), pod("b", "n1", corev1.PodUnknown, false, older)},
		{"unknown before running", pod("a", "n1", corev1.PodUnknown, false, older), pod("b", "n1", corev1.PodRunning, false, older)},
		{"not ready before ready", pod("a", "n1", corev1.PodRunning, false, older), pod("b", "n1", corev1.PodRunning, true, older)},
		{"recently ready before long ready", pod("a", "n1", corev1.PodRunning, true, now.Add(-time.Minute)), pod("b", "n1", corev1.PodRunning, true, older)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := ActivePodsWithRanks{Pods: []*corev1.Pod{tc.then, tc.first}, Rank: []int{1, 1}, Now: metav1.NewTime(now)}
			sort.Sort(s)
			if s.Pods[0] != tc.first {
				t.Fatalf("order %s,%s; want %s first", s.Pods[0].Name, s.Pods[1].Name, tc.first.Name)
			}
		})
	}
	t.Run("deletion cost", func(t *testing.T) {
		a, b := pod("a", "n1", corev1.PodRunning, true, older), pod("b", "n1", corev1.PodRunning, true, older)
		a.Annotations = map[string]string{PodDeletionCostAnnotation: "10"}
		b.Annotations = map[string]string{PodDeletionCostAnnotation: "-5"}
		got := PodsToDelete([]*corev1.Pod{a, b}, nil, 1, now)
		if got[0].Name != "b" {
			t.Fatalf("deleted %s, want the lower cost b", got[0].Name)
		}
	})
	t.Run("doubled up first", func(t *testing.T) {
		a, b, c := pod("a", "n1", corev1.PodRunning, true, older), pod("b", "n2", corev1.PodRunning, true, older), pod("c", "n2", corev1.PodRunning, true, older)
		got := PodsToDelete([]*corev1.Pod{a, b}, []*corev1.Pod{a, b, c}, 1, now)
		if got[0].Name != "b" {
			t.Fatalf("deleted %s, want b (shares n2)", got[0].Name)
		}
	})
	t.Run("more restarts first", func(t *testing.T) {
		a, b := pod("a", "n1", corev1.PodRunning, false, older), pod("b", "n1", corev1.PodRunning, false, older)
		b.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 3}}
		if got := PodsToDelete([]*corev1.Pod{a, b}, nil, 1, now); got[0].Name != "b" {
			t.Fatalf("deleted %s", got[0].Name)
		}
	})
	t.Run("newer first", func(t *testing.T) {
		a, b := pod("a", "n1", corev1.PodRunning, false, older), pod("b", "n1", corev1.PodRunning, false, older)
		a.CreationTimestamp = metav1.NewTime(now.Add(-100 * time.Hour))
		b.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
		if got := PodsToDelete([]*corev1.Pod{a, b}, nil, 1, now); got[0].Name != "b" {
			t.Fatalf("deleted %s", got[0].Name)
		}
	})
}

func TestSlowStartBatch(t *testing.T) {
	cases := []struct {
		count, failAt int // failAt: 1-based call number that fails (0 = none)
		wantOK        int
		wantCalls     int32
	}{
		{count: 10, wantOK: 10, wantCalls: 10},
		{count: 10, failAt: 1, wantOK: 0, wantCalls: 1},
		// batches 1,2,4: the 4th call is in batch 3 (calls 4..7) which all run.
		{count: 10, failAt: 4, wantOK: 6, wantCalls: 7},
		{count: 0, wantOK: 0, wantCalls: 0},
	}
	for _, tc := range cases {
		var calls atomic.Int32
		ok, err := SlowStartBatch(tc.count, 1, func() error {
			if n := calls.Add(1); tc.failAt > 0 && int(n) == tc.failAt {
				return errors.New("boom")
			}
			return nil
		})
		if ok != tc.wantOK || calls.Load() != tc.wantCalls || (err != nil) != (tc.failAt > 0) {
			t.Errorf("count %d failAt %d: ok %d calls %d err %v; want ok %d calls %d", tc.count, tc.failAt, ok, calls.Load(), err, tc.wantOK, tc.wantCalls)
		}
	}
}

func TestCalculateStatus(t *testing.T) {
	now := t0
	rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), MinReadySeconds: 10,
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "fe"}}}}}
	ready5s := pod("a", "", corev1.PodRunning, true, now.Add(-5*time.Second))
	ready5s.Labels = map[string]string{"app": "web", "tier": "fe"}
	ready1m := pod("b", "", corev1.PodRunning, true, now.Add(-time.Minute))
	ready1m.Labels = map[string]string{"app": "web"}
	notReady := pod("c", "", corev1.PodPending, false, now)
	notReady.Labels = map[string]string{"app": "web", "tier": "fe"}
	st := CalculateStatus(rs, []*corev1.Pod{ready5s, ready1m, notReady}, nil, now)
	if st.Replicas != 3 || st.FullyLabeledReplicas != 2 || st.ReadyReplicas != 2 || st.AvailableReplicas != 1 {
		t.Fatalf("status %+v", st)
	}
	// minReadySeconds later the pod ready for 5s is available too.
	if st := CalculateStatus(rs, []*corev1.Pod{ready5s, ready1m, notReady}, nil, now.Add(6*time.Second)); st.AvailableReplicas != 2 {
		t.Fatalf("available %d after 11s, want 2", st.AvailableReplicas)
	}

	quota := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web-abcde", errors.New("exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"))
	st = CalculateStatus(rs, []*corev1.Pod{ready1m}, quota, now)
	c := getCondition(st, appsv1.ReplicaSetReplicaFailure)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "FailedCreate" || c.Message != quota.Error() {
		t.Fatalf("condition %+v", c)
	}
	rs.Status = st
	rs.Spec.Replicas = ptr.To[int32](0)
	if c := getCondition(CalculateStatus(rs, []*corev1.Pod{ready1m}, errors.New("x"), now), appsv1.ReplicaSetReplicaFailure); c.Reason != "FailedCreate" {
		t.Fatalf("an existing failure condition is kept as is, got %+v", c)
	}
	if c := getCondition(CalculateStatus(rs, []*corev1.Pod{ready1m}, nil, now), appsv1.ReplicaSetReplicaFailure); c != nil {
		t.Fatalf("a successful manage removes ReplicaFailure, got %+v", c)
	}
	rs.Status = appsv1.ReplicaSetStatus{}
	if c := getCondition(CalculateStatus(rs, []*corev1.Pod{ready1m}, errors.New("x"), now), appsv1.ReplicaSetReplicaFailure); c.Reason != "FailedDelete" {
		t.Fatalf("too many pods: FailedDelete, got %+v", c)
	}
}

func TestRCConversionRoundTrip(t *testing.T) {
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", UID: "u", Generation: 3},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](2), Selector: map[string]string{"a": "b"},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}}},
		Status: corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1,
			Conditions: []corev1.ReplicationControllerCondition{{Type: corev1.ReplicationControllerReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate"}}}}
	back := RSToRC(RCToRS(rc))
	back.TypeMeta = rc.TypeMeta
	if back.Spec.Selector["a"] != "b" || *back.Spec.Replicas != 2 || back.Status.ReadyReplicas != 1 || back.Status.Conditions[0].Reason != "FailedCreate" || back.Generation != 3 {
		t.Fatalf("round trip %+v", back)
	}
}

func TestTerminatingPods(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "rs-uid"}}
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	ref := []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: ptr.To(true)}}
	other := []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "x", UID: "x-uid", Controller: ptr.To(true)}}
	deleting := metav1.NewTime(t0)
	mk := func(refs []metav1.OwnerReference, del *metav1.Time, phase corev1.PodPhase, app string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: refs, DeletionTimestamp: del, Labels: map[string]string{"app": app}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	pods := []*corev1.Pod{
		mk(ref, &deleting, corev1.PodRunning, "web"),   // counts
		mk(ref, &deleting, corev1.PodPending, "web"),   // counts
		mk(ref, &deleting, corev1.PodSucceeded, "web"), // terminated
		mk(ref, nil, corev1.PodRunning, "web"),         // not deleting
		mk(other, &deleting, corev1.PodRunning, "web"), // another owner
		mk(ref, &deleting, corev1.PodRunning, "other"), // not selected
	}
	if n := TerminatingPods(rs, sel, pods); n != 2 {
		t.Fatalf("terminating %d, want 2", n)
	}
}
