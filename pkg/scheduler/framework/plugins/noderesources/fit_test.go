package noderesources

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

var defaultScoringStrategy = &config.ScoringStrategy{Type: config.LeastAllocated, Resources: defaultResources}

func newFit(t *testing.T, args *config.NodeResourcesFitArgs) *Fit {
	t.Helper()
	if args != nil && args.ScoringStrategy == nil {
		args.ScoringStrategy = defaultScoringStrategy
	}
	var obj runtime.Object // a nil *NodeResourcesFitArgs would not be a nil interface
	if args != nil {
		obj = args
	}
	pl, err := NewFit(context.Background(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pl.(*Fit)
}

func runFilter(t *testing.T, p *Fit, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	t.Helper()
	state := framework.NewCycleState()
	if _, st := p.PreFilter(context.Background(), state, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter() = %v", st)
	}
	return p.Filter(context.Background(), state, pod, ni)
}

func TestEnoughRequests(t *testing.T) {
	R := func(cpu, mem int64, scalars ...any) framework.Resource {
		r := framework.Resource{MilliCPU: cpu, Memory: mem}
		for i := 0; i < len(scalars); i += 2 {
			if r.ScalarResources == nil {
				r.ScalarResources = map[corev1.ResourceName]int64{}
			}
			r.ScalarResources[scalars[i].(corev1.ResourceName)] = int64(scalars[i+1].(int))
		}
		return r
	}
	unsched := func(reasons ...string) *framework.Status {
		return framework.NewStatus(framework.Unschedulable, reasons...)
	}
	unresolvable := func(reasons ...string) *framework.Status {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...)
	}
	cpu, mem := errReason(corev1.ResourceCPU), errReason(corev1.ResourceMemory)
	for _, tt := range []struct {
		name     string
		pod      *corev1.Pod
		nodeInfo *framework.NodeInfo
		args     config.NodeResourcesFitArgs
		want     *framework.Status
		wantIR   []InsufficientResource
	}{
		{name: "no resources requested always fits", pod: &corev1.Pod{}, nodeInfo: framework.NewNodeInfo(newResourcePod(R(10, 20)))},
		{name: "too many resources fails", pod: newResourcePod(R(1, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(10, 20))),
			want: unsched(cpu, mem), wantIR: []InsufficientResource{
				{ResourceName: corev1.ResourceCPU, Reason: cpu, Requested: 1, Used: 10, Capacity: 10},
				{ResourceName: corev1.ResourceMemory, Reason: mem, Requested: 1, Used: 20, Capacity: 20}}},
		{name: "too many resources fails due to init container cpu", pod: newResourceInitPod(newResourcePod(R(1, 1)), R(3, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(8, 19))), want: unsched(cpu),
			wantIR: []InsufficientResource{{ResourceName: corev1.ResourceCPU, Reason: cpu, Requested: 3, Used: 8, Capacity: 10}}},
		{name: "too many resources fails due to highest init container cpu", pod: newResourceInitPod(newResourcePod(R(1, 1)), R(3, 1), R(2, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(8, 19))), want: unsched(cpu),
			wantIR: []InsufficientResource{{ResourceName: corev1.ResourceCPU, Reason: cpu, Requested: 3, Used: 8, Capacity: 10}}},
		{name: "too many resources fails due to init container memory", pod: newResourceInitPod(newResourcePod(R(1, 1)), R(1, 3)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(9, 19))), want: unsched(mem),
			wantIR: []InsufficientResource{{ResourceName: corev1.ResourceMemory, Reason: mem, Requested: 3, Used: 19, Capacity: 20}}},
		{name: "too many resources fails due to highest init container memory", pod: newResourceInitPod(newResourcePod(R(1, 1)), R(1, 3), R(1, 2)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(9, 19))), want: unsched(mem),
			wantIR: []InsufficientResource{{ResourceName: corev1.ResourceMemory, Reason: mem, Requested: 3, Used: 19, Capacity: 20}}},
		{name: "init container fits because it's the max, not sum, of containers and init containers",
			pod: newResourceInitPod(newResourcePod(R(1, 1)), R(1, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(9, 19)))},
		{name: "multiple init containers fit because it's the max, not sum, of containers and init containers",
			pod: newResourceInitPod(newResourcePod(R(1, 1)), R(1, 1), R(1, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(9, 19)))},
		{name: "both resources fit", pod: newResourcePod(R(1, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 5)))},
		{name: "one resource memory fits", pod: newResourcePod(R(2, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(9, 5))),
			want: unsched(cpu), wantIR: []InsufficientResource{{ResourceName: corev1.ResourceCPU, Reason: cpu, Requested: 2, Used: 9, Capacity: 10}}},
		{name: "one resource cpu fits", pod: newResourcePod(R(1, 2)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 19))),
			want: unsched(mem), wantIR: []InsufficientResource{{ResourceName: corev1.ResourceMemory, Reason: mem, Requested: 2, Used: 19, Capacity: 20}}},
		{name: "equal edge case", pod: newResourcePod(R(5, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 19)))},
		{name: "equal edge case for init container", pod: newResourceInitPod(newResourcePod(R(4, 1)), R(5, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 19)))},
		{name: "extended resource fits", pod: newResourcePod(R(0, 0, extendedResourceA, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0)))},
		{name: "extended resource fits for init container", pod: newResourceInitPod(newResourcePod(R(0, 0)), R(0, 0, extendedResourceA, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0)))},
		{name: "extended resource capacity enforced", pod: newResourcePod(R(1, 1, extendedResourceA, 10)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 0))), want: unresolvable(errReason(extendedResourceA)),
			wantIR: []InsufficientResource{{ResourceName: extendedResourceA, Reason: errReason(extendedResourceA), Requested: 10, Used: 0, Capacity: 5, Unresolvable: true}}},
		{name: "extended resource capacity enforced for init container", pod: newResourceInitPod(newResourcePod(R(0, 0)), R(1, 1, extendedResourceA, 10)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 0))), want: unresolvable(errReason(extendedResourceA)),
			wantIR: []InsufficientResource{{ResourceName: extendedResourceA, Reason: errReason(extendedResourceA), Requested: 10, Used: 0, Capacity: 5, Unresolvable: true}}},
		{name: "extended resource allocatable enforced", pod: newResourcePod(R(1, 1, extendedResourceA, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 5))), want: unsched(errReason(extendedResourceA)),
			wantIR: []InsufficientResource{{ResourceName: extendedResourceA, Reason: errReason(extendedResourceA), Requested: 1, Used: 5, Capacity: 5}}},
		{name: "extended resource allocatable enforced for init container", pod: newResourceInitPod(newResourcePod(R(0, 0)), R(1, 1, extendedResourceA, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 5))), want: unsched(errReason(extendedResourceA)),
			wantIR: []InsufficientResource{{ResourceName: extendedResourceA, Reason: errReason(extendedResourceA), Requested: 1, Used: 5, Capacity: 5}}},
		{name: "extended resource allocatable enforced for multiple containers", pod: newResourcePod(R(1, 1, extendedResourceA, 3), R(1, 1, extendedResourceA, 3)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 2))), want: unresolvable(errReason(extendedResourceA)),
			wantIR: []InsufficientResource{{ResourceName: extendedResourceA, Reason: errReason(extendedResourceA), Requested: 6, Used: 2, Capacity: 5, Unresolvable: true}}},
		{name: "extended resource allocatable admits multiple init containers", pod: newResourceInitPod(newResourcePod(R(0, 0)), R(1, 1, extendedResourceA, 3), R(1, 1, extendedResourceA, 3)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 2)))},
		{name: "extended resource allocatable enforced for multiple init containers", pod: newResourceInitPod(newResourcePod(R(0, 0)), R(1, 1, extendedResourceA, 6), R(1, 1, extendedResourceA, 3)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 2))), want: unresolvable(errReason(extendedResourceA)),
			wantIR: []InsufficientResource{{ResourceName: extendedResourceA, Reason: errReason(extendedResourceA), Requested: 6, Used: 2, Capacity: 5, Unresolvable: true}}},
		{name: "extended resource allocatable enforced for unknown resource", pod: newResourcePod(R(1, 1, extendedResourceB, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0))), want: unresolvable(errReason(extendedResourceB)),
			wantIR: []InsufficientResource{{ResourceName: extendedResourceB, Reason: errReason(extendedResourceB), Requested: 1, Unresolvable: true}}},
		{name: "extended resource allocatable enforced for unknown resource for init container", pod: newResourceInitPod(newResourcePod(R(0, 0)), R(1, 1, extendedResourceB, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0))), want: unresolvable(errReason(extendedResourceB)),
			wantIR: []InsufficientResource{{ResourceName: extendedResourceB, Reason: errReason(extendedResourceB), Requested: 1, Unresolvable: true}}},
		{name: "kubernetes.io resource capacity enforced", pod: newResourcePod(R(1, 1, kubernetesIOResourceA, 10)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0))), want: unresolvable(errReason(kubernetesIOResourceA)),
			wantIR: []InsufficientResource{{ResourceName: kubernetesIOResourceA, Reason: errReason(kubernetesIOResourceA), Requested: 10, Unresolvable: true}}},
		{name: "kubernetes.io resource capacity enforced for init container", pod: newResourceInitPod(newResourcePod(R(0, 0)), R(1, 1, kubernetesIOResourceB, 10)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0))), want: unresolvable(errReason(kubernetesIOResourceB)),
			wantIR: []InsufficientResource{{ResourceName: kubernetesIOResourceB, Reason: errReason(kubernetesIOResourceB), Requested: 10, Unresolvable: true}}},
		{name: "hugepages resource capacity enforced", pod: newResourcePod(R(1, 1, hugePageResourceA, 10)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, hugePageResourceA, 0))), want: unresolvable(errReason(hugePageResourceA)),
			wantIR: []InsufficientResource{{ResourceName: hugePageResourceA, Reason: errReason(hugePageResourceA), Requested: 10, Capacity: 5, Unresolvable: true}}},
		{name: "hugepages resource capacity enforced for init container", pod: newResourceInitPod(newResourcePod(R(0, 0)), R(1, 1, hugePageResourceA, 10)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, hugePageResourceA, 0))), want: unresolvable(errReason(hugePageResourceA)),
			wantIR: []InsufficientResource{{ResourceName: hugePageResourceA, Reason: errReason(hugePageResourceA), Requested: 10, Capacity: 5, Unresolvable: true}}},
		{name: "hugepages resource allocatable enforced for multiple containers", pod: newResourcePod(R(1, 1, hugePageResourceA, 3), R(1, 1, hugePageResourceA, 3)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, hugePageResourceA, 2))), want: unresolvable(errReason(hugePageResourceA)),
			wantIR: []InsufficientResource{{ResourceName: hugePageResourceA, Reason: errReason(hugePageResourceA), Requested: 6, Used: 2, Capacity: 5, Unresolvable: true}}},
		{name: "skip checking ignored extended resource", pod: newResourcePod(R(1, 1, extendedResourceB, 1)), nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0))),
			args: config.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/bbb"}}},
		{name: "resources + pod overhead fits", pod: newResourceOverheadPod(newResourcePod(R(1, 1)), corev1.ResourceList{"cpu": resource.MustParse("3m"), "memory": resource.MustParse("13")}),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 5)))},
		{name: "requests + overhead does not fit for memory", pod: newResourceOverheadPod(newResourcePod(R(1, 1)), corev1.ResourceList{"cpu": resource.MustParse("1m"), "memory": resource.MustParse("15")}),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 5))), want: unsched(mem),
			wantIR: []InsufficientResource{{ResourceName: corev1.ResourceMemory, Reason: mem, Requested: 16, Used: 5, Capacity: 20}}},
		{name: "skip checking ignored extended resource via resource groups", pod: newResourcePod(R(1, 1, extendedResourceB, 1, kubernetesIOResourceA, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0))), args: config.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com"}},
			want:   unresolvable(errReason(kubernetesIOResourceA)),
			wantIR: []InsufficientResource{{ResourceName: kubernetesIOResourceA, Reason: errReason(kubernetesIOResourceA), Requested: 1, Unresolvable: true}}},
		{name: "skip checking extended resource request with quantity zero via resource groups", pod: newResourcePod(R(1, 1, extendedResourceA, 0)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 6)))},
		{name: "skip checking resource request with quantity zero", pod: newResourcePod(R(0, 0, extendedResourceA, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(20, 30, extendedResourceA, 1)))},
		{name: "both pod-level and container-level resources fit", pod: newPodLevelResourcesPod(newResourcePod(R(1, 1)),
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("1m"), "memory": resource.MustParse("2")}}),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 5)))},
		{name: "pod-level cpu resource not fit", pod: newPodLevelResourcesPod(newResourcePod(R(1, 1)),
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("7m"), "memory": resource.MustParse("2")}}),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 5))), want: unsched(cpu),
			wantIR: []InsufficientResource{{ResourceName: corev1.ResourceCPU, Reason: cpu, Requested: 7, Used: 5, Capacity: 10}}},
		{name: "pod-level memory resource not fit", pod: newPodLevelResourcesPod(newResourcePod(R(1, 1)),
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("3m"), "memory": resource.MustParse("2")}}),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 19))), want: unsched(mem),
			wantIR: []InsufficientResource{{ResourceName: corev1.ResourceMemory, Reason: mem, Requested: 2, Used: 19, Capacity: 20}}},
		{name: "pod-level hugepages resource fit", pod: newPodLevelResourcesPod(newResourcePod(),
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("3m"), "memory": resource.MustParse("2"), hugePageResourceA: *resource.NewQuantity(5, resource.BinarySI)}}),
			nodeInfo: framework.NewNodeInfo()},
		{name: "both pod-level and container-level hugepages resource fit", pod: newPodLevelResourcesPod(newResourcePod(R(1, 1, hugePageResourceA, 3)),
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("3m"), "memory": resource.MustParse("2"), hugePageResourceA: *resource.NewQuantity(5, resource.BinarySI)}}),
			nodeInfo: framework.NewNodeInfo()},
		{name: "pod-level hugepages resource not fit", pod: newPodLevelResourcesPod(newResourcePod(),
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("3m"), "memory": resource.MustParse("2"), hugePageResourceA: *resource.NewQuantity(10, resource.BinarySI)}}),
			nodeInfo: framework.NewNodeInfo(), want: unresolvable(errReason(hugePageResourceA)),
			wantIR: []InsufficientResource{{ResourceName: hugePageResourceA, Reason: errReason(hugePageResourceA), Requested: 10, Capacity: 5, Unresolvable: true}}},
		{name: "one pod-level cpu resource fits and all init and non-init containers resources fit", pod: newResourceInitPod(newPodLevelResourcesPod(newResourcePod(R(1, 1)),
			corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("3m"), "memory": resource.MustParse("2")}}), R(1, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(5, 19))), want: unsched(mem),
			wantIR: []InsufficientResource{{ResourceName: corev1.ResourceMemory, Reason: mem, Requested: 2, Used: 19, Capacity: 20}}},
		{name: "extended resource not on the node (no DRA extended resources: alpha, off in 1.34)", pod: newResourcePod(R(1, 1, corev1.ResourceName("extended.resource.dra.io/something"), 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0))), want: unresolvable("Insufficient extended.resource.dra.io/something"),
			wantIR: []InsufficientResource{{ResourceName: "extended.resource.dra.io/something", Reason: "Insufficient extended.resource.dra.io/something", Requested: 1, Unresolvable: true}}},
		// Not upstream's: several short scalar resources are reported in
		// name order (upstream: map order).
		{name: "several scalar shortages in name order", pod: newResourcePod(R(1, 1, extendedResourceB, 1, extendedResourceA, 10, kubernetesIOResourceA, 1)),
			nodeInfo: framework.NewNodeInfo(newResourcePod(R(0, 0, extendedResourceA, 2))),
			want:     unresolvable(errReason(extendedResourceA), errReason(extendedResourceB), errReason(kubernetesIOResourceA)),
			wantIR: []InsufficientResource{
				{ResourceName: extendedResourceA, Reason: errReason(extendedResourceA), Requested: 10, Used: 2, Capacity: 5, Unresolvable: true},
				{ResourceName: extendedResourceB, Reason: errReason(extendedResourceB), Requested: 1, Unresolvable: true},
				{ResourceName: kubernetesIOResourceA, Reason: errReason(kubernetesIOResourceA), Requested: 1, Unresolvable: true}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			node := &corev1.Node{Status: corev1.NodeStatus{Capacity: makeResources(10, 20, 32, 5, 20, 5), Allocatable: makeResources(10, 20, 32, 5, 20, 5)}}
			tt.nodeInfo.SetNode(node)
			args := tt.args
			p := newFit(t, &args)
			if got := runFilter(t, p, tt.pod, tt.nodeInfo); !got.Equal(tt.want) {
				t.Errorf("Filter() = %v, want %v", got, tt.want)
			}
			got := fitsRequest(computePodResourceRequest(tt.pod, p.ignoredResources, p.ignoredResourceGroups), tt.nodeInfo, nil)
			if !reflect.DeepEqual(got, tt.wantIR) {
				t.Errorf("insufficient resources = %+v, want %+v", got, tt.wantIR)
			}
		})
	}
}

func TestPreFilterDisabled(t *testing.T) {
	ni := framework.NewNodeInfo()
	ni.SetNode(&corev1.Node{})
	got := newFit(t, nil).Filter(context.Background(), framework.NewCycleState(), &corev1.Pod{}, ni)
	if got.Code() != framework.Error || !errors.Is(got.AsError(), framework.ErrNotFound) {
		t.Errorf("Filter() without PreFilter = %v, want an Error wrapping ErrNotFound", got)
	}
}

func TestNotEnoughRequests(t *testing.T) {
	R := func(cpu, mem int64) framework.Resource { return framework.Resource{MilliCPU: cpu, Memory: mem} }
	want := framework.NewStatus(framework.Unschedulable, "Too many pods")
	for _, tt := range []struct {
		name     string
		pod      *corev1.Pod
		nodeInfo *framework.NodeInfo
	}{
		{"even without specified resources, predicate fails when there's no space for additional pod", &corev1.Pod{}, framework.NewNodeInfo(newResourcePod(R(10, 20)))},
		{"even if both resources fit, predicate fails when there's no space for additional pod", newResourcePod(R(1, 1)), framework.NewNodeInfo(newResourcePod(R(5, 5)))},
		{"even for equal edge case, predicate fails when there's no space for additional pod", newResourcePod(R(5, 1)), framework.NewNodeInfo(newResourcePod(R(5, 19)))},
		{"even for equal edge case, predicate fails when there's no space for additional pod due to init container",
			newResourceInitPod(newResourcePod(R(5, 1)), R(5, 1)), framework.NewNodeInfo(newResourcePod(R(5, 19)))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.nodeInfo.SetNode(&corev1.Node{Status: corev1.NodeStatus{Allocatable: makeResources(10, 20, 1, 0, 0, 0)}})
			if got := runFilter(t, newFit(t, nil), tt.pod, tt.nodeInfo); !got.Equal(want) {
				t.Errorf("Filter() = %v, want %v", got, want)
			}
		})
	}
	// Too many pods and a shortage: both reasons, pods first.
	ni := framework.NewNodeInfo(newResourcePod(R(9, 0)))
	ni.SetNode(&corev1.Node{Status: corev1.NodeStatus{Allocatable: makeResources(10, 20, 1, 0, 0, 0)}})
	if got, want := runFilter(t, newFit(t, nil), newResourcePod(R(3, 0)), ni), framework.NewStatus(framework.Unschedulable, "Too many pods", "Insufficient cpu"); !got.Equal(want) {
		t.Errorf("Filter() = %v, want %v", got, want)
	}
}

func TestStorageRequests(t *testing.T) {
	for _, tt := range []struct {
		name     string
		pod      *corev1.Pod
		nodeInfo *framework.NodeInfo
		want     *framework.Status
	}{
		{"empty storage requested, and pod fits", newResourcePod(framework.Resource{MilliCPU: 1, Memory: 1}), framework.NewNodeInfo(newResourcePod(framework.Resource{MilliCPU: 2, Memory: 10})), nil},
		{"storage ephemeral local storage request exceeds allocatable", newResourcePod(framework.Resource{EphemeralStorage: 25}),
			framework.NewNodeInfo(newResourcePod(framework.Resource{MilliCPU: 2, Memory: 2})),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, errReason(corev1.ResourceEphemeralStorage))},
		{"ephemeral local storage is sufficient", newResourceInitPod(newResourcePod(framework.Resource{EphemeralStorage: 5})),
			framework.NewNodeInfo(newResourcePod(framework.Resource{MilliCPU: 2, Memory: 2, EphemeralStorage: 10})), nil},
		{"pod fits", newResourcePod(framework.Resource{EphemeralStorage: 10}), framework.NewNodeInfo(newResourcePod(framework.Resource{MilliCPU: 2, Memory: 2})), nil},
		{"ephemeral storage short but not beyond allocatable", newResourcePod(framework.Resource{EphemeralStorage: 11}),
			framework.NewNodeInfo(newResourcePod(framework.Resource{EphemeralStorage: 10})),
			framework.NewStatus(framework.Unschedulable, errReason(corev1.ResourceEphemeralStorage))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.nodeInfo.SetNode(&corev1.Node{Status: corev1.NodeStatus{Allocatable: makeResources(10, 20, 32, 5, 20, 5)}})
			if got := runFilter(t, newFit(t, nil), tt.pod, tt.nodeInfo); !got.Equal(tt.want) {
				t.Errorf("Filter() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRestartableInitContainers(t *testing.T) {
	q := func(m int64) *corev1.ResourceList {
		return &corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(m, resource.DecimalSI)}
	}
	newPod := func(req, sidecarReq *corev1.ResourceList) *corev1.Pod {
		c := corev1.Container{Name: "regular"}
		if req != nil {
			c.Resources.Requests = *req
		}
		always := corev1.ContainerRestartPolicyAlways
		sc := corev1.Container{Name: "restartable-init", RestartPolicy: &always}
		if sidecarReq != nil {
			sc.Resources.Requests = *sidecarReq
		}
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}, InitContainers: []corev1.Container{sc}}}
	}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want *framework.Status
	}{
		{"allow pod without restartable init containers", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "regular"}}}}, nil},
		{"allow pod with restartable init containers", newPod(nil, nil), nil},
		{"allow pod if the total requested resources do not exceed the node's allocatable resources", newPod(q(1), q(1)), nil},
		{"not allow pod if the total requested resources do exceed the node's allocatable resources", newPod(q(1), q(2)),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, errReason(corev1.ResourceCPU))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ni := framework.NewNodeInfo()
			ni.SetNode(&corev1.Node{Status: corev1.NodeStatus{Allocatable: makeResources(2, 0, 1, 0, 0, 0)}})
			if got := runFilter(t, newFit(t, nil), tt.pod, ni); !got.Equal(tt.want) {
				t.Errorf("Filter() = %v, want %v", got, tt.want)
			}
		})
	}
}

// scoreNodes runs PreScore (when asked) and Score for every node of a
// snapshot built from pods and nodes.
func scoreNodes(t *testing.T, pl framework.ScorePlugin, pod *corev1.Pod, pods []*corev1.Pod, nodes []*corev1.Node, preScore bool, wantCode framework.Code) []int64 {
	t.Helper()
	ctx := context.Background()
	snapshot := cache.NewSnapshot(pods, nodes)
	state := framework.NewCycleState()
	if preScore {
		infos, _ := snapshot.NodeInfos().List()
		if st := pl.(framework.PreScorePlugin).PreScore(ctx, state, pod, infos); !st.IsSuccess() {
			t.Fatalf("PreScore() = %v", st)
		}
	}
	var out []int64
	for _, n := range nodes {
		ni, err := snapshot.NodeInfos().Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		s, st := pl.Score(ctx, state, pod, ni)
		if st.Code() != wantCode {
			t.Errorf("Score(%s) status = %v, want code %v", n.Name, st, wantCode)
		}
		out = append(out, s)
	}
	return out
}

func TestFitScore(t *testing.T) {
	nodes := func(cpu2 string) []*corev1.Node {
		return []*corev1.Node{stNode("node1", rl{"cpu": "4000", "memory": "10000"}), stNode("node2", rl{"cpu": cpu2, "memory": "10000"})}
	}
	existing := []*corev1.Pod{onNode(podReq(rl{"cpu": "2000", "memory": "4000"}), "node1"), onNode(podReq(rl{"cpu": "1000", "memory": "2000"}), "node2")}
	withSidecarExisting := []*corev1.Pod{
		onNode(withSidecar(podReq(rl{"cpu": "1000", "memory": "2000"}), rl{"cpu": "1000", "memory": "2000"}), "node1"),
		onNode(podReq(rl{"cpu": "1000", "memory": "2000"}), "node2"),
	}
	rtcr := func(shape ...config.UtilizationShapePoint) *config.ScoringStrategy {
		return &config.ScoringStrategy{Type: config.RequestedToCapacityRatio, Resources: defaultResources,
			RequestedToCapacityRatio: &config.RequestedToCapacityRatioParam{Shape: shape}}
	}
	most := &config.ScoringStrategy{Type: config.MostAllocated, Resources: defaultResources}
	least := &config.ScoringStrategy{Type: config.LeastAllocated, Resources: defaultResources}
	for _, tt := range []struct {
		name     string
		pod      *corev1.Pod
		nodes    []*corev1.Node
		existing []*corev1.Pod
		strategy *config.ScoringStrategy
		want     []int64
	}{
		{"RequestedToCapacityRatio case1", podReq(rl{"cpu": "3000", "memory": "5000"}), nodes("6000"), existing, rtcr(config.UtilizationShapePoint{Utilization: 0, Score: 10}, config.UtilizationShapePoint{Utilization: 100, Score: 0}), []int64{10, 32}},
		{"RequestedToCapacityRatio case2", podReq(rl{"cpu": "3000", "memory": "5000"}), nodes("6000"), existing, rtcr(config.UtilizationShapePoint{Utilization: 0, Score: 0}, config.UtilizationShapePoint{Utilization: 100, Score: 10}), []int64{95, 68}},
		{"MostAllocated", podReq(rl{"cpu": "1000", "memory": "2000"}), nodes("6000"), existing, most, []int64{67, 36}},
		{"LeastAllocated", podReq(rl{"cpu": "1000", "memory": "2000"}), nodes("6000"), existing, least, []int64{32, 63}},
		{"MostAllocated with sidecar container", podReq(rl{"cpu": "1000", "memory": "2000"}), nodes("4000"), withSidecarExisting, most, []int64{67, 45}},
		{"LeastAllocated with sidecar container", podReq(rl{"cpu": "1000", "memory": "2000"}), nodes("4000"), withSidecarExisting, least, []int64{32, 55}},
	} {
		for _, preScore := range []bool{true, false} {
			t.Run(tt.name, func(t *testing.T) {
				p := newFit(t, &config.NodeResourcesFitArgs{ScoringStrategy: tt.strategy})
				if got := scoreNodes(t, p, tt.pod, tt.existing, tt.nodes, preScore, framework.Success); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("scores (PreScore %v) = %v, want %v", preScore, got, tt.want)
				}
			})
		}
	}
}

func TestFitDefaultsAndArgs(t *testing.T) {
	p := newFit(t, nil)
	if p.Name() != "NodeResourcesFit" || p.strategy != leastAllocated || len(p.resources) != 2 ||
		p.resources[0] != (scoredResource{name: "cpu", kind: kindCPU, weight: 1}) || p.resources[1] != (scoredResource{name: "memory", kind: kindMemory, weight: 1}) {
		t.Errorf("default Fit = %+v", p)
	}
	for _, tt := range []struct {
		name    string
		args    runtime.Object
		wantErr string
	}{
		{"wrong args type", &config.NodeResourcesBalancedAllocationArgs{}, "want args to be of type NodeResourcesFitArgs"},
		{"no scoring strategy", &config.NodeResourcesFitArgs{}, "scoring strategy not specified"},
		{"negative weight", &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: config.LeastAllocated, Resources: []config.ResourceSpec{{Name: "memory", Weight: -1}, {Name: "cpu", Weight: 1}}}}, "scoringStrategy.resources[0].weight"},
		{"zero weight", &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: config.MostAllocated, Resources: []config.ResourceSpec{{Name: "memory", Weight: 1}, {Name: "cpu", Weight: 0}}}}, "scoringStrategy.resources[1].weight"},
		{"weight above 100", &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: config.LeastAllocated, Resources: []config.ResourceSpec{{Name: "memory", Weight: 1}, {Name: "cpu", Weight: 101}}}}, "scoringStrategy.resources[1].weight"},
		{"unknown strategy", &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{Type: "Other"}}, "scoringStrategy.type"},
		{"ignored group with a slash", &config.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com/aaa"}, ScoringStrategy: defaultScoringStrategy}, "ignoredResourceGroups[0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewFit(context.Background(), tt.args, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewFit() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	evs, err := newFit(t, nil).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []framework.ClusterEvent{
		{Resource: framework.Pod, ActionType: framework.Delete | framework.UpdatePodScaleDown},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable},
	}
	if len(evs) != len(want) {
		t.Fatalf("EventsToRegister() = %+v", evs)
	}
	for i := range want {
		if evs[i].Event != want[i] || evs[i].QueueingHintFn == nil {
			t.Errorf("event %d = %+v, want %+v with a hint", i, evs[i].Event, want[i])
		}
	}
}

func TestIsSchedulableAfterPodEvent(t *testing.T) {
	nominated := onNode(podReq(rl{"cpu": "1"}), "")
	nominated.Status.NominatedNodeName = "fake"
	for _, tt := range []struct {
		name           string
		pod            *corev1.Pod
		oldObj, newObj any
		want           framework.QueueingHint
		wantErr        bool
	}{
		{name: "backoff-wrong-old-object", pod: &corev1.Pod{}, oldObj: "not-a-pod", want: framework.Queue, wantErr: true},
		{name: "backoff-wrong-new-object", pod: &corev1.Pod{}, newObj: "not-a-pod", want: framework.Queue, wantErr: true},
		{name: "queue-on-other-pod-deleted", pod: podReq(rl{"cpu": "1"}), oldObj: onNode(podReq(rl{"cpu": "1"}), "fake"), want: framework.Queue},
		{name: "queue-on-nominated-pod-deleted", pod: podReq(rl{"cpu": "1"}), oldObj: nominated, want: framework.Queue},
		{name: "skip-queue-on-unscheduled-pod-deleted", pod: &corev1.Pod{}, oldObj: &corev1.Pod{}, want: framework.QueueSkip},
		{name: "skip-queue-on-other-unscheduled-pod", pod: withUID(podReq(rl{"cpu": "1"}), "pod1", "uid0"),
			oldObj: withUID(podReq(rl{"cpu": "2"}), "pod2", "uid1"), newObj: withUID(podReq(rl{"cpu": "1"}), "pod2", "uid1"), want: framework.QueueSkip},
		{name: "skip-queue-on-other-pod-unrelated-resource-scaled-down", pod: withUID(podReq(rl{"cpu": "1"}), "pod1", "pod1"),
			oldObj: onNode(withUID(podReq(rl{"memory": "2"}), "pod2", "pod2"), "fake"), newObj: onNode(withUID(podReq(rl{"memory": "1"}), "pod2", "pod2"), "fake"), want: framework.QueueSkip},
		{name: "queue-on-other-pod-some-resource-scale-down", pod: withUID(podReq(rl{"cpu": "1"}), "pod1", "pod1"),
			oldObj: onNode(withUID(podReq(rl{"cpu": "2"}), "pod2", "pod2"), "fake"), newObj: onNode(withUID(podReq(rl{"cpu": "1"}), "pod2", "pod2"), "fake"), want: framework.Queue},
		{name: "queue-on-target-pod-some-resource-scale-down", pod: withUID(podReq(rl{"cpu": "1"}), "pod1", "pod1"),
			oldObj: withUID(podReq(rl{"cpu": "2"}), "pod1", "pod1"), newObj: withUID(podReq(rl{"cpu": "1"}), "pod1", "pod1"), want: framework.Queue},
		{name: "queue-on-other-pod-extended-resource-scale-down", pod: withUID(podReq(rl{"example.com/aaa": "1"}), "pod1", "pod1"),
			oldObj: onNode(withUID(podReq(rl{"example.com/aaa": "2"}), "pod2", "pod2"), "fake"), newObj: onNode(withUID(podReq(rl{"example.com/aaa": "1"}), "pod2", "pod2"), "fake"), want: framework.Queue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newFit(t, nil).isSchedulableAfterPodEvent(slog.New(slog.DiscardHandler), tt.pod, tt.oldObj, tt.newObj)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsSchedulableAfterNodeChange(t *testing.T) {
	R := func(mem int64, a int64) *corev1.Pod {
		r := framework.Resource{Memory: mem}
		if a > 0 {
			r.ScalarResources = map[corev1.ResourceName]int64{extendedResourceA: a}
		}
		return newResourcePod(r)
	}
	for _, tt := range []struct {
		name           string
		pod            *corev1.Pod
		oldObj, newObj any
		want           framework.QueueingHint
		wantErr        bool
	}{
		{name: "backoff-wrong-new-object", pod: &corev1.Pod{}, newObj: "not-a-node", want: framework.Queue, wantErr: true},
		{name: "backoff-wrong-old-object", pod: &corev1.Pod{}, oldObj: "not-a-node", newObj: &corev1.Node{}, want: framework.Queue, wantErr: true},
		{name: "skip-queue-on-node-add-without-sufficient-resources", pod: R(2, 0), newObj: stNode("", rl{"memory": "1"}), want: framework.QueueSkip},
		{name: "skip-queue-on-node-add-without-required-resource-type", pod: newResourcePod(framework.Resource{ScalarResources: map[corev1.ResourceName]int64{extendedResourceA: 1}}),
			newObj: stNode("", rl{extendedResourceB: "1"}), want: framework.QueueSkip},
		{name: "queue-on-node-add-with-sufficient-resources", pod: R(2, 1), newObj: stNode("", rl{"memory": "4", extendedResourceA: "2"}), want: framework.Queue},
		{name: "skip-queue-on-node-unrelated-changes", pod: R(2, 1), oldObj: stNode("", rl{"memory": "2", extendedResourceA: "2"}),
			newObj: stNode("", rl{"memory": "2", extendedResourceA: "1", extendedResourceB: "2"}), want: framework.QueueSkip},
		{name: "queue-on-pod-requested-resources-increase", pod: R(2, 1), oldObj: stNode("", rl{"memory": "2", extendedResourceA: "1"}),
			newObj: stNode("", rl{"memory": "2", extendedResourceA: "2"}), want: framework.Queue},
		{name: "skip-queue-on-node-changes-from-suitable-to-unsuitable", pod: R(2, 1), oldObj: stNode("", rl{"memory": "4", extendedResourceA: "2"}),
			newObj: stNode("", rl{"memory": "1", extendedResourceA: "2"}), want: framework.QueueSkip},
		{name: "queue-on-node-changes-from-unsuitable-to-suitable", pod: R(2, 1), oldObj: stNode("", rl{"memory": "1", extendedResourceA: "2"}),
			newObj: stNode("", rl{"memory": "4", extendedResourceA: "2"}), want: framework.Queue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newFit(t, nil).isSchedulableAfterNodeChange(slog.New(slog.DiscardHandler), tt.pod, tt.oldObj, tt.newObj)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsFit(t *testing.T) {
	podLevel := func(r corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: r}}}
	}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want bool
	}{
		{"nil node", &corev1.Pod{}, nil, false},
		{"insufficient resource", podReq(rl{"cpu": "2"}), stNode("", rl{"cpu": "1"}), false},
		{"sufficient resource", podReq(rl{"cpu": "1"}), stNode("", rl{"cpu": "2"}), true},
		{"insufficient pod-level resource", podLevel(corev1.ResourceList{"cpu": resource.MustParse("2")}), stNode("", rl{"cpu": "1"}), false},
		{"sufficient pod-level resource", podLevel(corev1.ResourceList{"cpu": resource.MustParse("2")}), stNode("", rl{"cpu": "2"}), true},
		{"sufficient pod-level resource hugepages", podLevel(corev1.ResourceList{hugePageResourceA: resource.MustParse("2Mi")}), stNode("", rl{hugePageResourceA: "2Mi"}), true},
		{"insufficient pod-level resource hugepages", podLevel(corev1.ResourceList{hugePageResourceA: resource.MustParse("4Mi")}), stNode("", rl{hugePageResourceA: "2Mi"}), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := isFit(tt.pod, tt.node); got != tt.want {
				t.Errorf("isFit() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHaveAnyRequestedResourcesIncreased(t *testing.T) {
	full := newResourcePod(framework.Resource{MilliCPU: 2, Memory: 2, EphemeralStorage: 2, ScalarResources: map[corev1.ResourceName]int64{extendedResourceA: 2}})
	cpuMem := newResourcePod(framework.Resource{MilliCPU: 2, Memory: 2})
	for _, tt := range []struct {
		name               string
		pod                *corev1.Pod
		original, modified rl
		want               bool
	}{
		{"no-requested-resources", newResourcePod(framework.Resource{}),
			rl{"pods": "1", "cpu": "1", "memory": "1", "ephemeral-storage": "1", extendedResourceA: "1"},
			rl{"pods": "1", "cpu": "2", "memory": "2", "ephemeral-storage": "2", extendedResourceA: "2"}, false},
		{"no-requested-resources-pods-increased", newResourcePod(framework.Resource{}),
			rl{"pods": "1", "cpu": "1", "memory": "1", "ephemeral-storage": "1", extendedResourceA: "1"},
			rl{"pods": "2", "cpu": "1", "memory": "1", "ephemeral-storage": "1", extendedResourceA: "1"}, true},
		{"scalar-resources-not-in-node", full, rl{"cpu": "1", "memory": "2", "ephemeral-storage": "3"}, rl{"cpu": "1", "memory": "2", "ephemeral-storage": "1"}, false},
		{"requested-resources-decreased", full, rl{"cpu": "1", "memory": "2", "ephemeral-storage": "3", extendedResourceA: "4"},
			rl{"cpu": "1", "memory": "2", "ephemeral-storage": "1", extendedResourceA: "1"}, false},
		{"requested-resources-increased", full, rl{"cpu": "1", "memory": "2", "ephemeral-storage": "3", extendedResourceA: "4"},
			rl{"cpu": "3", "memory": "4", "ephemeral-storage": "3", extendedResourceA: "4"}, true},
		{"non-requested-resources-decreased", cpuMem, rl{"cpu": "1", "memory": "2", "ephemeral-storage": "3", extendedResourceA: "4"},
			rl{"cpu": "1", "memory": "2", "ephemeral-storage": "1", extendedResourceA: "1"}, false},
		{"non-requested-resources-increased", cpuMem, rl{"cpu": "1", "memory": "2", "ephemeral-storage": "3", extendedResourceA: "4"},
			rl{"cpu": "1", "memory": "2", "ephemeral-storage": "5", extendedResourceA: "6"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Upstream's st.MakeNode().Capacity always adds pods: 32
			// unless the map sets it.
			if got := haveAnyRequestedResourcesIncreased(tt.pod, stNode("", tt.original), stNode("", tt.modified)); got != tt.want {
				t.Errorf("haveAnyRequestedResourcesIncreased() = %v, want %v", got, tt.want)
			}
		})
	}
}
