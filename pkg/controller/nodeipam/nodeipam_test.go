package nodeipam

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

type fixture struct {
	t     *testing.T
	ctx   context.Context
	c     *client.Client
	nodes *client.Typed[*corev1.Node, *corev1.NodeList]
	rec   *record.FakeRecorder
}

func newFixture(t *testing.T) *fixture {
	env := testenv.StartT(t, testenv.Config{Clock: clock.NewFake(t0)})
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: context.Background(), c: c, nodes: client.For[*corev1.Node, *corev1.NodeList](c), rec: record.NewFakeRecorder(10)}
}

// controller builds a controller over its own started informers, without
// running its workers: tests call syncNode themselves.
func (f *fixture) controller(cfg Config) *Controller {
	f.t.Helper()
	cfg.Client, cfg.Clock, cfg.Recorder = f.c, clock.NewFake(t0), f.rec
	cfg.Informers = informers.NewSharedInformerFactory(f.c, 0)
	ctrl, err := New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	cfg.Informers.Start(ctx)
	f.t.Cleanup(func() { cancel(); cfg.Informers.Shutdown() })
	cfg.Informers.WaitForCacheSync(ctx)
	return ctrl
}

func (f *fixture) createNode(name string, cidrs ...string) {
	f.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDRs: cidrs}}
	if _, err := f.nodes.Create(f.ctx, n, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// sync waits until the controller's cache has the node in the state want
// accepts, then syncs it.
func (f *fixture) sync(c *Controller, name string) error {
	f.t.Helper()
	eventually(f.t, "node "+name+" in the cache", func() bool { _, err := c.nodeIn.Lister().Get(name); return err == nil })
	return c.syncNode(f.ctx, name)
}

func (f *fixture) podCIDRs(name string) string {
	f.t.Helper()
	n, err := f.nodes.Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(n.Spec.PodCIDRs) > 0 && n.Spec.PodCIDR != n.Spec.PodCIDRs[0] {
		f.t.Errorf("node %s: podCIDR %s, podCIDRs %v", name, n.Spec.PodCIDR, n.Spec.PodCIDRs)
	}
	return strings.Join(n.Spec.PodCIDRs, ",")
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func prefixes(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}

// A node that had a CIDR before the controller started keeps it and its
// CIDR is not handed out again; new nodes get the next free ones.
func TestAllocateSkipsExistingCIDRs(t *testing.T) {
	f := newFixture(t)
	f.createNode("old", "10.42.0.0/24")
	c := f.controller(Config{ClusterCIDRs: prefixes("10.42.0.0/16"), NodeCIDRMaskSizes: []int{24}})
	if err := c.OccupyExisting(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"old", "a", "b"} {
		if n != "old" {
			f.createNode(n)
		}
		if err := f.sync(c, n); err != nil {
			t.Fatalf("sync %s: %v", n, err)
		}
	}
	for n, want := range map[string]string{"old": "10.42.0.0/24", "a": "10.42.1.0/24", "b": "10.42.2.0/24"} {
		if got := f.podCIDRs(n); got != want {
			t.Errorf("node %s: %s, want %s", n, got, want)
		}
	}
	if got := c.Sets()[0].Allocated(); got != 3 {
		t.Errorf("allocated %d, want 3", got)
	}
}

// Dual stack: one CIDR of each family, in the cluster CIDRs' order.
func TestAllocateDualStack(t *testing.T) {
	f := newFixture(t)
	c := f.controller(Config{ClusterCIDRs: prefixes("10.42.0.0/16", "fd00:42::/56")})
	f.createNode("a")
	if err := f.sync(c, "a"); err != nil {
		t.Fatal(err)
	}
	if got := f.podCIDRs("a"); got != "10.42.0.0/24,fd00:42::/64" {
		t.Errorf("podCIDRs %s", got)
	}
}

// An exhausted range leaves the node without a CIDR, with upstream's
// CIDRNotAvailable event; deleting a node gives its CIDR back.
func TestExhaustionAndRelease(t *testing.T) {
	f := newFixture(t)
	c := f.controller(Config{ClusterCIDRs: prefixes("10.0.0.0/23"), NodeCIDRMaskSizes: []int{24}})
	for _, n := range []string{"a", "b"} {
		f.createNode(n)
		if err := f.sync(c, n); err != nil {
			t.Fatal(err)
		}
	}
	f.createNode("c")
	err := f.sync(c, "c")
	if err == nil || !strings.Contains(err.Error(), ErrCIDRRangeNoCIDRsRemaining.Error()) {
		t.Fatalf("third node: %v", err)
	}
	select {
	case e := <-f.rec.Events:
		if e != "Normal CIDRNotAvailable Node c status is now: CIDRNotAvailable" {
			t.Errorf("event %q", e)
		}
	default:
		t.Fatal("no CIDRNotAvailable event")
	}
	if got := f.podCIDRs("c"); got != "" {
		t.Errorf("node c got %s", got)
	}
	if err := f.nodes.Delete(f.ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a's CIDR released", func() bool { return c.Sets()[0].Allocated() == 1 })
	if err := c.syncNode(f.ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if got := f.podCIDRs("c"); got != "10.0.0.0/24" {
		t.Errorf("node c after a's deletion: %q", got)
	}
}

// The service range is never given to a node when it overlaps the
// cluster CIDR.
func TestServiceCIDRFilteredOut(t *testing.T) {
	f := newFixture(t)
	c := f.controller(Config{ClusterCIDRs: prefixes("10.0.0.0/22"), ServiceCIDRs: prefixes("10.0.1.0/24", "10.96.0.0/12")})
	var got []string
	for _, n := range []string{"a", "b", "c"} {
		f.createNode(n)
		if err := f.sync(c, n); err != nil {
			t.Fatal(err)
		}
		got = append(got, f.podCIDRs(n))
	}
	if want := []string{"10.0.0.0/24", "10.0.2.0/24", "10.0.3.0/24"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// A node whose CIDR is outside the cluster CIDR (the flag was changed
// under it) stops the controller, as upstream's.
func TestExistingCIDROutOfRange(t *testing.T) {
	f := newFixture(t)
	f.createNode("old", "192.168.0.0/24")
	c := f.controller(Config{ClusterCIDRs: prefixes("10.42.0.0/16")})
	err := c.OccupyExisting()
	if err == nil || !strings.Contains(err.Error(), "failed to mark cidr[192.168.0.0/24] at idx [0] as occupied for node: old") {
		t.Fatalf("OccupyExisting: %v", err)
	}
}

// Run: the workers give every new node its own CIDR.
func TestRunAssignsEveryNode(t *testing.T) {
	f := newFixture(t)
	c := f.controller(Config{ClusterCIDRs: prefixes("10.42.0.0/16")})
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	names := []string{"n0", "n1", "n2", "n3", "n4"}
	for _, n := range names {
		f.createNode(n)
	}
	eventually(t, "every node has a CIDR", func() bool {
		seen := map[string]bool{}
		for _, n := range names {
			cidr := f.podCIDRs(n)
			if cidr == "" || seen[cidr] || !netip.MustParsePrefix("10.42.0.0/16").Overlaps(netip.MustParsePrefix(cidr)) {
				return false
			}
			seen[cidr] = true
		}
		return true
	})
}
