package framework

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

func rl(cpu, mem string) corev1.ResourceList {
	out := corev1.ResourceList{}
	if cpu != "" {
		out[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		out[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return out
}

func ctr(name string, req corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: req}}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecar := func(name string, req corev1.ResourceList) corev1.Container {
		c := ctr(name, req)
		c.RestartPolicy = &always
		return c
	}
	tests := []struct {
		name              string
		spec              corev1.PodSpec
		cpu, mem          int64 // PodRequests(pod, false)
		nonZeroCPU, nzMem int64
	}{
		{name: "sum of containers", spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", rl("100m", "1Mi")), ctr("b", rl("200m", "2Mi"))}},
			cpu: 300, mem: 3 << 20, nonZeroCPU: 300, nzMem: 3 << 20},
		{name: "no requests: zero, non-zero defaults", spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", nil), ctr("b", rl("50m", ""))}},
			cpu: 50, mem: 0, nonZeroCPU: 150, nzMem: 2 * DefaultMemoryRequest},
		{name: "init container larger than containers", spec: corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("i", rl("2", "1Gi"))}, Containers: []corev1.Container{ctr("a", rl("1", "2Gi"))}},
			cpu: 2000, mem: 2 << 30, nonZeroCPU: 2000, nzMem: 2 << 30},
		{name: "sidecar runs with containers and with later init containers", spec: corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("s", rl("500m", "")), ctr("i", rl("1", ""))},
			Containers:     []corev1.Container{ctr("a", rl("200m", ""))}},
			// init step: 1 + 0.5 sidecar = 1.5 > 0.2 + 0.5
			cpu: 1500, mem: 0, nonZeroCPU: 1500, nzMem: 2 * DefaultMemoryRequest},
		{name: "overhead added", spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", rl("100m", ""))}, Overhead: rl("10m", "1Mi")},
			cpu: 110, mem: 1 << 20, nonZeroCPU: 110, nzMem: DefaultMemoryRequest + 1<<20},
		{name: "pod-level resources replace the sum", spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", rl("100m", "1Mi"))},
			Resources: &corev1.ResourceRequirements{Requests: rl("1", "")}},
			cpu: 1000, mem: 1 << 20, nonZeroCPU: 1000, nzMem: 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: tt.spec}
			r, nz := PodRequests(p, false), PodRequests(p, true)
			if r.MilliCPU != tt.cpu || r.Memory != tt.mem || nz.MilliCPU != tt.nonZeroCPU || nz.Memory != tt.nzMem {
				t.Errorf("got cpu %d mem %d nonzero %d/%d; want %d %d %d/%d", r.MilliCPU, r.Memory, nz.MilliCPU, nz.Memory, tt.cpu, tt.mem, tt.nonZeroCPU, tt.nzMem)
			}
		})
	}
}

func TestHostPortInfoConflicts(t *testing.T) {
	h := HostPortInfo{}
	h.Add("", "", 80)
	h.Add("10.0.0.1", "UDP", 53)
	tests := []struct {
		ip, proto string
		port      int32
		want      bool
	}{
		{"", "TCP", 80, true},
		{"10.0.0.2", "TCP", 80, true}, // 0.0.0.0 holds it for every IP
		{"10.0.0.2", "UDP", 80, false},
		{"0.0.0.0", "UDP", 53, true}, // any IP with it collides with 0.0.0.0
		{"10.0.0.2", "UDP", 53, false},
		{"10.0.0.1", "UDP", 0, false},
	}
	for _, tt := range tests {
		if got := h.CheckConflict(tt.ip, tt.proto, tt.port); got != tt.want {
			t.Errorf("CheckConflict(%q,%q,%d) = %v, want %v", tt.ip, tt.proto, tt.port, got, tt.want)
		}
	}
	h.Remove("10.0.0.1", "UDP", 53)
	if h.Len() != 1 {
		t.Errorf("Len after remove = %d", h.Len())
	}
}

func TestNodeInfoAddRemoveAndSnapshot(t *testing.T) {
	pod := func(uid, cpu string, port int32, anti bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: k8stypes.UID("u-" + uid)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl(cpu, "")},
				Ports: []corev1.ContainerPort{{HostPort: port}}}},
				Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
					// A generic ephemeral volume's claim is not counted (upstream counts claims named in volumes only).
					{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}}}}
		if anti {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, TopologyKey: "kubernetes.io/hostname"}}}}
		}
		return p
	}
	a, b := pod("a", "1", 8080, false), pod("b", "500m", 9090, true)
	ni := NewNodeInfo(a, b)
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Allocatable: rl("4", "8Gi")}})
	if ni.Requested.MilliCPU != 1500 || len(ni.PodsWithAffinity) != 1 || len(ni.PodsWithRequiredAntiAffinity) != 1 || ni.PVCRefCounts["ns/data"] != 2 || len(ni.PVCRefCounts) != 1 {
		t.Fatalf("aggregates wrong: %v affinity %d anti %d pvc %v", ni, len(ni.PodsWithAffinity), len(ni.PodsWithRequiredAntiAffinity), ni.PVCRefCounts)
	}
	snap := ni.Snapshot()
	if err := ni.RemovePod(b); err != nil {
		t.Fatal(err)
	}
	if ni.Requested.MilliCPU != 1000 || len(ni.PodsWithAffinity) != 0 || ni.PVCRefCounts["ns/data"] != 1 || !ni.UsedPorts.CheckConflict("", "TCP", 8080) || ni.UsedPorts.CheckConflict("", "TCP", 9090) {
		t.Errorf("after remove: %v pvc %v ports %v", ni, ni.PVCRefCounts, ni.UsedPorts)
	}
	if snap.Requested.MilliCPU != 1500 || len(snap.Pods) != 2 || snap.PVCRefCounts["ns/data"] != 2 {
		t.Errorf("snapshot changed with the original: %v", snap)
	}
	if err := ni.RemovePod(b); err == nil {
		t.Error("removing a pod twice: no error")
	}
	if ni.Allocatable.MilliCPU != 4000 {
		t.Errorf("allocatable %d", ni.Allocatable.MilliCPU)
	}
}

func TestAffinityTermNamespaces(t *testing.T) {
	owner := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "own"}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	target := func(ns string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: map[string]string{"app": "x"}}}
	}
	tests := []struct {
		name    string
		term    corev1.PodAffinityTerm
		pod     *corev1.Pod
		nsLabel labels.Set
		want    bool
	}{
		{"default: own namespace", corev1.PodAffinityTerm{LabelSelector: sel}, target("own"), nil, true},
		{"default: not another namespace", corev1.PodAffinityTerm{LabelSelector: sel}, target("other"), nil, false},
		{"listed namespaces", corev1.PodAffinityTerm{LabelSelector: sel, Namespaces: []string{"other"}}, target("other"), nil, true},
		{"empty namespace selector: all", corev1.PodAffinityTerm{LabelSelector: sel, NamespaceSelector: &metav1.LabelSelector{}}, target("x"), nil, true},
		{"namespace selector by labels", corev1.PodAffinityTerm{LabelSelector: sel, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}},
			target("x"), labels.Set{"team": "a"}, true},
		{"label mismatch", corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "y"}}}, target("own"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, err := NewAffinityTerm(owner, &tt.term)
			if err != nil {
				t.Fatal(err)
			}
			if got := at.Matches(tt.pod, tt.nsLabel); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFitErrorMessage(t *testing.T) {
	m := NewDefaultNodeToStatus()
	m.Set("n1", NewStatus(Unschedulable, "Insufficient cpu"))
	m.Set("n2", NewStatus(Unschedulable, "Insufficient cpu", "Insufficient memory"))
	m.Set("n3", NewStatus(UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}"))
	f := &FitError{NumAllNodes: 4, Diagnosis: Diagnosis{NodeToStatus: m, PostFilterMsg: "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."}}
	// n4 is absent (a PreFilter result excluded it): the default absent status has no reason.
	// Upstream's preemption message ends in a second ".".
	want := "0/4 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
	if got := f.Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	f = &FitError{NumAllNodes: 0, Diagnosis: Diagnosis{NodeToStatus: NewDefaultNodeToStatus()}}
	if got := f.Error(); got != "0/0 nodes are available:" {
		t.Errorf("no nodes: %q", got)
	}
}

func TestStatus(t *testing.T) {
	var nilStatus *Status
	if !nilStatus.IsSuccess() || nilStatus.Code() != Success || nilStatus.AsError() != nil {
		t.Error("nil status is not success")
	}
	s := NewStatus(Unschedulable, "a", "b").WithPlugin("P")
	if !s.IsRejected() || s.Message() != "a, b" || s.Plugin() != "P" || s.AsError() == nil {
		t.Errorf("status %v", s)
	}
	if !NewStatus(Pending).IsRejected() || NewStatus(Error, "x").IsRejected() {
		t.Error("IsRejected")
	}
	if !AsStatus(context.Canceled).Equal(AsStatus(context.Canceled)) || AsStatus(nil) != nil {
		t.Error("AsStatus")
	}
	// Upstream: the error's message comes first in Reasons and Message.
	if got := NewStatus(Unschedulable, "r").WithError(errors.New("e")).Message(); got != "e, r" {
		t.Errorf("Message with error = %q", got)
	}
}

func TestParallelizerRunsEveryPieceOnce(t *testing.T) {
	p := NewParallelizer(16)
	for name, until := range map[string]func(context.Context, int, func(int), string){"Until": p.Until, "UntilCPU": p.UntilCPU} {
		for _, n := range []int{0, 1, 7, 100, 5000} {
			seen := make([]atomic.Int32, n)
			until(context.Background(), n, func(i int) { seen[i].Add(1) }, "test")
			for i := range seen {
				if seen[i].Load() != 1 {
					t.Fatalf("%s: n=%d piece %d ran %d times", name, n, i, seen[i].Load())
				}
			}
		}
	}
}

type intState int

func (s intState) Clone() StateData { return s + 100 }

func TestCycleStateReadWriteDeleteClone(t *testing.T) {
	c := NewCycleState()
	if _, err := c.Read("a"); err != ErrNotFound {
		t.Fatalf("empty: %v", err)
	}
	for i := range 20 {
		c.Write(StateKey(fmt.Sprint("k", i)), intState(i))
	}
	c.Write("k3", intState(33))
	c.Delete("k5")
	c.Delete("missing")
	for i := range 20 {
		v, err := c.Read(StateKey(fmt.Sprint("k", i)))
		want := intState(i)
		switch i {
		case 3:
			want = 33
		case 5:
			if err != ErrNotFound {
				t.Errorf("deleted k5: %v %v", v, err)
			}
			continue
		}
		if err != nil || v != want {
			t.Errorf("k%d = %v, %v; want %v", i, v, err, want)
		}
	}
	cl := c.Clone()
	if v, _ := cl.Read("k3"); v != intState(133) {
		t.Errorf("clone k3 = %v, want the cloned 133", v)
	}
	if _, err := cl.Read("k5"); err != ErrNotFound {
		t.Errorf("clone has the deleted k5: %v", err)
	}
	cl.Write("k5", intState(5))
	if _, err := c.Read("k5"); err != ErrNotFound {
		t.Error("a write to the clone reached the original")
	}
	// Readers in parallel with a writer (go test -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for j := range 1000 {
				if v, err := c.Read("k0"); err != nil || v != intState(0) {
					t.Errorf("concurrent read: %v %v", v, err)
					return
				}
				_, _ = c.Read(StateKey(fmt.Sprint("n", j%50)))
			}
		})
	}
	for j := range 50 {
		c.Write(StateKey(fmt.Sprint("n", j)), intState(j))
	}
	wg.Wait()
}

func TestClusterEventMatch(t *testing.T) {
	reg := ClusterEvent{Resource: Node, ActionType: Add | UpdateNodeTaint}
	if !reg.Match(ClusterEvent{Resource: Node, ActionType: UpdateNodeTaint}) || reg.Match(ClusterEvent{Resource: Node, ActionType: UpdateNodeLabel}) ||
		reg.Match(ClusterEvent{Resource: Pod, ActionType: Add}) {
		t.Error("Match")
	}
	if !(ClusterEvent{Resource: WildCard, ActionType: All}).Match(ClusterEvent{Resource: PersistentVolume, ActionType: Delete}) {
		t.Error("wildcard")
	}
	if got := (ClusterEvent{Resource: Pod, ActionType: Delete}).Label(); got != "AssignedPodDelete" {
		t.Errorf("label %q", got)
	}
}
