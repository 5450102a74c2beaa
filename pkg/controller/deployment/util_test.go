package deployment

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func rolling(replicas int32, surge, unavail intstr.IntOrString) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), ProgressDeadlineSeconds: ptr.To[int32](600),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavail}}}}
}

func TestResolveFenceposts(t *testing.T) {
	cases := []struct {
		surge, unavail intstr.IntOrString
		desired        int32
		wantS, wantU   int32
	}{
		{intstr.FromString("25%"), intstr.FromString("25%"), 10, 3, 2}, // 2.5 up, 2.5 down
		{intstr.FromString("25%"), intstr.FromString("25%"), 1, 1, 0},
		{intstr.FromInt32(0), intstr.FromInt32(0), 5, 0, 1}, // both zero: unavailable 1
		{intstr.FromString("0%"), intstr.FromString("10%"), 5, 0, 1},
		{intstr.FromString("0%"), intstr.FromString("10%"), 9, 0, 1},
		{intstr.FromInt32(2), intstr.FromString("50%"), 3, 2, 1},
	}
	for _, tc := range cases {
		s, u, err := ResolveFenceposts(&tc.surge, &tc.unavail, tc.desired)
		if err != nil || s != tc.wantS || u != tc.wantU {
			t.Errorf("%v/%v of %d: %d,%d (%v), want %d,%d", tc.surge.String(), tc.unavail.String(), tc.desired, s, u, err, tc.wantS, tc.wantU)
		}
	}
	if got := MaxUnavailable(rolling(2, intstr.FromInt32(0), intstr.FromInt32(5))); got != 2 {
		t.Errorf("maxUnavailable is capped at replicas: %d", got)
	}
}

func rs(name string, replicas, available int32, created time.Time, ann map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created), Annotations: ann},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas)}, Status: appsv1.ReplicaSetStatus{Replicas: replicas, AvailableReplicas: available}}
}

func TestNewRSNewReplicas(t *testing.T) {
	d := rolling(10, intstr.FromInt32(3), intstr.FromInt32(2))
	old := rs("old", 10, 10, t0, nil)
	nw := rs("new", 0, 0, t0.Add(time.Minute), nil)
	if n := NewRSNewReplicas(d, []*appsv1.ReplicaSet{old, nw}, nw); n != 3 {
		t.Fatalf("new RS may grow to %d, want 3 (maxSurge)", n)
	}
	d0 := rolling(3, intstr.FromInt32(0), intstr.FromInt32(1))
	if n := NewRSNewReplicas(d0, []*appsv1.ReplicaSet{rs("old", 3, 3, t0, nil), nw}, nw); n != 0 {
		t.Fatalf("maxSurge 0: new RS grows only after old ones shrink, got %d", n)
	}
	rec := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](4), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}
	if n := NewRSNewReplicas(rec, nil, nw); n != 4 {
		t.Fatalf("recreate: %d", n)
	}
}

func TestProportionalScale(t *testing.T) {
	// A rollout of 10 replicas (maxSurge 3) stuck at old 8 / new 5, scaled to 15:
	// 5 more replicas are allowed (15+3-13), spread 8:5 -> +3 / +2.
	d := rolling(15, intstr.FromInt32(3), intstr.FromInt32(2))
	ann := map[string]string{MaxReplicasAnnotation: "13", DesiredReplicasAnnotation: "10"}
	old := rs("old", 8, 8, t0, ann)
	nw := rs("new", 5, 0, t0.Add(time.Minute), ann)
	got := map[string]int32{}
	for _, s := range ProportionalScale(d, []*appsv1.ReplicaSet{nw, old}) {
		got[s.RS.Name] = s.Size
		if s.Operation != "up" {
			t.Errorf("operation %q", s.Operation)
		}
	}
	if got["old"] != 11 || got["new"] != 7 {
		t.Fatalf("sizes %v, want old 11 new 7", got)
	}
	// Scaling down to 5: allowed 8, from 13: -5 spread, older first on ties.
	d = rolling(5, intstr.FromInt32(3), intstr.FromInt32(2))
	got = map[string]int32{}
	for _, s := range ProportionalScale(d, []*appsv1.ReplicaSet{nw, old}) {
		got[s.RS.Name] = s.Size
	}
	if got["old"]+got["new"] != 8 || got["old"] != 5 || got["new"] != 3 {
		t.Fatalf("sizes %v, want old 5 new 3", got)
	}
}

func TestHistoryToDelete(t *testing.T) {
	mk := func(name, rev string, replicas int32) *appsv1.ReplicaSet {
		return rs(name, replicas, 0, t0, map[string]string{RevisionAnnotation: rev})
	}
	olds := []*appsv1.ReplicaSet{mk("r3", "3", 0), mk("r1", "1", 0), mk("r2", "2", 1), mk("r4", "4", 0)}
	got := HistoryToDelete(olds, 1)
	if len(got) != 2 || got[0].Name != "r1" || got[1].Name != "r3" {
		names := []string{}
		for _, r := range got {
			names = append(names, r.Name)
		}
		t.Fatalf("deleted %v, want r1, r3 (r2 still has replicas)", names)
	}
	if got := HistoryToDelete(olds, 4); len(got) != 0 {
		t.Fatalf("within the limit nothing is deleted: %d", len(got))
	}
}

func TestSetNewReplicaSetAnnotations(t *testing.T) {
	d := rolling(3, intstr.FromInt32(1), intstr.FromInt32(0))
	d.Annotations = map[string]string{"team": "a", lastAppliedAnnotation: "{}", RevisionAnnotation: "7"}
	r := rs("new", 0, 0, t0, map[string]string{RevisionAnnotation: "1"})
	if !SetNewReplicaSetAnnotations(d, r, "3", false, 2000) {
		t.Fatal("no change reported")
	}
	want := map[string]string{"team": "a", RevisionAnnotation: "3", RevisionHistoryAnnotation: "1", DesiredReplicasAnnotation: "3", MaxReplicasAnnotation: "4"}
	for k, v := range want {
		if r.Annotations[k] != v {
			t.Errorf("%s = %q, want %q", k, r.Annotations[k], v)
		}
	}
	if _, ok := r.Annotations[lastAppliedAnnotation]; ok {
		t.Error("last-applied-configuration copied")
	}
}

func TestRolloutStatusConditions(t *testing.T) {
	d := rolling(2, intstr.FromInt32(1), intstr.FromInt32(0))
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](10)
	d.Generation = 2
	nw := rs("web-abc", 2, 0, t0, nil)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{NewCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReplicaSetUpdatedReason, `ReplicaSet "web-abc" is progressing.`, t0)}}

	// No progress within the deadline: still progressing, look again later.
	st, after := RolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, t0.Add(5*time.Second))
	if c := GetCondition(st, appsv1.DeploymentProgressing); c.Reason != ReplicaSetUpdatedReason {
		t.Fatalf("before the deadline: %+v", c)
	}
	if after != 6*time.Second {
		t.Fatalf("requeue after %v, want 6s", after)
	}
	if c := GetCondition(st, appsv1.DeploymentAvailable); c.Status != corev1.ConditionFalse || c.Reason != MinimumReplicasUnavailable || c.Message != "Deployment does not have minimum availability." {
		t.Fatalf("available: %+v", c)
	}
	// Past the deadline: ProgressDeadlineExceeded.
	st, _ = RolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, t0.Add(11*time.Second))
	c := GetCondition(st, appsv1.DeploymentProgressing)
	if c.Status != corev1.ConditionFalse || c.Reason != TimedOutReason || c.Message != `ReplicaSet "web-abc" has timed out progressing.` {
		t.Fatalf("after the deadline: %+v", c)
	}
	// Progress (pods became available) completes it.
	nw.Status.AvailableReplicas, nw.Status.ReadyReplicas = 2, 2
	st, after = RolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, t0.Add(11*time.Second))
	c = GetCondition(st, appsv1.DeploymentProgressing)
	if c.Status != corev1.ConditionTrue || c.Reason != NewRSAvailableReason || c.Message != `ReplicaSet "web-abc" has successfully progressed.` || after != 0 {
		t.Fatalf("complete: %+v after %v", c, after)
	}
	if c := GetCondition(st, appsv1.DeploymentAvailable); c.Status != corev1.ConditionTrue || c.Reason != MinimumReplicasAvailable || c.Message != "Deployment has minimum availability." {
		t.Fatalf("available: %+v", c)
	}
}

func TestTerminatingReplicasSum(t *testing.T) {
	a, b := rs("a", 1, 1, t0, nil), rs("b", 1, 1, t0, nil)
	a.Status.TerminatingReplicas, b.Status.TerminatingReplicas = ptr.To[int32](2), ptr.To[int32](1)
	d := rolling(2, intstr.FromInt32(1), intstr.FromInt32(0))
	if st := CalculateStatus([]*appsv1.ReplicaSet{a, b, nil}, b, d, t0); st.TerminatingReplicas == nil || *st.TerminatingReplicas != 3 {
		t.Fatalf("terminatingReplicas %v, want 3", st.TerminatingReplicas)
	}
	b.Status.TerminatingReplicas = nil
	if st := CalculateStatus([]*appsv1.ReplicaSet{a, b}, b, d, t0); st.TerminatingReplicas != nil {
		t.Fatalf("a ReplicaSet without the field: nil, got %v", *st.TerminatingReplicas)
	}
}

func TestReplicaFailureCopied(t *testing.T) {
	d := rolling(2, intstr.FromInt32(1), intstr.FromInt32(0))
	nw := rs("web-abc", 2, 0, t0, nil)
	nw.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
		Reason: "FailedCreate", Message: `pods "web-abc-x" is forbidden: exceeded quota`, LastTransitionTime: metav1.NewTime(t0)}}
	st, _ := RolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, t0.Add(time.Second))
	c := GetCondition(st, appsv1.DeploymentReplicaFailure)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "FailedCreate" || c.Message != `pods "web-abc-x" is forbidden: exceeded quota` {
		t.Fatalf("ReplicaFailure %+v", c)
	}
	d.Status = st
	nw.Status.Conditions = nil
	st, _ = RolloutStatus([]*appsv1.ReplicaSet{nw}, nw, d, t0.Add(2*time.Second))
	if c := GetCondition(st, appsv1.DeploymentReplicaFailure); c != nil {
		t.Fatalf("ReplicaFailure kept after the ReplicaSet recovered: %+v", c)
	}
}
