package statefulset

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/controller/internal/history"
)

// OrderedReady: web-0, web-1, web-2 appear one at a time, each once the
// previous is Running and Ready; identity, labels, revision and status as
// upstream's.
func TestOrderedReadyCreatesInOrder(t *testing.T) {
	h := newHarness(t)
	set := h.create(setObj("web", 3))
	h.sync("web")
	h.expectPods("web-0")
	h.sync("web")
	h.expectPods("web-0") // waits for web-0 to be Running and Ready
	h.setPhase("web-0", corev1.PodRunning, false)
	h.sync("web")
	h.expectPods("web-0")

	p := h.pod("web-0")
	revs, err := h.revs.List(h.ctx, metav1.ListOptions{})
	if err != nil || len(revs.Items) != 1 {
		t.Fatalf("revisions %v %v", revs, err)
	}
	rev := revs.Items[0]
	hash := rev.Labels[history.ControllerRevisionHashLabel]
	if rev.Name != "web-"+hash || rev.Revision != 1 || metav1.GetControllerOf(&rev).UID != set.UID || rev.Labels["app"] != "web" {
		t.Fatalf("revision %s %d %v", rev.Name, rev.Revision, rev.Labels)
	}
	if !strings.HasPrefix(string(rev.Data.Raw), `{"spec":{"template":{"$patch":"replace","metadata":`) {
		t.Fatalf("revision data %s", rev.Data.Raw)
	}
	want := map[string]string{"app": "web", "statefulset.kubernetes.io/pod-name": "web-0", "apps.kubernetes.io/pod-index": "0",
		"controller-revision-hash": rev.Name}
	for k, v := range want {
		if p.Labels[k] != v {
			t.Fatalf("label %s=%q, want %q (%v)", k, p.Labels[k], v, p.Labels)
		}
	}
	ref := metav1.GetControllerOf(p)
	if p.Spec.Hostname != "web-0" || p.Spec.Subdomain != "web" || p.GenerateName != "web-" || ref == nil || ref.UID != set.UID || ref.Kind != "StatefulSet" {
		t.Fatalf("pod identity: hostname %q subdomain %q generateName %q ref %+v", p.Spec.Hostname, p.Spec.Subdomain, p.GenerateName, ref)
	}

	h.ready("web-0")
	h.sync("web")
	h.expectPods("web-0", "web-1")
	h.ready("web-1")
	h.sync("web")
	h.expectPods("web-0", "web-1", "web-2")
	h.ready("web-2")
	h.sync("web")
	st := h.get("web").Status
	if st.Replicas != 3 || st.ReadyReplicas != 3 || st.AvailableReplicas != 3 || st.CurrentReplicas != 3 || st.UpdatedReplicas != 3 ||
		st.CurrentRevision != rev.Name || st.UpdateRevision != rev.Name || st.ObservedGeneration != 1 || st.CollisionCount == nil || *st.CollisionCount != 0 {
		t.Fatalf("status %+v", st)
	}
	if ev := h.drain(); !contains(ev, "Normal SuccessfulCreate create Pod web-0 in StatefulSet web successful") ||
		!contains(ev, "Normal SuccessfulCreate create Pod web-2 in StatefulSet web successful") {
		t.Fatalf("events %v", ev)
	}
}

// Scale down deletes from the highest ordinal, one pod per sync, and
// waits while another pod is unhealthy.
func TestOrderedScaleDownInReverse(t *testing.T) {
	h := newHarness(t)
	h.create(setObj("web", 3))
	for _, n := range []string{"web-0", "web-1", "web-2"} {
		h.sync("web")
		h.ready(n)
	}
	h.update("web", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) })
	h.setPhase("web-0", corev1.PodRunning, false) // unhealthy: scale-down waits
	h.sync("web")
	h.expectPods("web-0", "web-1", "web-2")
	h.ready("web-0")
	h.sync("web")
	h.expectPods("web-0", "web-1")
	h.sync("web")
	h.expectPods("web-0")
	if ev := h.drain(); !contains(ev, "Normal SuccessfulDelete delete Pod web-2 in StatefulSet web successful") {
		t.Fatalf("events %v", ev)
	}
}

// Parallel creates (and deletes) every pod at once; spec.ordinals.start
// shifts the names.
func TestParallelAndStartOrdinal(t *testing.T) {
	h := newHarness(t)
	s := setObj("db", 3)
	s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
	h.create(s)
	h.sync("db")
	h.expectPods("db-5", "db-6", "db-7")
	if p := h.pod("db-6"); p.Labels["apps.kubernetes.io/pod-index"] != "6" {
		t.Fatalf("labels %v", p.Labels)
	}
	h.update("db", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) })
	h.sync("db")
	h.expectPods("db-5")
}

// A failed replica is deleted and recreated.
func TestFailedPodRecreated(t *testing.T) {
	h := newHarness(t)
	h.create(setObj("web", 1))
	h.sync("web")
	uid := h.pod("web-0").UID
	h.setPhase("web-0", corev1.PodFailed, false)
	h.sync("web")
	h.expectPods()
	h.sync("web")
	h.expectPods("web-0")
	if h.pod("web-0").UID == uid {
		t.Fatal("web-0 not recreated")
	}
}

func readyAll(h *harness, names ...string) {
	for _, n := range names {
		h.sync("web")
		h.ready(n)
	}
	h.sync("web")
}

// RollingUpdate replaces pods from the highest ordinal down to the
// partition, one unavailable at a time; the update revision becomes current
// once all are updated.
func TestRollingUpdateWithPartition(t *testing.T) {
	h := newHarness(t)
	h.create(setObj("web", 3))
	readyAll(h, "web-0", "web-1", "web-2")
	oldRev := h.get("web").Status.CurrentRevision
	h.update("web", func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}
	})
	h.sync("web")
	h.expectPods("web-0", "web-1") // web-2 deleted for update
	h.sync("web")
	h.expectPods("web-0", "web-1", "web-2")
	st := h.get("web").Status
	newRev := st.UpdateRevision
	if newRev == oldRev || h.pod("web-2").Labels[appsv1.StatefulSetRevisionLabel] != newRev || h.pod("web-2").Spec.Containers[0].Image != "nginx:2" {
		t.Fatalf("web-2 not at the update revision: %v", h.pod("web-2").Labels)
	}
	h.sync("web")
	h.expectPods("web-0", "web-1", "web-2") // web-2 unavailable: nothing else goes
	h.ready("web-2")
	h.sync("web")
	h.expectPods("web-0", "web-2")
	h.sync("web")
	h.ready("web-1")
	h.sync("web")
	h.sync("web")
	h.expectPods("web-0", "web-1", "web-2") // partition 1: web-0 stays
	st = h.get("web").Status
	if st.UpdatedReplicas != 2 || st.CurrentReplicas != 1 || st.CurrentRevision != oldRev || h.pod("web-0").Spec.Containers[0].Image != "nginx:1" {
		t.Fatalf("status %+v", st)
	}
	h.update("web", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0) })
	h.sync("web")
	h.expectPods("web-1", "web-2")
	h.sync("web")
	h.ready("web-0")
	h.sync("web")
	st = h.get("web").Status
	if st.UpdatedReplicas != 3 || st.CurrentReplicas != 3 || st.CurrentRevision != newRev || st.UpdateRevision != newRev {
		t.Fatalf("rollout not complete: %+v", st)
	}
}

// maxUnavailable 2 replaces two pods at once.
func TestRollingUpdateMaxUnavailable(t *testing.T) {
	h := newHarness(t)
	s := setObj("web", 3)
	s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	h.create(s)
	h.sync("web")
	h.ready("web-0", "web-1", "web-2")
	h.sync("web")
	h.update("web", func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	})
	h.sync("web")
	h.expectPods("web-0")
}

// OnDelete: a template change replaces nothing; a deleted pod comes back at
// the update revision.
func TestOnDelete(t *testing.T) {
	h := newHarness(t)
	s := setObj("web", 2)
	s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	h.create(s)
	readyAll(h, "web-0", "web-1")
	h.update("web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	h.sync("web")
	h.sync("web")
	h.expectPods("web-0", "web-1")
	if err := h.pods.Delete(h.ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("web")
	h.sync("web")
	h.expectPods("web-0", "web-1")
	st := h.get("web").Status
	if img := h.pod("web-1").Spec.Containers[0].Image; img != "nginx:2" || h.pod("web-0").Spec.Containers[0].Image != "nginx:1" ||
		st.UpdatedReplicas != 1 || st.CurrentRevision == st.UpdateRevision {
		t.Fatalf("web-1 image %s, status %+v", img, st)
	}
}

func withClaims(s *appsv1.StatefulSet, whenDeleted, whenScaled appsv1.PersistentVolumeClaimRetentionPolicyType) *appsv1.StatefulSet {
	s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"tier": "db"}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}}
	s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: whenDeleted, WhenScaled: whenScaled}
	return s
}

func (h *harness) claim(name string) *corev1.PersistentVolumeClaim {
	h.t.Helper()
	c, err := h.pvcs.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// Volume claim templates: a claim per ordinal created before the pod, the
// pod's volume pointing at it; the retention policy as owner references.
func TestVolumeClaimTemplatesAndRetentionPolicy(t *testing.T) {
	const retain, del = appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	for _, tc := range []struct {
		name                    string
		whenDeleted, whenScaled appsv1.PersistentVolumeClaimRetentionPolicyType
		setOwns                 bool // claims of live replicas owned by the set
		podOwnsCondemned        bool // a scaled-down pod's claim owned by the pod
	}{
		{"retain/retain", retain, retain, false, false},
		{"delete/retain", del, retain, true, false},
		{"retain/delete", retain, del, false, true},
		{"delete/delete", del, del, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			s := withClaims(setObj("web", 2), tc.whenDeleted, tc.whenScaled)
			s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
			set := h.create(s)
			h.sync("web")
			h.expectPods("web-0", "web-1")
			h.sync("web") // a Pending pod's claims get their owners once the cache has them
			c := h.claim("data-web-1")
			if c.Labels["tier"] != "db" || c.Labels["app"] != "web" {
				t.Fatalf("claim labels %v", c.Labels)
			}
			p := h.pod("web-1")
			if len(p.Spec.Volumes) == 0 || p.Spec.Volumes[0].Name != "data" || p.Spec.Volumes[0].PersistentVolumeClaim == nil ||
				p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-web-1" {
				t.Fatalf("pod volumes %+v", p.Spec.Volumes)
			}
			if got := hasOwnerRef(c, set); got != tc.setOwns {
				t.Fatalf("claim owned by set: %v, want %v (%+v)", got, tc.setOwns, c.OwnerReferences)
			}
			if hasOwnerRef(c, p) {
				t.Fatal("a live replica's claim is never owned by its pod")
			}
			h.ready("web-0", "web-1")
			h.update("web", func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](1) })
			h.sync("web")
			h.expectPods("web-0")
			c = h.claim("data-web-1")
			if got := hasOwnerRef(c, p); got != tc.podOwnsCondemned {
				t.Fatalf("condemned claim owned by pod: %v, want %v (%+v)", got, tc.podOwnsCondemned, c.OwnerReferences)
			}
			if tc.podOwnsCondemned && hasOwnerRef(c, set) {
				t.Fatalf("condemned claim still owned by the set: %+v", c.OwnerReferences)
			}
		})
	}
}

// Revisions beyond revisionHistoryLimit are deleted unless a pod names
// them; going back to an earlier template renumbers its revision instead
// of creating a new one.
func TestRevisionHistoryLimitAndRollback(t *testing.T) {
	h := newHarness(t)
	s := setObj("web", 1)
	s.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	h.create(s)
	h.sync("web")
	first := h.get("web").Status.UpdateRevision
	for _, img := range []string{"nginx:2", "nginx:3"} {
		h.update("web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = img })
		h.sync("web")
	}
	// Revisions: 1 (named by web-0, current), 2 (history), 3 (update).
	h.sync("web")
	names := func() map[string]int64 {
		l, err := h.revs.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, r := range l.Items {
			m[r.Name] = r.Revision
		}
		return m
	}
	if got := names(); len(got) != 3 || got[first] != 1 {
		t.Fatalf("revisions %v", got)
	}
	h.update("web", func(s *appsv1.StatefulSet) { s.Spec.RevisionHistoryLimit = ptr.To[int32](0) })
	h.sync("web")
	if got := names(); len(got) != 2 || got[first] != 1 {
		t.Fatalf("revisions after limit 0: %v", got)
	}
	h.update("web", func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.Containers[0].Image = "nginx:1" })
	h.sync("web")
	got := names()
	if got[first] != 4 || h.get("web").Status.UpdateRevision != first {
		t.Fatalf("rollback to the first template: %v, update revision %s", got, h.get("web").Status.UpdateRevision)
	}
}

// minReadySeconds: a Ready pod counts as available only after it, and
// OrderedReady waits for availability, on the injected clock.
func TestMinReadySeconds(t *testing.T) {
	h := newHarness(t)
	s := setObj("web", 2)
	s.Spec.MinReadySeconds = 30
	h.create(s)
	h.sync("web")
	h.ready("web-0")
	h.sync("web")
	h.expectPods("web-0")
	if st := h.get("web").Status; st.ReadyReplicas != 1 || st.AvailableReplicas != 0 {
		t.Fatalf("status %+v", st)
	}
	h.clock.Step(31 * time.Second)
	h.sync("web")
	h.expectPods("web-0", "web-1")
	if st := h.get("web").Status; st.AvailableReplicas != 1 {
		t.Fatalf("status %+v", st)
	}
}

// Orphan pods the selector matches and named as members are adopted.
func TestAdoptsOrphanPod(t *testing.T) {
	h := newHarness(t)
	set := h.create(setObj("web", 1))
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}
	if _, err := h.pods.Create(h.ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("web")
	p := h.pod("web-0")
	if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != set.UID {
		t.Fatalf("not adopted: %+v", p.OwnerReferences)
	}
	// Without a revision label it is not at the update revision: the
	// rolling update replaces it once it is Running and Ready.
	h.ready("web-0")
	h.sync("web")
	h.expectPods()
	h.sync("web")
	if p := h.pod("web-0"); p.Labels[appsv1.StatefulSetRevisionLabel] != h.get("web").Status.UpdateRevision {
		t.Fatalf("replacement not at the update revision: %v", p.Labels)
	}
}

// A revision name taken by other data (a hash collision): the controller
// counts the collision and names its revision with the new count, keeping
// status.collisionCount.
func TestRevisionNameCollision(t *testing.T) {
	h := newHarness(t)
	set := h.create(setObj("web", 1))
	zero := int32(0)
	rev, err := NewRevision(set, 1, &zero)
	if err != nil {
		t.Fatal(err)
	}
	taken := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: rev.Name, Labels: map[string]string{"other": "x"}},
		Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace"}}}`)}, Revision: 1}
	if _, err := h.revs.Create(h.ctx, taken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("web")
	st := h.get("web").Status
	one := int32(1)
	want := history.ControllerRevisionName("web", history.HashControllerRevision(rev, &one))
	if st.CollisionCount == nil || *st.CollisionCount != 1 || st.UpdateRevision != want || st.UpdateRevision == rev.Name {
		t.Fatalf("status %+v, want update revision %s", st, want)
	}
	if p := h.pod("web-0"); p.Labels[appsv1.StatefulSetRevisionLabel] != want {
		t.Fatalf("pod revision %v", p.Labels)
	}
}

// A latest revision holding the set's template in another serialization
// (keys in another order, as another version writes them) is reused: no
// new revision, no rollout.
func TestSemanticRevisionComparison(t *testing.T) {
	h := newHarness(t)
	set := h.create(setObj("web", 1))
	rev, err := NewRevision(set, 1, ptr.To[int32](0))
	if err != nil {
		t.Fatal(err)
	}
	// The same template, keys reordered and spaced.
	var generic map[string]any
	if err := json.Unmarshal(rev.Data.Raw, &generic); err != nil {
		t.Fatal(err)
	}
	other, _ := json.MarshalIndent(generic, "", "  ")
	rev.Name, rev.Data.Raw = "web-othername", other
	if _, err := h.revs.Create(h.ctx, rev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("web")
	if st := h.get("web").Status; st.UpdateRevision != "web-othername" || st.CurrentRevision != "web-othername" {
		t.Fatalf("status %+v", st)
	}
	if l, _ := h.revs.List(h.ctx, metav1.ListOptions{}); len(l.Items) != 1 {
		t.Fatalf("%d revisions, want the existing one only", len(l.Items))
	}
}
