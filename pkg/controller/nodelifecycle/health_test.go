package nodelifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
)

// monitorFixture: a controller whose informers run but whose passes the
// test calls itself, on the fake clock.
type monitorFixture struct {
	*fixture
	ctrl *Controller
	rec  *record.FakeRecorder
}

func newMonitorFixture(t *testing.T, opts ...func(*Config)) *monitorFixture {
	f := newFixture(t)
	inf := informers.NewSharedInformerFactory(f.c, 0)
	rec := record.NewFakeRecorder(100)
	cfg := Config{Client: f.c, Informers: inf, Clock: f.clk, Recorder: rec}
	for _, o := range opts {
		o(&cfg)
	}
	ctrl, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context_(f)
	inf.Start(ctx)
	t.Cleanup(func() { cancel(); inf.Shutdown(); ctrl.queue.ShutDown(); ctrl.podQueue.ShutDown() })
	inf.WaitForCacheSync(ctx)
	return &monitorFixture{fixture: f, ctrl: ctrl, rec: rec}
}

// heartbeat posts Ready=status with a heartbeat at the clock's time (the
// transition time kept when the status does not change).
func (f *monitorFixture) heartbeat(name string, status corev1.ConditionStatus) {
	f.t.Helper()
	n, err := f.nodes.Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	now := metav1.Time{Time: f.clk.Now()}
	transition := now
	if c := readyCondition(&n.Status); c != nil && c.Status == status {
		transition = c.LastTransitionTime
	}
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: status, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: transition}}}})
	if _, err := f.nodes.Patch(f.ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		f.t.Fatal(err)
	}
}

// renewLease creates or renews the node's Lease at the clock's time.
func (f *monitorFixture) renewLease(name string) {
	f.t.Helper()
	leases := client.For[*coordinationv1.Lease, *coordinationv1.LeaseList](f.c).Namespace(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(f.clk.Now())
	l, err := leases.Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		holder, dur := name, int32(40)
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now}}
		if _, err := leases.Create(f.ctx, l, metav1.CreateOptions{}); err != nil {
			f.t.Fatal(err)
		}
	} else {
		l.Spec.RenewTime = &now
		if _, err := leases.Update(f.ctx, l, metav1.UpdateOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
	eventually(f.t, "lease cached", func() (bool, string) {
		got, err := f.ctrl.leaseIn.Lister().Namespace(corev1.NamespaceNodeLease).Get(name)
		return err == nil && got.Spec.RenewTime != nil && got.Spec.RenewTime.Equal(&now), fmt.Sprint(got)
	})
}

// pass waits until the caches hold the server's nodes, then runs one
// health pass and one NoExecute tainting pass.
func (f *monitorFixture) pass() {
	f.t.Helper()
	list, err := f.nodes.List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, n := range list.Items {
		eventually(f.t, "node "+n.Name+" cached", func() (bool, string) {
			got, err := f.ctrl.nodeIn.Lister().Get(n.Name)
			return err == nil && got.ResourceVersion == n.ResourceVersion, fmt.Sprint(err)
		})
	}
	if err := f.ctrl.MonitorNodeHealth(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	f.ctrl.NoExecuteTaintingPass(f.ctx)
}

// conditions renders a node's conditions as "Type=Status(Reason)".
func (f *monitorFixture) conditions(name string) string {
	f.t.Helper()
	n, err := f.nodes.Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var s []string
	for _, c := range n.Status.Conditions {
		s = append(s, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return strings.Join(s, " ")
}

func (f *monitorFixture) taints(name string) string {
	f.t.Helper()
	n, err := f.nodes.Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return taintString(n.Spec.Taints)
}

func (f *monitorFixture) want(what, got, want string) {
	f.t.Helper()
	if got != want {
		f.t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

const (
	unreachableNE = "node.kubernetes.io/unreachable:NoExecute"
	notReadyNE    = "node.kubernetes.io/not-ready:NoExecute"
	admissionNS   = "node.kubernetes.io/not-ready:NoSchedule" // admission's; the NoSchedule workers do not run here
)

// TestSilentKubelet: a node whose kubelet stops posting is marked Unknown
// after the grace period (50s), not before; its Ready pod is marked not
// Ready; one pass later it is tainted unreachable:NoExecute; when the
// kubelet posts Ready again the taint goes. A second node keeps posting
// (so the zone is not fully disrupted) and is never touched.
func TestSilentKubelet(t *testing.T) {
	f := newMonitorFixture(t)
	f.createNode("n1")
	f.createNode("n2")
	f.heartbeat("n1", corev1.ConditionTrue)
	f.heartbeat("n2", corev1.ConditionTrue)
	pods := client.For[*corev1.Pod, *corev1.PodList](f.c).Namespace("default")
	p, err := pods.Create(f.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := pods.UpdateStatus(f.ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod cached", func() (bool, string) {
		got, err := f.ctrl.podIn.Lister().Namespace("default").Get("p1")
		return err == nil && len(got.Status.Conditions) > 0, fmt.Sprint(err)
	})
	f.pass()
	for _, step := range []time.Duration{20 * time.Second, 20 * time.Second, 10 * time.Second} {
		f.clk.Step(step)
		f.heartbeat("n2", corev1.ConditionTrue)
		f.pass()
		f.want(fmt.Sprintf("n1 at %v", f.clk.Since(t0)), f.conditions("n1"), "Ready=True(KubeletReady)")
	}
	f.clk.Step(time.Second) // 51s > 50s
	f.heartbeat("n2", corev1.ConditionTrue)
	f.pass()
	f.want("n1 after the grace period", f.conditions("n1"),
		"Ready=Unknown(NodeStatusUnknown) MemoryPressure=Unknown(NodeStatusNeverUpdated) DiskPressure=Unknown(NodeStatusNeverUpdated) PIDPressure=Unknown(NodeStatusNeverUpdated)")
	n, _ := f.nodes.Get(f.ctx, "n1", metav1.GetOptions{})
	if c := readyCondition(&n.Status); c.Message != "Kubelet stopped posting node status." || !c.LastTransitionTime.Time.Equal(f.clk.Now()) {
		t.Errorf("Ready = %+v", c)
	}
	f.want("n2", f.conditions("n2"), "Ready=True(KubeletReady)")
	got, err := pods.Get(f.ctx, "p1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Errorf("pod conditions = %+v, want Ready False", got.Status.Conditions)
	}
	f.want("n1 taints right after", f.taints("n1"), admissionNS)

	f.clk.Step(5 * time.Second)
	f.heartbeat("n2", corev1.ConditionTrue)
	f.pass()
	f.want("n1 taints one pass later", f.taints("n1"), admissionNS+","+unreachableNE)
	f.want("n2 taints", f.taints("n2"), admissionNS)

	f.clk.Step(5 * time.Second)
	f.heartbeat("n1", corev1.ConditionTrue)
	f.heartbeat("n2", corev1.ConditionTrue)
	f.pass()
	f.want("n1 taints when Ready again", f.taints("n1"), admissionNS)

	// Ready False posted by the kubelet: not-ready:NoExecute.
	f.clk.Step(5 * time.Second)
	f.heartbeat("n1", corev1.ConditionFalse)
	f.heartbeat("n2", corev1.ConditionTrue)
	f.pass()
	f.want("n1 taints with Ready False", f.taints("n1"), notReadyNE+","+admissionNS)
}

// TestLeaseKeepsNodeAlive: a kubelet that only renews its Lease stays
// Ready; once the renewals stop too, the grace period runs from the last
// one.
func TestLeaseKeepsNodeAlive(t *testing.T) {
	f := newMonitorFixture(t)
	f.createNode("n1")
	f.heartbeat("n1", corev1.ConditionTrue)
	f.renewLease("n1")
	f.pass()
	for range 12 {
		f.clk.Step(10 * time.Second)
		f.renewLease("n1")
		f.pass()
	}
	f.want("n1 after 2m of Lease renewals", f.conditions("n1"), "Ready=True(KubeletReady)")
	f.clk.Step(50 * time.Second)
	f.pass()
	f.want("n1 50s after the last renewal", f.conditions("n1"), "Ready=True(KubeletReady)")
	f.clk.Step(time.Second)
	f.pass()
	if got := f.conditions("n1"); !strings.HasPrefix(got, "Ready=Unknown(NodeStatusUnknown)") {
		t.Errorf("n1 51s after the last renewal: %s", got)
	}
}

// TestNeverPosted: a node that never posted a status is given the startup
// grace period (60s) from its creation, then all four conditions are
// Unknown, NodeStatusNeverUpdated. Alone in its zone (full disruption:
// every node is down) it is never tainted NoExecute.
func TestNeverPosted(t *testing.T) {
	f := newMonitorFixture(t)
	f.createNode("n1")
	f.pass()
	f.clk.Step(60 * time.Second)
	f.pass()
	f.want("n1 at 60s", f.conditions("n1"), "")
	f.clk.Step(time.Second)
	f.pass()
	f.want("n1 at 61s", f.conditions("n1"),
		"Ready=Unknown(NodeStatusNeverUpdated) MemoryPressure=Unknown(NodeStatusNeverUpdated) DiskPressure=Unknown(NodeStatusNeverUpdated) PIDPressure=Unknown(NodeStatusNeverUpdated)")
	n, _ := f.nodes.Get(f.ctx, "n1", metav1.GetOptions{})
	if c := readyCondition(&n.Status); c.Message != "Kubelet never posted node status." || !c.LastHeartbeatTime.Equal(&n.CreationTimestamp) {
		t.Errorf("Ready = %+v", c)
	}
	for range 5 {
		f.clk.Step(5 * time.Second)
		f.pass()
	}
	f.want("the only node, down, never tainted NoExecute", f.taints("n1"), admissionNS)
}

// TestZoneDisruption: in a zone of five nodes two silent ones are tainted
// one every 10s (--node-eviction-rate 0.1); in a zone of four with three
// silent (partial disruption, small cluster) none is; when every node is
// down the taints come off.
func TestZoneDisruption(t *testing.T) {
	f := newMonitorFixture(t)
	zone := func(name, z string) {
		n, err := f.nodes.Create(f.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{corev1.LabelTopologyZone: z}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f.heartbeat(n.Name, corev1.ConditionTrue)
	}
	for i := range 5 {
		zone(fmt.Sprintf("a%d", i), "a")
	}
	for i := range 4 {
		zone(fmt.Sprintf("b%d", i), "b")
	}
	alive := []string{"a2", "a3", "a4", "b3"}
	f.pass()
	tick := func(d time.Duration) {
		f.clk.Step(d)
		for _, n := range alive {
			f.heartbeat(n, corev1.ConditionTrue)
		}
		f.pass()
	}
	tick(51 * time.Second) // a0 a1 b0 b1 b2 Unknown
	tick(5 * time.Second)  // queued; a0 tainted at once
	tainted := func() string {
		var s []string
		for _, n := range []string{"a0", "a1", "b0", "b1", "b2"} {
			if strings.Contains(f.taints(n), unreachableNE) {
				s = append(s, n)
			}
		}
		return strings.Join(s, " ")
	}
	f.want("after the first tainting pass", tainted(), "a0")
	tick(5 * time.Second)
	f.want("5s later", tainted(), "a0")
	tick(5 * time.Second)
	f.want("10s later", tainted(), "a0 a1")
	tick(30 * time.Second)
	f.want("zone b partially disrupted: never", tainted(), "a0 a1")
	za, zb := ":\x00:a", ":\x00:b"
	for _, m := range []struct {
		name      string
		got, want float64
	}{
		{"evictions_total a", metricValue(f.ctrl.metrics.evictions.WithLabelValues(za)), 2},
		{"evictions_total b", metricValue(f.ctrl.metrics.evictions.WithLabelValues(zb)), 0},
		{"zone_size b", metricValue(f.ctrl.metrics.zoneSize.WithLabelValues(zb)), 4},
		{"unhealthy_nodes_in_zone b", metricValue(f.ctrl.metrics.unhealthyNodes.WithLabelValues(zb)), 3},
		{"zone_health a", metricValue(f.ctrl.metrics.zoneHealth.WithLabelValues(za)), 60},
	} {
		if m.got != m.want {
			t.Errorf("node_collector_%s = %v, want %v", m.name, m.got, m.want)
		}
	}

	alive = nil
	tick(51 * time.Second) // everyone Unknown
	tick(5 * time.Second)
	f.want("all nodes down: master disruption mode", tainted(), "")
}

func context_(f *fixture) (context.Context, context.CancelFunc) { return context.WithCancel(f.ctx) }

// TestEvictionRateZero: --node-eviction-rate=0 (a negative Config rate)
// never taints NoExecute, though the node is marked Unknown.
func TestEvictionRateZero(t *testing.T) {
	f := newMonitorFixture(t, func(c *Config) { c.NodeEvictionRate = -1 })
	f.createNode("n1")
	f.createNode("n2")
	f.heartbeat("n1", corev1.ConditionTrue)
	f.heartbeat("n2", corev1.ConditionTrue)
	f.pass()
	for range 20 {
		f.clk.Step(5 * time.Second)
		f.heartbeat("n2", corev1.ConditionTrue)
		f.pass()
	}
	if got := f.conditions("n1"); !strings.HasPrefix(got, "Ready=Unknown") {
		t.Errorf("n1 conditions %s, want Ready Unknown", got)
	}
	f.want("n1 taints", f.taints("n1"), admissionNS)
}

// metricValue reads a gauge or counter.
func metricValue(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		return -1
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}

// TestPodBoundToNotReadyNode: a pod bound to a node that is not Ready has
// its Ready condition set False (upstream's processPod); on a Ready node
// it is left alone.
func TestPodBoundToNotReadyNode(t *testing.T) {
	f := newMonitorFixture(t)
	f.createNode("down")
	f.createNode("up")
	f.heartbeat("down", corev1.ConditionFalse)
	f.heartbeat("up", corev1.ConditionTrue)
	pods := client.For[*corev1.Pod, *corev1.PodList](f.c).Namespace("default")
	for _, node := range []string{"down", "up"} {
		p, err := pods.Create(f.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-" + node, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if _, err := pods.UpdateStatus(f.ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.pass() // caches hold the nodes
	for _, node := range []string{"down", "up"} {
		eventually(t, "pod cached", func() (bool, string) {
			got, err := f.ctrl.podIn.Lister().Namespace("default").Get("on-" + node)
			return err == nil && len(got.Status.Conditions) > 0, fmt.Sprint(err)
		})
		if err := f.ctrl.syncPod(f.ctx, "default/on-"+node); err != nil {
			t.Fatal(err)
		}
	}
	for node, want := range map[string]corev1.ConditionStatus{"down": corev1.ConditionFalse, "up": corev1.ConditionTrue} {
		p, err := pods.Get(f.ctx, "on-"+node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Status.Conditions[0].Status; got != want {
			t.Errorf("pod on %s: Ready %s, want %s", node, got, want)
		}
	}
}
