package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// cluster is a testenv API server with the scheduler (default
// configuration unless cc) and helpers to make fake nodes and pods.
type cluster struct {
	t     *testing.T
	ctx   context.Context
	c     *client.Client
	nodes *client.Typed[*corev1.Node, *corev1.NodeList]
	pods  *client.Typed[*corev1.Pod, *corev1.PodList]
	// s is the running scheduler: node waits until its cache has each
	// node as made (its node and pod informers are separate: a pod
	// created right after a node could otherwise meet a cache without
	// the node, or with the node's not-ready taint).
	s *Scheduler
}

func newCluster(t *testing.T, cc *config.KubeSchedulerConfiguration) *cluster {
	t.Helper()
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	ccfg := &client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1}
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	if cc == nil {
		cc = config.Default()
	}
	cc = cc.DeepCopy()
	off := false
	cc.LeaderElection.LeaderElect = &off
	s := runScheduler(t, ctx, cc, schedulerClientConfig(t, env))
	return &cluster{t: t, ctx: ctx, c: c, nodes: client.For[*corev1.Node, *corev1.NodeList](c),
		pods: client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default"), s: s}
}

// node makes a Ready node with cpu cores, the labels and the taints.
func (k *cluster) node(name string, cpu string, labels map[string]string, taints ...corev1.Taint) {
	k.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[corev1.LabelHostname] = name
	n, err := k.nodes.Create(k.ctx, n, metav1.CreateOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status.Capacity = n.Status.Allocatable
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	n, err = k.nodes.UpdateStatus(k.ctx, n, metav1.UpdateOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	n = readyNode(k.t, k.ctx, k.nodes, n, taints)
	waitFor(k.t, "node "+name+" in the scheduler's cache", func() (bool, error) {
		ni := k.s.cache.Dump().Nodes[name]
		return ni != nil && ni.Node() != nil && ni.Node().ResourceVersion == n.ResourceVersion, nil
	})
}

// readyNode drops the not-ready taint admission puts on new nodes (the
// node lifecycle controller would, once the node is Ready; these tests
// run no controller manager).
func readyNode(t *testing.T, ctx context.Context, nodes *client.Typed[*corev1.Node, *corev1.NodeList], n *corev1.Node, taints []corev1.Taint) *corev1.Node {
	t.Helper()
	n.Spec.Taints = taints
	n, err := nodes.Update(ctx, n, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (k *cluster) pod(name string, mutate func(*corev1.Pod)) {
	k.t.Helper()
	if _, err := k.pods.Create(k.ctx, pod(name, mutate), metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

// nodeOf waits until the pod is bound and returns its node.
func (k *cluster) nodeOf(name string) string {
	k.t.Helper()
	var node string
	waitFor(k.t, name+" bound", func() (bool, error) {
		p, err := k.pods.Get(k.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", fmt.Errorf("phase %s conditions %+v", p.Status.Phase, p.Status.Conditions)
	})
	return node
}

// unschedulable waits for PodScheduled=False with a message starting
// with prefix.
func (k *cluster) unschedulable(name, prefix string) {
	k.t.Helper()
	waitFor(k.t, name+" unschedulable", func() (bool, error) {
		p, err := k.pods.Get(k.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.HasPrefix(c.Message, prefix) && p.Spec.NodeName == "" {
				return true, nil
			}
		}
		return false, fmt.Errorf("node %q conditions %+v", p.Spec.NodeName, p.Status.Conditions)
	})
}

func requests(cpu string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
}

func withLabels(l map[string]string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels = l }
}

func all(fs ...func(*corev1.Pod)) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, f := range fs {
			f(p)
		}
	}
}

func TestScenarioSpreadingOverZones(t *testing.T) {
	k := newCluster(t, nil)
	for i, zone := range []string{"a", "a", "b", "b", "c", "c"} {
		k.node(fmt.Sprintf("n%d", i), "4", map[string]string{corev1.LabelTopologyZone: zone})
	}
	for i := range 6 {
		k.pod(fmt.Sprintf("s%d", i), all(withLabels(map[string]string{"app": "spread"}), func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
		}))
	}
	perZone := map[string]int{}
	for i := range 6 {
		n := k.nodeOf(fmt.Sprintf("s%d", i))
		perZone[map[string]string{"n0": "a", "n1": "a", "n2": "b", "n3": "b", "n4": "c", "n5": "c"}[n]]++
	}
	if perZone["a"] != 2 || perZone["b"] != 2 || perZone["c"] != 2 {
		t.Errorf("pods per zone %v, want 2 each (maxSkew 1)", perZone)
	}
}

func TestScenarioAffinityAndAntiAffinity(t *testing.T) {
	k := newCluster(t, nil)
	for i := range 3 {
		k.node(fmt.Sprintf("n%d", i), "4", nil)
	}
	term := func(app string) []corev1.PodAffinityTerm {
		return []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	}
	// Three replicas that must not share a node, then a fourth that
	// cannot go anywhere.
	for i := range 4 {
		k.pod(fmt.Sprintf("db%d", i), all(withLabels(map[string]string{"app": "db"}), func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term("db")}}
		}))
	}
	seen := map[string]bool{}
	for i := range 3 {
		seen[k.nodeOf(fmt.Sprintf("db%d", i))] = true
	}
	if len(seen) != 3 {
		t.Errorf("anti-affine replicas share nodes: %v", seen)
	}
	k.unschedulable("db3", "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.")
	// A cache pod that must run beside db0.
	dbNode := k.nodeOf("db0")
	if _, err := k.pods.Patch(k.ctx, "db0", types.MergePatchType, []byte(`{"metadata":{"labels":{"role":"primary"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	k.pod("cache", func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "primary"}}}}}}
	})
	if got := k.nodeOf("cache"); got != dbNode {
		t.Errorf("cache on %s, want beside db0 on %s", got, dbNode)
	}
}

func TestScenarioTaints(t *testing.T) {
	k := newCluster(t, nil)
	gpu := corev1.Taint{Key: "example.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	k.node("gpu", "4", nil, gpu)
	k.node("plain", "4", nil)
	for i := range 3 {
		k.pod(fmt.Sprintf("p%d", i), nil)
	}
	for i := range 3 {
		if n := k.nodeOf(fmt.Sprintf("p%d", i)); n != "plain" {
			t.Errorf("p%d on %s: an untolerated taint", i, n)
		}
	}
	k.pod("ml", all(requests("3"), func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: "gpu"}
	}))
	if n := k.nodeOf("ml"); n != "gpu" {
		t.Errorf("tolerating pod on %s", n)
	}
	k.pod("big", requests("5"))
	k.unschedulable("big", "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/2 nodes are available: 2 ")
}

func TestScenarioPreemptionRespectsPDB(t *testing.T) {
	k := newCluster(t, nil)
	k.node("n0", "2", nil)
	k.node("n1", "2", nil)
	high := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}
	if _, err := client.For[*schedulingv1.PriorityClass, *schedulingv1.PriorityClassList](k.c).Create(k.ctx, high, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Each node full with one low-priority pod; n0's is protected by a PDB.
	k.pod("protected", all(requests("2"), withLabels(map[string]string{"app": "protected"}), func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: "n0"}
	}))
	k.pod("victim", all(requests("2"), func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: "n1"}
	}))
	k.nodeOf("protected")
	k.nodeOf("victim")
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "protect", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "protected"}}}}
	pdbs := client.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](k.c).Namespace("default")
	pdb, err := pdbs.Create(k.ctx, pdb, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No disruption controller here: its status says none is allowed.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	if pdb, err = pdbs.UpdateStatus(k.ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the budget in the scheduler's lister", func() (bool, error) {
		got, err := k.s.factory.PodDisruptionBudgets().Lister().Namespace("default").Get("protect")
		return err == nil && got.ResourceVersion == pdb.ResourceVersion, err
	})
	k.pod("important", all(requests("2"), func(p *corev1.Pod) { p.Spec.PriorityClassName = "high" }))
	waitFor(t, "the unprotected victim evicted and the preemptor nominated to n1", func() (bool, error) {
		p, err := k.pods.Get(k.ctx, "important", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.NominatedNodeName != "n1" && p.Spec.NodeName != "n1" {
			return false, fmt.Errorf("nominated %q node %q", p.Status.NominatedNodeName, p.Spec.NodeName)
		}
		v, err := k.pods.Get(k.ctx, "victim", metav1.GetOptions{})
		if err == nil && v.DeletionTimestamp == nil {
			return false, fmt.Errorf("victim not deleted")
		}
		if err == nil && !slices.ContainsFunc(v.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.DisruptionTarget }) {
			return false, fmt.Errorf("victim without DisruptionTarget: %+v", v.Status.Conditions)
		}
		return true, nil
	})
	if p, err := k.pods.Get(k.ctx, "protected", metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("the PDB-protected pod was preempted: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestScenarioSchedulingGates(t *testing.T) {
	k := newCluster(t, nil)
	k.node("n0", "4", nil)
	k.pod("gated", func(p *corev1.Pod) { p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}} })
	k.pod("free", nil)
	k.nodeOf("free")
	p, err := k.pods.Get(k.ctx, "gated", metav1.GetOptions{})
	if err != nil || p.Spec.NodeName != "" {
		t.Fatalf("gated pod bound: %v %v", p.Spec.NodeName, err)
	}
	if _, err := k.pods.Patch(k.ctx, "gated", types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/schedulingGates"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	k.nodeOf("gated")
}

func TestScenarioTwoProfiles(t *testing.T) {
	// "packer" scores MostAllocated (and nothing else), the default
	// profile LeastAllocated.
	cc, err := config.Decode([]byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: NodeResourcesFit}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`))
	if err != nil {
		t.Fatal(err)
	}
	k := newCluster(t, cc)
	k.node("busy", "4", nil)
	k.node("idle", "4", nil)
	k.pod("filler", all(requests("2"), func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: "busy"} }))
	k.nodeOf("filler")
	k.pod("packed", all(requests("1"), func(p *corev1.Pod) { p.Spec.SchedulerName = "packer" }))
	if n := k.nodeOf("packed"); n != "busy" {
		t.Errorf("packer profile put the pod on %s, want the busy node", n)
	}
	k.pod("spread", requests("1"))
	if n := k.nodeOf("spread"); n != "idle" {
		t.Errorf("default profile put the pod on %s, want the idle node", n)
	}
}
