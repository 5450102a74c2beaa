package plugins_test

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins"
	fwkruntime "github.com/skiff-sh/skiff/pkg/scheduler/framework/runtime"
	"github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

func testNode(name string, cpu, mem string, mutate ...func(*corev1.Node)) *corev1.Node {
	rl := corev1.ResourceList{"cpu": resource.MustParse(cpu), "memory": resource.MustParse(mem), "pods": resource.MustParse("110")}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl}}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func testPod(name, cpu, mem string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	c := corev1.Container{Name: "c", Image: "registry.example/app:v1"}
	if cpu != "" || mem != "" {
		c.Resources.Requests = corev1.ResourceList{}
		if cpu != "" {
			c.Resources.Requests["cpu"] = resource.MustParse(cpu)
		}
		if mem != "" {
			c.Resources.Requests["memory"] = resource.MustParse(mem)
		}
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func hostPort(port int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port, HostPort: port}}
	}
}

// newDefaultFramework builds upstream's default profile from the in-tree
// registry over the snapshot (informers are never started: the tests'
// pods use no namespace selectors, services or volumes).
func newDefaultFramework(t *testing.T, snapshot *cache.Snapshot) *fwkruntime.Framework {
	t.Helper()
	c, err := client.New(&client.Config{Host: "https://127.0.0.1:1", QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	cc := config.Default()
	f, err := fwkruntime.NewFramework(context.Background(), plugins.NewInTreeRegistry(), &cc.Profiles[0], fwkruntime.Options{
		Client: c, Informers: informers.NewSharedInformerFactory(c, 0), Snapshot: snapshot, Parallelism: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestDefaultProfileFilters runs the default profile's PreFilter and
// Filter for pods that the basic plugins reject: each node's status
// names the plugin, upstream's reason and code.
func TestDefaultProfileFilters(t *testing.T) {
	nodes := []*corev1.Node{
		testNode("n1", "4", "8Gi"),
		testNode("n2", "4", "8Gi", func(n *corev1.Node) {
			n.Spec.Unschedulable = true
			n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}
		}),
		testNode("n3", "1", "1Gi"),
	}
	existing := []*corev1.Pod{testPod("web", "500m", "", hostPort(80), func(p *corev1.Pod) { p.Spec.NodeName = "n3" })}
	snapshot := cache.NewSnapshot(existing, nodes)
	fwk := newDefaultFramework(t, snapshot)
	type want struct {
		plugin, reason string
		code           framework.Code
	}
	ok := want{}
	// NodeUnschedulable runs first in upstream's default Filter order.
	cordoned := want{"NodeUnschedulable", "node(s) were unschedulable", framework.UnschedulableAndUnresolvable}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want map[string]want
	}{
		{"too much cpu for n3", testPod("big", "2", "1Gi"), map[string]want{
			"n1": ok, "n2": cordoned, "n3": {"NodeResourcesFit", "Insufficient cpu", framework.UnschedulableAndUnresolvable}}},
		{"cpu n3 could have after preemption", testPod("mid", "600m", ""), map[string]want{
			"n1": ok, "n2": cordoned, "n3": {"NodeResourcesFit", "Insufficient cpu", framework.Unschedulable}}},
		{"host port taken on n3", testPod("port", "100m", "", hostPort(80)), map[string]want{
			"n1": ok, "n2": cordoned, "n3": {"NodePorts", "node(s) didn't have free ports for the requested pod ports", framework.Unschedulable}}},
		{"requested node name", testPod("pinned", "", "", func(p *corev1.Pod) { p.Spec.NodeName = "n3" }), map[string]want{
			"n1": {"NodeName", "node(s) didn't match the requested node name", framework.UnschedulableAndUnresolvable}, "n2": cordoned, "n3": ok}},
		{"tolerating the cordon taint passes NodeUnschedulable", testPod("tolerant", "", "", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		}), map[string]want{"n1": ok, "n2": ok, "n3": ok}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			state := framework.NewCycleState()
			if _, st, _ := fwk.RunPreFilterPlugins(ctx, state, tt.pod); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			for _, n := range nodes {
				ni, _ := snapshot.NodeInfos().Get(n.Name)
				st := fwk.RunFilterPlugins(ctx, state, tt.pod, ni)
				w := tt.want[n.Name]
				if w == ok {
					if !st.IsSuccess() {
						t.Errorf("%s: %v, want it feasible", n.Name, st)
					}
					continue
				}
				if st.Code() != w.code || st.Plugin() != w.plugin || st.Message() != w.reason {
					t.Errorf("%s: %v (plugin %q), want %v from %s: %q", n.Name, st, st.Plugin(), w.code, w.plugin, w.reason)
				}
			}
		})
	}
}

// TestDefaultProfileScores checks the weighted scores of the resource
// and image plugins in the default profile, and that a best-effort pod
// skips NodeResourcesBalancedAllocation.
func TestDefaultProfileScores(t *testing.T) {
	nodes := []*corev1.Node{testNode("n1", "4", "8Gi"), testNode("n4", "4", "8Gi")}
	existing := []*corev1.Pod{testPod("busy", "2", "2Gi", func(p *corev1.Pod) { p.Spec.NodeName = "n4" })}
	snapshot := cache.NewSnapshot(existing, nodes)
	fwk := newDefaultFramework(t, snapshot)
	infos, _ := snapshot.NodeInfos().List()
	score := func(pod *corev1.Pod) map[string]map[string]int64 {
		ctx := context.Background()
		state := framework.NewCycleState()
		if _, st, _ := fwk.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
			t.Fatalf("PreFilter: %v", st)
		}
		if st := fwk.RunPreScorePlugins(ctx, state, pod, infos); !st.IsSuccess() {
			t.Fatalf("PreScore: %v", st)
		}
		all, st := fwk.RunScorePlugins(ctx, state, pod, infos)
		if !st.IsSuccess() {
			t.Fatalf("Score: %v", st)
		}
		out := map[string]map[string]int64{}
		for _, nps := range all {
			out[nps.Name] = map[string]int64{}
			for _, ps := range nps.Scores {
				switch ps.Name {
				case "NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality":
					out[nps.Name][ps.Name] = ps.Score
				}
			}
		}
		return out
	}
	// LeastAllocated: n1 (75+87)/2 = 81, n4 (25+62)/2 = 43; balanced:
	// n1 |0.25-0.125|/2 → 93, n4 |0.75-0.375|/2 → 81; no images: 0.
	got := score(testPod("app", "1", "1Gi"))
	want := map[string]map[string]int64{
		"n1": {"NodeResourcesFit": 81, "NodeResourcesBalancedAllocation": 93, "ImageLocality": 0},
		"n4": {"NodeResourcesFit": 43, "NodeResourcesBalancedAllocation": 81, "ImageLocality": 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scores = %v, want %v", got, want)
	}
	// Best effort: BalancedAllocation skipped; Fit scores the non-zero
	// defaults (100m, 200Mi): n1 cpu 97, mem 97 → 97; n4 cpu 47, mem 72 → 59.
	got = score(testPod("be", "", ""))
	want = map[string]map[string]int64{
		"n1": {"NodeResourcesFit": 97, "ImageLocality": 0},
		"n4": {"NodeResourcesFit": 59, "ImageLocality": 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("best-effort scores = %v, want %v", got, want)
	}
}
