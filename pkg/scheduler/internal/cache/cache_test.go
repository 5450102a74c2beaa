package cache

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/skiff-sh/skiff/pkg/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newTestCache(ttl time.Duration) (*Cache, *clock.Fake) {
	fc := clock.NewFake(t0)
	return New(Config{Clock: fc, AssumedPodTTL: ttl}), fc
}

// nodePods returns node → pod names counted on it, and the requested CPU.
func state(c *Cache) (map[string][]string, map[string]int64) {
	pods, cpu := map[string][]string{}, map[string]int64{}
	for name, ni := range c.Dump().Nodes {
		for _, pi := range ni.Pods {
			pods[name] = append(pods[name], pi.Pod.Name)
		}
		cpu[name] = ni.Requested.MilliCPU
	}
	return pods, cpu
}

func TestAssumedPods(t *testing.T) {
	const ttl = 10 * time.Second
	type step func(t *testing.T, c *Cache, fc *clock.Fake)
	assume := func(p *corev1.Pod) step {
		return func(t *testing.T, c *Cache, fc *clock.Fake) {
			if err := c.AssumePod(nil, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	finish := func(p *corev1.Pod) step {
		return func(t *testing.T, c *Cache, fc *clock.Fake) {
			if err := c.FinishBinding(nil, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	add := func(p *corev1.Pod) step {
		return func(t *testing.T, c *Cache, fc *clock.Fake) {
			if err := c.AddPod(nil, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	forget := func(p *corev1.Pod) step {
		return func(t *testing.T, c *Cache, fc *clock.Fake) {
			if err := c.ForgetPod(nil, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	// advance moves the clock and runs the expiry as Run's tick does.
	advance := func(d time.Duration) step {
		return func(t *testing.T, c *Cache, fc *clock.Fake) {
			fc.Step(d)
			c.cleanupAssumedPods(fc.Now())
		}
	}
	p1 := mkPod("p1", "n1", "1")
	p1OnN2 := mkPod("p1", "n2", "1")
	tests := []struct {
		name        string
		ttl         time.Duration
		steps       []step
		wantPods    map[string][]string
		wantAssumed bool
	}{
		{name: "assumed pod is counted", steps: []step{assume(p1)}, wantPods: map[string][]string{"n1": {"p1"}}, wantAssumed: true},
		{name: "not expired before binding finished", steps: []step{assume(p1), advance(time.Hour)}, wantPods: map[string][]string{"n1": {"p1"}}, wantAssumed: true},
		{name: "not expired at the TTL", steps: []step{assume(p1), finish(p1), advance(ttl)}, wantPods: map[string][]string{"n1": {"p1"}}, wantAssumed: true},
		{name: "expired after the TTL", steps: []step{assume(p1), finish(p1), advance(ttl + time.Second)}, wantPods: map[string][]string{}},
		{name: "TTL counts from FinishBinding", steps: []step{assume(p1), advance(time.Hour), finish(p1), advance(ttl)}, wantPods: map[string][]string{"n1": {"p1"}}, wantAssumed: true},
		{name: "negative TTL never expires", ttl: -1, steps: []step{assume(p1), finish(p1), advance(1000 * time.Hour)}, wantPods: map[string][]string{"n1": {"p1"}}, wantAssumed: true},
		{name: "default TTL is 15m", ttl: 0, steps: []step{assume(p1), finish(p1), advance(15 * time.Minute), advance(time.Second)}, wantPods: map[string][]string{}},
		{name: "Add confirms: no expiry", steps: []step{assume(p1), finish(p1), add(p1), advance(time.Hour)}, wantPods: map[string][]string{"n1": {"p1"}}},
		{name: "Add before FinishBinding confirms", steps: []step{assume(p1), add(p1), finish(p1), advance(time.Hour)}, wantPods: map[string][]string{"n1": {"p1"}}},
		{name: "Add on another node moves it", steps: []step{assume(p1), finish(p1), add(p1OnN2), advance(time.Hour)}, wantPods: map[string][]string{"n2": {"p1"}}},
		{name: "expired then Add counts it again", steps: []step{assume(p1), finish(p1), advance(ttl + time.Second), add(p1)}, wantPods: map[string][]string{"n1": {"p1"}}},
		{name: "forget removes it", steps: []step{assume(p1), forget(p1)}, wantPods: map[string][]string{}},
		{name: "forget after FinishBinding", steps: []step{assume(p1), finish(p1), forget(p1), advance(ttl + time.Second)}, wantPods: map[string][]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ttlCfg := tc.ttl
			if ttlCfg == 0 && !strings.HasPrefix(tc.name, "default") {
				ttlCfg = ttl
			}
			c, fc := newTestCache(ttlCfg)
			c.AddNode(nil, mkNode("n1", ""))
			c.AddNode(nil, mkNode("n2", ""))
			for _, s := range tc.steps {
				s(t, c, fc)
			}
			pods, _ := state(c)
			for n, ps := range pods {
				if len(ps) == 0 {
					delete(pods, n)
				}
			}
			if !equalMap(pods, tc.wantPods) {
				t.Errorf("pods = %v, want %v", pods, tc.wantPods)
			}
			assumed, err := c.IsAssumedPod(p1)
			if err != nil || assumed != tc.wantAssumed {
				t.Errorf("IsAssumedPod = %v, %v, want %v", assumed, err, tc.wantAssumed)
			}
			n, _ := c.PodCount()
			want := 0
			for _, ps := range tc.wantPods {
				want += len(ps)
			}
			if n != want {
				t.Errorf("PodCount = %d, want %d", n, want)
			}
		})
	}
}

func equalMap(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestPodErrors(t *testing.T) {
	c, _ := newTestCache(0)
	p := mkPod("p", "n1", "")
	if err := c.AssumePod(nil, mkPod("nouid", "n1", "")); err != nil {
		t.Fatal(err)
	}
	noUID := mkPod("x", "n1", "")
	noUID.UID = ""
	check := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want containing %q", what, err, want)
		}
	}
	check("assume without UID", c.AssumePod(nil, noUID), "cannot get cache key for pod with empty UID")
	check("assume without node", c.AssumePod(nil, mkPod("x", "", "")), "has no node name")
	check("update unknown", c.UpdatePod(nil, p, p), "is not added to scheduler cache, so cannot be updated")
	check("remove unknown", c.RemovePod(nil, p), "is not found in scheduler cache, so cannot be removed from it")
	check("forget unknown", c.ForgetPod(nil, p), "wasn't assumed so cannot be forgotten")
	_, err := c.GetPod(p)
	check("get unknown", err, "does not exist in scheduler cache")
	if err := c.AssumePod(nil, p); err != nil {
		t.Fatal(err)
	}
	check("assume twice", c.AssumePod(nil, p), "is in the cache, so can't be assumed")
	check("update assumed", c.UpdatePod(nil, p, p), "should not be updated")
	check("forget on other node", c.ForgetPod(nil, mkPod("p", "n2", "")), "was assumed on n2 but assigned to n1")
	if err := c.AddPod(nil, p); err != nil {
		t.Fatal(err)
	}
	check("add twice", c.AddPod(nil, p), "was already in added state")
	check("forget confirmed", c.ForgetPod(nil, p), "wasn't assumed so cannot be forgotten")
	check("remove unknown node", c.RemoveNode(nil, mkNode("zz", "")), `node zz is not found`)
}

func TestUpdateRemovePod(t *testing.T) {
	c, _ := newTestCache(0)
	c.AddNode(nil, mkNode("n1", ""))
	old := mkPod("p", "n1", "1")
	if err := c.AddPod(nil, old); err != nil {
		t.Fatal(err)
	}
	bigger := mkPod("p", "n1", "3")
	if err := c.UpdatePod(nil, old, bigger); err != nil {
		t.Fatal(err)
	}
	if _, cpu := state(c); cpu["n1"] != 3000 {
		t.Errorf("requested after update = %d, want 3000", cpu["n1"])
	}
	if got, _ := c.GetPod(old); got != bigger {
		t.Error("GetPod does not return the new version")
	}
	// The informer's last state may have lost spec.nodeName: the cached
	// version says where it is counted.
	gone := mkPod("p", "", "3")
	if err := c.RemovePod(nil, gone); err != nil {
		t.Fatal(err)
	}
	if pods, cpu := state(c); len(pods["n1"]) != 0 || cpu["n1"] != 0 {
		t.Errorf("after remove: pods %v cpu %v", pods, cpu)
	}
	if n, _ := c.PodCount(); n != 0 {
		t.Errorf("PodCount = %d", n)
	}
}

func TestNodes(t *testing.T) {
	c, _ := newTestCache(0)
	// A pod of a node not known yet is kept on a node-less NodeInfo.
	p := mkPod("early", "n1", "1")
	if err := c.AddPod(nil, p); err != nil {
		t.Fatal(err)
	}
	d := c.Dump()
	if ni := d.Nodes["n1"]; ni == nil || ni.Node() != nil || len(ni.Pods) != 1 {
		t.Fatalf("node-less NodeInfo = %v", ni)
	}
	s := NewEmptySnapshot()
	if err := c.UpdateSnapshot(nil, s); err != nil {
		t.Fatal(err)
	}
	if s.NumNodes() != 0 {
		t.Errorf("snapshot shows a node-less NodeInfo")
	}
	ni := c.AddNode(nil, mkNode("n1", "a"))
	if ni.NodeName() != "n1" || len(ni.Pods) != 1 || ni.Requested.MilliCPU != 1000 || ni.Allocatable.MilliCPU != 4000 {
		t.Errorf("AddNode returned %v", ni)
	}
	n1 := mkNode("n1", "a")
	n1.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("8")
	if ni := c.UpdateNode(nil, mkNode("n1", "a"), n1); ni.Allocatable.MilliCPU != 8000 {
		t.Errorf("UpdateNode allocatable = %d", ni.Allocatable.MilliCPU)
	}
	// Removing the node keeps the NodeInfo while pods remain.
	if err := c.RemoveNode(nil, n1); err != nil {
		t.Fatal(err)
	}
	if c.NodeCount() != 1 {
		t.Errorf("NodeCount after removing a node with pods = %d, want 1", c.NodeCount())
	}
	if err := c.UpdateSnapshot(nil, s); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("n1"); err == nil || s.NumNodes() != 0 {
		t.Error("removed node still in the snapshot")
	}
	if err := c.RemovePod(nil, p); err != nil {
		t.Fatal(err)
	}
	if c.NodeCount() != 0 {
		t.Errorf("NodeCount after its last pod left = %d, want 0", c.NodeCount())
	}
	if err := c.RemoveNode(nil, n1); err == nil {
		t.Error("removing a removed node succeeded")
	}
}

func TestImageStates(t *testing.T) {
	img := func(size int64, names ...string) corev1.ContainerImage {
		return corev1.ContainerImage{Names: names, SizeBytes: size}
	}
	c, _ := newTestCache(0)
	c.AddNode(nil, mkNode("n1", "", img(10, "a:1", "a@sha"), img(20, "b:1")))
	c.AddNode(nil, mkNode("n2", "", img(10, "a:1")))
	c.AddNode(nil, mkNode("n3", ""))
	s := NewEmptySnapshot()
	numNodes := func(node, image string) int {
		t.Helper()
		ni, err := s.Get(node)
		if err != nil {
			t.Fatal(err)
		}
		if st := ni.ImageStates[image]; st != nil {
			return st.NumNodes
		}
		return 0
	}
	if err := c.UpdateSnapshot(nil, s); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Get("n1")
	beforeStates := before.ImageStates
	for _, tc := range []struct {
		node, image string
		want        int
	}{{"n1", "a:1", 2}, {"n1", "a@sha", 1}, {"n1", "b:1", 1}, {"n2", "a:1", 2}, {"n3", "a:1", 0}} {
		if got := numNodes(tc.node, tc.image); got != tc.want {
			t.Errorf("%s %s NumNodes = %d, want %d", tc.node, tc.image, got, tc.want)
		}
	}
	if st := before.ImageStates["b:1"]; st.Size != 20 {
		t.Errorf("b:1 size = %d", st.Size)
	}
	// n3 pulls a:1: every node holding it sees 3.
	c.UpdateNode(nil, mkNode("n3", ""), mkNode("n3", "", img(10, "a:1")))
	if err := c.UpdateSnapshot(nil, s); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if got := numNodes(n, "a:1"); got != 3 {
			t.Errorf("%s a:1 NumNodes = %d, want 3", n, got)
		}
	}
	if beforeStates["a:1"].NumNodes != 2 {
		t.Error("an earlier snapshot's image states were modified")
	}
	// n2 is removed: 2 again.
	if err := c.RemoveNode(nil, mkNode("n2", "", img(10, "a:1"))); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateSnapshot(nil, s); err != nil {
		t.Fatal(err)
	}
	if got := numNodes("n1", "a:1"); got != 2 {
		t.Errorf("after removal n1 a:1 NumNodes = %d, want 2", got)
	}
	// A heartbeat with the same images does not touch other nodes.
	n1Before, _ := s.Get("n1")
	gen := n1Before.Generation
	c.UpdateNode(nil, mkNode("n3", "", img(10, "a:1")), mkNode("n3", "", img(10, "a:1")))
	if err := c.UpdateSnapshot(nil, s); err != nil {
		t.Fatal(err)
	}
	if n1After, _ := s.Get("n1"); n1After.Generation != gen {
		t.Error("n1 re-copied after a heartbeat of n3 that changed no image")
	}
}

func TestRun(t *testing.T) {
	c, fc := newTestCache(10 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, func() bool { return fc.Waiters() == 1 })
	p := mkPod("p", "n1", "")
	if err := c.AssumePod(nil, p); err != nil {
		t.Fatal(err)
	}
	if err := c.FinishBinding(nil, p); err != nil {
		t.Fatal(err)
	}
	fc.Step(5 * time.Second)
	waitFor(t, func() bool { return fc.Waiters() == 1 })
	if ok, _ := c.IsAssumedPod(p); !ok {
		t.Fatal("expired before the TTL")
	}
	waitFor(t, func() bool {
		fc.Step(time.Second)
		ok, _ := c.IsAssumedPod(p)
		return !ok
	})
	if now := fc.Now(); now.Sub(t0) < 11*time.Second {
		t.Errorf("expired at %v, before the TTL", now.Sub(t0))
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := New(Config{Clock: clock.NewFake(t0), Registerer: reg})
	c.AddNode(nil, mkNode("n1", ""))
	if err := c.AddPod(nil, mkPod("a", "n1", "")); err != nil {
		t.Fatal(err)
	}
	if err := c.AssumePod(nil, mkPod("b", "n1", "")); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "scheduler_cache_size" || mf.GetType().String() != "GAUGE" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got[m.GetLabel()[0].GetName()+"="+m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{"type=assumed_pods": 1, "type=nodes": 1, "type=pods": 2}
	if len(got) != len(want) {
		t.Errorf("scheduler_cache_size = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("scheduler_cache_size{%s} = %v, want %v", k, got[k], v)
		}
	}
}
