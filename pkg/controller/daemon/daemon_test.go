package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/controller/internal/history"
)

func TestNodeShouldRunDaemonPod(t *testing.T) {
	node := func(lbls map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: lbls}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	ds := func(mut func(*corev1.PodSpec)) *appsv1.DaemonSet {
		d := dsObj("d")
		mut(&d.Spec.Template.Spec)
		return d
	}
	none := func(*corev1.PodSpec) {}
	taint := func(k string, e corev1.TaintEffect) corev1.Taint { return corev1.Taint{Key: k, Value: "x", Effect: e} }
	affinity := func(key string, op corev1.NodeSelectorOperator, vals ...string) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}}}}}
		}
	}
	for _, tc := range []struct {
		name               string
		node               *corev1.Node
		ds                 *appsv1.DaemonSet
		run, continueToRun bool
	}{
		{"plain node", node(nil), ds(none), true, true},
		{"nodeSelector matches", node(map[string]string{"role": "w"}), ds(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"role": "w"} }), true, true},
		{"nodeSelector does not match", node(map[string]string{"role": "i"}), ds(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"role": "w"} }), false, false},
		{"affinity In", node(map[string]string{"zone": "a"}), ds(affinity("zone", corev1.NodeSelectorOpIn, "a", "b")), true, true},
		{"affinity NotIn", node(map[string]string{"zone": "a"}), ds(affinity("zone", corev1.NodeSelectorOpNotIn, "a")), false, false},
		{"affinity DoesNotExist", node(nil), ds(affinity("gpu", corev1.NodeSelectorOpDoesNotExist)), true, true},
		{"affinity Gt", node(map[string]string{"cpus": "8"}), ds(affinity("cpus", corev1.NodeSelectorOpGt, "4")), true, true},
		{"template nodeName elsewhere", node(nil), ds(func(s *corev1.PodSpec) { s.NodeName = "n2" }), false, false},
		{"untolerated NoSchedule: no new pod, existing stays", node(nil, taint("foo", corev1.TaintEffectNoSchedule)), ds(none), false, true},
		{"untolerated NoExecute: evicted", node(nil, taint("foo", corev1.TaintEffectNoExecute)), ds(none), false, false},
		{"tolerated NoExecute", node(nil, taint("foo", corev1.TaintEffectNoExecute)), ds(func(s *corev1.PodSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpExists}}
		}), true, true},
		{"PreferNoSchedule ignored", node(nil, taint("foo", corev1.TaintEffectPreferNoSchedule)), ds(none), true, true},
		{"unschedulable tolerated automatically", node(nil, taint(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)), ds(none), true, true},
		{"not-ready NoExecute tolerated automatically", node(nil, taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)), ds(none), true, true},
		{"memory-pressure tolerated", node(nil, taint(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)), ds(none), true, true},
		{"network-unavailable not tolerated without hostNetwork", node(nil, taint(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)), ds(none), false, true},
		{"network-unavailable tolerated with hostNetwork", node(nil, taint(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)), ds(func(s *corev1.PodSpec) { s.HostNetwork = true }), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, cont := NodeShouldRunDaemonPod(tc.node, tc.ds)
			if run != tc.run || cont != tc.continueToRun {
				t.Fatalf("shouldRun %v shouldContinueRunning %v, want %v %v", run, cont, tc.run, tc.continueToRun)
			}
		})
	}
}

// One pod per eligible node: node name affinity, daemon tolerations,
// revision hash and template generation labels; status counts.
func TestOnePodPerEligibleNode(t *testing.T) {
	h := newHarness(t, true)
	w := map[string]string{"role": "worker"}
	h.node("n1", w)
	h.node("n2", w, corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule})
	h.node("n3", map[string]string{"role": "infra"})
	h.node("n4", w, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	d := dsObj("agent")
	d.Spec.Template.Spec.NodeSelector = w
	ds := h.create(d)
	if ds.Annotations[appsv1.DeprecatedTemplateGeneration] != "1" {
		t.Fatalf("template generation annotation: %v", ds.Annotations)
	}
	h.sync("agent")
	h.expectNodes("n1:1", "n4:1")

	revs, err := h.revs.List(h.ctx, metav1.ListOptions{})
	if err != nil || len(revs.Items) != 1 {
		t.Fatalf("revisions %v %v", revs, err)
	}
	rev := revs.Items[0]
	hash := history.ComputeHash(&ds.Spec.Template, nil)
	if rev.Name != "agent-"+hash || rev.Labels[HashLabel] != hash || rev.Revision != 1 || metav1.GetControllerOf(&rev).UID != ds.UID {
		t.Fatalf("revision %s %v %d", rev.Name, rev.Labels, rev.Revision)
	}
	p := h.livePods()["n1"][0]
	if p.Labels[HashLabel] != hash || p.Labels[TemplateGenerationLabel] != "1" || !strings.HasPrefix(p.Name, "agent-") || p.Spec.NodeName != "" {
		t.Fatalf("pod %s labels %v nodeName %q", p.Name, p.Labels, p.Spec.NodeName)
	}
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || fmt.Sprint(terms[0].MatchFields) != fmt.Sprint([]corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: "In", Values: []string{"n1"}}}) {
		t.Fatalf("affinity %+v", terms)
	}
	tolerated := map[string]bool{}
	for _, tol := range p.Spec.Tolerations {
		tolerated[tol.Key+":"+string(tol.Effect)] = true
	}
	for _, k := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/disk-pressure:NoSchedule",
		"node.kubernetes.io/memory-pressure:NoSchedule", "node.kubernetes.io/pid-pressure:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"} {
		if !tolerated[k] {
			t.Fatalf("missing toleration %s in %v", k, p.Spec.Tolerations)
		}
	}
	if tolerated["node.kubernetes.io/network-unavailable:NoSchedule"] {
		t.Fatal("network-unavailable is only for hostNetwork pods")
	}
	h.sync("agent")
	h.readyAll()
	h.sync("agent")
	st := h.get("agent").Status
	if st.DesiredNumberScheduled != 2 || st.CurrentNumberScheduled != 2 || st.NumberReady != 2 || st.NumberAvailable != 2 ||
		st.UpdatedNumberScheduled != 2 || st.NumberMisscheduled != 0 || st.NumberUnavailable != 0 || st.ObservedGeneration != 1 {
		t.Fatalf("status %+v", st)
	}
	if ev := h.drain(); len(ev) < 2 || !strings.HasPrefix(ev[0], "Normal SuccessfulCreate Created pod: agent-") {
		t.Fatalf("events %v", ev)
	}

	// A new node gets a pod; a node that stops matching loses it.
	h.node("n5", w)
	h.sync("agent")
	h.expectNodes("n1:1", "n4:1", "n5:1")
	n1, _ := h.nodes.Get(h.ctx, "n1", metav1.GetOptions{})
	n1.Labels = map[string]string{"role": "infra"}
	if _, err := h.nodes.Update(h.ctx, n1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("agent")
	h.expectNodes("n4:1", "n5:1")
}

// A burst of syncs before the informer has seen the new pods creates one
// pod per node, not more: the pod informer is held back (a stale cache)
// and the syncs run one after another, as the workqueue runs them.
func TestExpectationsUnderSyncBurst(t *testing.T) {
	h := newHarness(t, false)
	for i := range 3 {
		h.node(fmt.Sprintf("n%d", i), nil)
	}
	h.create(dsObj("agent"))
	go h.f.DaemonSets().Run(h.ctx)
	go h.f.Nodes().Run(h.ctx)
	go h.f.ControllerRevisions().Run(h.ctx)
	if !cache.WaitForCacheSync(h.ctx, h.f.DaemonSets().HasSynced, h.f.Nodes().HasSynced, h.f.ControllerRevisions().HasSynced) {
		t.Fatal("caches")
	}
	waitFor(t, "cached", func() bool {
		n, _ := h.f.Nodes().Lister().List(everything())
		d, _ := h.f.DaemonSets().Lister().List(everything())
		return len(n) == 3 && len(d) == 1
	})
	for range 10 {
		_ = h.ctrl.Sync(h.ctx, "default/agent")
		waitFor(t, "revision cached", func() bool {
			r, _ := h.f.ControllerRevisions().Lister().List(everything())
			return len(r) == 1
		})
	}
	l, err := h.pods.List(h.ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 3 {
		t.Fatalf("%d pods, want 3 (%v)", len(l.Items), err)
	}
	if adds, _ := h.ctrl.Expectations.Pending("default/agent"); adds != 3 {
		t.Fatalf("pending creations %d, want 3", adds)
	}
}

// RollingUpdate without surge: at most maxUnavailable nodes without an
// available pod at any time.
func TestRollingUpdateMaxUnavailable(t *testing.T) {
	h := newHarness(t, true)
	for i := range 3 {
		h.node(fmt.Sprintf("n%d", i), nil)
	}
	h.create(dsObj("agent"))
	h.sync("agent")
	h.readyAll()
	h.sync("agent")
	h.update("agent", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "agent:2" })
	if g := h.get("agent").Annotations[appsv1.DeprecatedTemplateGeneration]; g != "2" {
		t.Fatalf("template generation %s", g)
	}
	h.sync("agent")
	h.expectNodes("n1:1", "n2:1") // n0's old pod deleted (maxUnavailable 1)
	h.sync("agent")
	h.expectNodes("n0:1", "n1:1", "n2:1")
	if p := h.livePods()["n0"][0]; p.Spec.Containers[0].Image != "agent:2" || p.Labels[TemplateGenerationLabel] != "2" {
		t.Fatalf("n0 pod %v %v", p.Spec.Containers[0].Image, p.Labels)
	}
	h.sync("agent")
	h.expectNodes("n0:1", "n1:1", "n2:1") // the new pod is not ready yet: nothing else goes
	h.readyAll()
	h.sync("agent")
	h.expectNodes("n0:1", "n2:1")
	h.sync("agent")
	h.readyAll()
	h.sync("agent")
	h.sync("agent")
	h.readyAll()
	h.sync("agent")
	st := h.get("agent").Status
	if st.UpdatedNumberScheduled != 3 || st.NumberAvailable != 3 {
		t.Fatalf("status %+v", st)
	}
	revs, _ := h.revs.List(h.ctx, metav1.ListOptions{})
	if len(revs.Items) != 2 {
		t.Fatalf("%d revisions", len(revs.Items))
	}
}

// RollingUpdate with maxSurge: the new pod starts next to the old one,
// which goes once the new one is available.
func TestRollingUpdateMaxSurge(t *testing.T) {
	h := newHarness(t, true)
	h.node("n0", nil)
	d := dsObj("agent")
	d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1))}}
	d.Spec.MinReadySeconds = 10
	h.create(d)
	h.sync("agent")
	h.readyAll()
	h.clock.Step(11 * time.Second)
	h.sync("agent")
	h.update("agent", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "agent:2" })
	h.sync("agent")
	h.expectNodes("n0:2")
	h.sync("agent")
	h.expectNodes("n0:2")
	h.readyAll()
	h.sync("agent")
	h.expectNodes("n0:2") // ready, not yet available (minReadySeconds)
	h.clock.Step(11 * time.Second)
	h.sync("agent")
	h.expectNodes("n0:1")
	if p := h.livePods()["n0"][0]; p.Spec.Containers[0].Image != "agent:2" {
		t.Fatalf("kept %s", p.Spec.Containers[0].Image)
	}
}

// OnDelete: a template change replaces nothing until a pod is deleted.
func TestOnDelete(t *testing.T) {
	h := newHarness(t, true)
	h.node("n0", nil)
	d := dsObj("agent")
	d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	h.create(d)
	h.sync("agent")
	h.readyAll()
	h.update("agent", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "agent:2" })
	h.sync("agent")
	h.sync("agent")
	p := h.livePods()["n0"][0]
	if p.Spec.Containers[0].Image != "agent:1" {
		t.Fatal("OnDelete replaced a pod")
	}
	if st := h.get("agent").Status; st.UpdatedNumberScheduled != 0 {
		t.Fatalf("status %+v", st)
	}
	if err := h.pods.Delete(h.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("agent")
	if p := h.livePods()["n0"][0]; p.Spec.Containers[0].Image != "agent:2" {
		t.Fatalf("recreated %s", p.Spec.Containers[0].Image)
	}
}

// A failed daemon pod is deleted (and recreated), with a per-node back-off
// on the injected clock: 1s, then 2s, ...
func TestFailedPodsBackoff(t *testing.T) {
	h := newHarness(t, true)
	h.node("n0", nil)
	h.create(dsObj("agent"))
	h.sync("agent")
	fail := func() string {
		p := h.livePods()["n0"][0]
		h.setPhase(p.Name, corev1.PodFailed, false)
		return p.Name
	}
	first := fail()
	h.sync("agent")
	h.expectNodes()
	if ev := h.drain(); !contains(ev, fmt.Sprintf("Warning FailedDaemonPod Found failed daemon pod default/%s on node n0, will try to kill it", first)) {
		t.Fatalf("events %v", ev)
	}
	h.sync("agent")
	h.expectNodes("n0:1")
	second := fail()
	h.sync("agent")
	h.expectNodes("n0:1") // within the 1s back-off: kept
	h.clock.Step(1500 * time.Millisecond)
	h.sync("agent")
	h.expectNodes()
	h.sync("agent")
	third := fail()
	h.clock.Step(1500 * time.Millisecond)
	h.sync("agent")
	h.expectNodes("n0:1") // back-off doubled to 2s
	h.clock.Step(time.Second)
	h.sync("agent")
	h.expectNodes()
	if second == third {
		t.Fatal("pod not recreated")
	}
}

// Revisions beyond revisionHistoryLimit go, oldest first, unless a pod
// still carries their hash; a revert reuses (renumbers) the old revision.
func TestHistoryLimitAndRevert(t *testing.T) {
	h := newHarness(t, true)
	h.node("n0", nil)
	d := dsObj("agent")
	d.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	h.create(d)
	h.sync("agent")
	first := history.ComputeHash(&h.get("agent").Spec.Template, nil)
	for _, img := range []string{"agent:2", "agent:3"} {
		h.update("agent", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = img })
		h.sync("agent")
	}
	revs := func() map[string]int64 {
		l, _ := h.revs.List(h.ctx, metav1.ListOptions{})
		m := map[string]int64{}
		for _, r := range l.Items {
			m[r.Labels[HashLabel]] = r.Revision
		}
		return m
	}
	// agent:1 is kept (its pod lives), agent:2 was trimmed, agent:3 current.
	if got := revs(); len(got) != 2 || got[first] != 1 {
		t.Fatalf("revisions %v", got)
	}
	h.update("agent", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "agent:1" })
	h.sync("agent")
	if got := revs(); got[first] != 4 {
		t.Fatalf("revert: %v", got)
	}
}

func TestNumberAvailableWithMinReadySeconds(t *testing.T) {
	h := newHarness(t, true)
	h.node("n0", nil)
	d := dsObj("agent")
	d.Spec.MinReadySeconds = 30
	h.create(d)
	h.sync("agent")
	h.readyAll()
	h.sync("agent")
	if st := h.get("agent").Status; st.NumberReady != 1 || st.NumberAvailable != 0 || st.NumberUnavailable != 1 {
		t.Fatalf("status %+v", st)
	}
	h.clock.Step(31 * time.Second)
	h.sync("agent")
	if st := h.get("agent").Status; st.NumberAvailable != 1 || st.NumberUnavailable != 0 {
		t.Fatalf("status %+v", st)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A revision name taken by other data (a hash collision) bumps
// status.collisionCount; the next sync names the revision with the new
// count.
func TestRevisionNameCollision(t *testing.T) {
	h := newHarness(t, true)
	h.node("n0", nil)
	ds := h.create(dsObj("agent"))
	taken := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + history.ComputeHash(&ds.Spec.Template, nil),
		Labels: map[string]string{"app": "agent"}}, Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace"}}}`)}, Revision: 7}
	if _, err := h.revs.Create(h.ctx, taken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if err := h.ctrl.Sync(h.ctx, "default/agent"); err == nil {
		t.Fatal("a collision fails the sync (retried)")
	}
	got := h.get("agent")
	if got.Status.CollisionCount == nil || *got.Status.CollisionCount != 1 {
		t.Fatalf("collisionCount %v", got.Status.CollisionCount)
	}
	h.sync("agent")
	want := "agent-" + history.ComputeHash(&ds.Spec.Template, got.Status.CollisionCount)
	r, err := h.revs.Get(h.ctx, want, metav1.GetOptions{})
	if err != nil || r.Revision != 8 {
		t.Fatalf("revision %s: %v %v", want, r, err)
	}
	// The colliding orphan matched the selector: adopted as an old revision.
	old, _ := h.revs.Get(h.ctx, taken.Name, metav1.GetOptions{})
	if ref := metav1.GetControllerOf(old); ref == nil || ref.UID != ds.UID {
		t.Fatalf("orphan revision not adopted: %+v", old.OwnerReferences)
	}
	h.expectNodes("n0:1")
	if p := h.livePods()["n0"][0]; p.Labels[HashLabel] != r.Labels[HashLabel] {
		t.Fatalf("pod hash %s, revision %s", p.Labels[HashLabel], r.Labels[HashLabel])
	}
}

// Node changes: an untolerated NoSchedule taint keeps the pod (counted
// misscheduled), a NoExecute taint evicts it, a deleted node's unbound pod
// goes.
func TestNodeTaintsAndDeletion(t *testing.T) {
	h := newHarness(t, true)
	for _, n := range []string{"n0", "n1", "n2"} {
		h.node(n, nil)
	}
	h.create(dsObj("agent"))
	h.sync("agent")
	h.expectNodes("n0:1", "n1:1", "n2:1")
	taint := func(node string, effect corev1.TaintEffect) {
		n, err := h.nodes.Get(h.ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "maintenance", Value: "x", Effect: effect})
		if _, err := h.nodes.Update(h.ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	taint("n0", corev1.TaintEffectNoSchedule)
	taint("n1", corev1.TaintEffectNoExecute)
	if err := h.nodes.Delete(h.ctx, "n2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("agent")
	h.expectNodes("n0:1")
	h.sync("agent")
	if st := h.get("agent").Status; st.DesiredNumberScheduled != 0 || st.CurrentNumberScheduled != 0 || st.NumberMisscheduled != 1 {
		t.Fatalf("status %+v", st)
	}
}
