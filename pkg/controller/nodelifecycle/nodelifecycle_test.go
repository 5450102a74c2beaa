package nodelifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

func newClient(t *testing.T, env *testenv.Environment) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last: %s", what, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// taintString renders taints as "key:Effect" sorted.
func taintString(ts []corev1.Taint) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Key+":"+string(t.Effect))
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}

func cond(t corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
	return corev1.NodeCondition{Type: t, Status: s}
}

func TestNoScheduleDiff(t *testing.T) {
	const (
		notReady    = corev1.TaintNodeNotReady + ":NoSchedule"
		unreachable = corev1.TaintNodeUnreachable + ":NoSchedule"
	)
	tests := []struct {
		name    string
		conds   []corev1.NodeCondition
		unsched bool
		taints  []corev1.Taint
		wantAdd string
		wantDel string
	}{
		{name: "no conditions: admission's not-ready goes", taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}},
			wantDel: notReady},
		{name: "ready: nothing", conds: []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionTrue)}},
		{name: "ready false", conds: []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionFalse)}, wantAdd: notReady},
		{name: "ready unknown replaces not-ready", conds: []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionUnknown)},
			taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}, wantAdd: unreachable, wantDel: notReady},
		{name: "pressures and network", conds: []corev1.NodeCondition{
			cond(corev1.NodeReady, corev1.ConditionTrue), cond(corev1.NodeMemoryPressure, corev1.ConditionTrue),
			cond(corev1.NodeDiskPressure, corev1.ConditionTrue), cond(corev1.NodePIDPressure, corev1.ConditionTrue),
			cond(corev1.NodeNetworkUnavailable, corev1.ConditionTrue)},
			wantAdd: "node.kubernetes.io/disk-pressure:NoSchedule,node.kubernetes.io/memory-pressure:NoSchedule,node.kubernetes.io/network-unavailable:NoSchedule,node.kubernetes.io/pid-pressure:NoSchedule"},
		{name: "pressure false removes its taint", conds: []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionTrue), cond(corev1.NodeMemoryPressure, corev1.ConditionFalse)},
			taints: []corev1.Taint{{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}}, wantDel: "node.kubernetes.io/memory-pressure:NoSchedule"},
		{name: "unschedulable", conds: []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionTrue)}, unsched: true, wantAdd: "node.kubernetes.io/unschedulable:NoSchedule"},
		{name: "schedulable again", conds: []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionTrue)},
			taints: []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}, wantDel: "node.kubernetes.io/unschedulable:NoSchedule"},
		{name: "other taints and NoExecute ones untouched", conds: []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionTrue)},
			taints: []corev1.Taint{
				{Key: "example.com/gpu", Effect: corev1.TaintEffectNoSchedule},
				{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
				{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectPreferNoSchedule},
			}},
		{name: "already in step", conds: []corev1.NodeCondition{cond(corev1.NodeReady, corev1.ConditionFalse)}, unsched: true,
			taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule, Value: "x"},
				{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: tt.unsched, Taints: tt.taints}, Status: corev1.NodeStatus{Conditions: tt.conds}}
			add, del := noScheduleDiff(n)
			if got := taintString(add); got != tt.wantAdd {
				t.Errorf("add = %q, want %q", got, tt.wantAdd)
			}
			if got := taintString(del); got != tt.wantDel {
				t.Errorf("del = %q, want %q", got, tt.wantDel)
			}
		})
	}
}

type fixture struct {
	t     *testing.T
	ctx   context.Context
	clk   *clock.Fake
	c     *client.Client
	nodes *client.Typed[*corev1.Node, *corev1.NodeList]
}

func newFixture(t *testing.T) *fixture {
	clk := clock.NewFake(t0)
	env := testenv.StartT(t, testenv.Config{Clock: clk})
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, env)
	return &fixture{t: t, ctx: context.Background(), clk: clk, c: c, nodes: client.For[*corev1.Node, *corev1.NodeList](c)}
}

// run starts a controller (own informers) until the test ends.
func (f *fixture) run(cfg Config) *Controller {
	f.t.Helper()
	cfg.Client, cfg.Clock = f.c, f.clk
	cfg.Informers = informers.NewSharedInformerFactory(f.c, 0)
	ctrl, err := New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	cfg.Informers.Start(ctx)
	go func() { defer close(done); _ = ctrl.Run(ctx) }()
	f.t.Cleanup(func() { cancel(); <-done; cfg.Informers.Shutdown() })
	return ctrl
}

func (f *fixture) createNode(name string, taints ...corev1.Taint) *corev1.Node {
	f.t.Helper()
	n, err := f.nodes.Create(f.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) setConditions(name string, conds ...corev1.NodeCondition) {
	f.t.Helper()
	now := metav1.Time{Time: f.clk.Now()}
	for i := range conds {
		conds[i].LastHeartbeatTime, conds[i].LastTransitionTime = now, now
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.nodes.Patch(f.ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		f.t.Fatal(err)
	}
}

// setUnschedulable sets spec.unschedulable with a merge patch (the
// controller writes the node's taints meanwhile).
func (f *fixture) setUnschedulable(name string, on bool) {
	f.t.Helper()
	body := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
	if _, err := f.nodes.Patch(f.ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) waitTaints(name, want string) *corev1.Node {
	f.t.Helper()
	var n *corev1.Node
	eventually(f.t, fmt.Sprintf("node %s tainted %q", name, want), func() (bool, string) {
		var err error
		if n, err = f.nodes.Get(f.ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		got := taintString(n.Spec.Taints)
		return got == want, got
	})
	return n
}

// TestNoScheduleTainting: a node created through the API is tainted
// not-ready by admission; the running controller takes the taint off once
// it reports Ready, follows its pressure conditions and spec.unschedulable,
// and never touches a taint it does not own.
func TestNoScheduleTainting(t *testing.T) {
	f := newFixture(t)
	f.run(Config{})
	gpu := corev1.Taint{Key: "example.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	n := f.createNode("n1", gpu)
	if got := taintString(n.Spec.Taints); got != "example.com/gpu:NoSchedule,node.kubernetes.io/not-ready:NoSchedule" {
		t.Fatalf("taints after create = %q, want admission's not-ready too", got)
	}
	f.setConditions("n1", cond(corev1.NodeReady, corev1.ConditionFalse))
	// Ready False: not-ready stays.
	f.setConditions("n1", cond(corev1.NodeReady, corev1.ConditionTrue))
	f.waitTaints("n1", "example.com/gpu:NoSchedule")

	f.setConditions("n1", cond(corev1.NodeReady, corev1.ConditionTrue), cond(corev1.NodeMemoryPressure, corev1.ConditionTrue), cond(corev1.NodeDiskPressure, corev1.ConditionTrue))
	n = f.waitTaints("n1", "example.com/gpu:NoSchedule,node.kubernetes.io/disk-pressure:NoSchedule,node.kubernetes.io/memory-pressure:NoSchedule")
	for _, tn := range n.Spec.Taints {
		if tn.Key == corev1.TaintNodeMemoryPressure && (tn.TimeAdded == nil || !tn.TimeAdded.Time.Equal(t0)) {
			t.Errorf("memory-pressure timeAdded = %v, want the clock's %v", tn.TimeAdded, t0)
		}
		if tn.Key == gpu.Key && tn.Value != "true" {
			t.Errorf("foreign taint changed: %+v", tn)
		}
	}

	f.setUnschedulable("n1", true)
	f.waitTaints("n1", "example.com/gpu:NoSchedule,node.kubernetes.io/disk-pressure:NoSchedule,node.kubernetes.io/memory-pressure:NoSchedule,node.kubernetes.io/unschedulable:NoSchedule")

	f.setConditions("n1", cond(corev1.NodeReady, corev1.ConditionUnknown), cond(corev1.NodeMemoryPressure, corev1.ConditionFalse), cond(corev1.NodeNetworkUnavailable, corev1.ConditionTrue))
	f.waitTaints("n1", "example.com/gpu:NoSchedule,node.kubernetes.io/network-unavailable:NoSchedule,node.kubernetes.io/unreachable:NoSchedule,node.kubernetes.io/unschedulable:NoSchedule")

	f.setUnschedulable("n1", false)
	f.setConditions("n1", cond(corev1.NodeReady, corev1.ConditionFalse), cond(corev1.NodePIDPressure, corev1.ConditionTrue))
	f.waitTaints("n1", "example.com/gpu:NoSchedule,node.kubernetes.io/not-ready:NoSchedule,node.kubernetes.io/pid-pressure:NoSchedule")
}

// TestUpdateTaintsConflict: taints computed from a stale node are written
// after re-reading it, keeping what was added meanwhile.
func TestUpdateTaintsConflict(t *testing.T) {
	f := newFixture(t)
	ctrl, err := New(Config{Client: f.c, Informers: informers.NewSharedInformerFactory(f.c, 0), Clock: f.clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctrl.queue.ShutDown)
	t.Cleanup(ctrl.podQueue.ShutDown)
	stale := f.createNode("n1")
	fresh := stale.DeepCopy()
	fresh.Spec.Taints = append(fresh.Spec.Taints, corev1.Taint{Key: "example.com/late", Effect: corev1.TaintEffectNoExecute})
	if _, err := f.nodes.Update(f.ctx, fresh, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	add := []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}
	del := []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}
	if err := ctrl.updateTaints(f.ctx, stale, add, del); err != nil {
		t.Fatal(err)
	}
	n, err := f.nodes.Get(f.ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := taintString(n.Spec.Taints), "example.com/late:NoExecute,node.kubernetes.io/unschedulable:NoSchedule"; got != want {
		t.Errorf("taints = %q, want %q", got, want)
	}
}

// TestReconcileNodeLabels: the beta os/arch labels follow the GA ones.
func TestReconcileNodeLabels(t *testing.T) {
	f := newFixture(t)
	f.run(Config{})
	if _, err := f.nodes.Create(f.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		corev1.LabelOSStable: "linux", corev1.LabelArchStable: "arm64", "beta.kubernetes.io/arch": "amd64", "other": "x"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "beta labels reconciled", func() (bool, string) {
		n, err := f.nodes.Get(f.ctx, "n1", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		l := n.Labels
		return l["beta.kubernetes.io/os"] == "linux" && l["beta.kubernetes.io/arch"] == "arm64" && l["other"] == "x", fmt.Sprint(l)
	})
}
