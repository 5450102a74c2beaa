package framework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestIsScalarResourceName(t *testing.T) {
	for name, want := range map[corev1.ResourceName]bool{
		"example.com/gpu":                   true,  // extended
		"hugepages-2Mi":                     true,  // hugepages
		"kubernetes.io/something":           true,  // prefixed native
		"subdomain.kubernetes.io/something": true,  // prefixed native
		"attachable-volumes-aws-ebs":        true,  // attachable volumes
		"requests.example.com/gpu":          false, // quota name
		"cpu":                               false,
		"memory":                            false,
		"pods":                              false,
		"ephemeral-storage":                 false,
	} {
		if got := IsScalarResourceName(name); got != want {
			t.Errorf("IsScalarResourceName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPodRequestsPodLevelHugepages(t *testing.T) {
	q := resource.MustParse
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			"cpu": q("1m"), "memory": q("1"), "hugepages-2Mi": q("3"), "example.com/foo": q("2"),
		}}}},
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			"cpu": q("3m"), "memory": q("2"), "hugepages-2Mi": q("5"),
		}},
	}}
	got := PodRequests(pod, false)
	if got.MilliCPU != 3 || got.Memory != 2 || got.ScalarResources["hugepages-2Mi"] != 5 || got.ScalarResources["example.com/foo"] != 2 {
		t.Errorf("PodRequests = %+v, want pod-level cpu 3m, memory 2, hugepages 5 and the containers' example.com/foo 2", got)
	}
}

func TestNodeInfoUsedPortsSkipPlainInitContainers(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "init", Ports: []corev1.ContainerPort{{HostPort: 8001}}},
			{Name: "sidecar", RestartPolicy: &always, Ports: []corev1.ContainerPort{{HostPort: 8002}}},
		},
		Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{HostPort: 8003}, {ContainerPort: 80}}}},
	}}
	ni := NewNodeInfo(pod)
	if ni.UsedPorts.CheckConflict("", "", 8001) || !ni.UsedPorts.CheckConflict("", "", 8002) || !ni.UsedPorts.CheckConflict("", "", 8003) || ni.UsedPorts.Len() != 2 {
		t.Errorf("UsedPorts = %v, want the sidecar's 8002 and the container's 8003 only", ni.UsedPorts)
	}
	if err := ni.RemovePod(pod); err != nil || ni.UsedPorts.Len() != 0 {
		t.Errorf("after RemovePod: %v, UsedPorts = %v", err, ni.UsedPorts)
	}
}

// TestNodeNonZeroRequests: what a pod on a node counts in NonZeroRequested
// (upstream's PodInfo.CalculateResource): without pod-level requests
// every container lacking cpu (memory) counts the default; with them, a
// default is added only for a resource nothing in the pod names.
func TestNodeNonZeroRequests(t *testing.T) {
	q := resource.MustParse
	ctr := func(r corev1.ResourceList) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: r}}
	}
	podLevel := func(r corev1.ResourceList) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Requests: r}
	}
	tests := []struct {
		name             string
		spec             corev1.PodSpec
		wantCPU, wantMem int64
	}{
		{"no requests", corev1.PodSpec{Containers: []corev1.Container{ctr(nil), ctr(nil)}},
			2 * DefaultMilliCPURequest, 2 * DefaultMemoryRequest},
		{"one container without cpu", corev1.PodSpec{Containers: []corev1.Container{ctr(corev1.ResourceList{"cpu": q("1")}), ctr(nil)}},
			1000 + DefaultMilliCPURequest, 2 * DefaultMemoryRequest},
		{"pod-level cpu, a container names memory: no default at all",
			corev1.PodSpec{Containers: []corev1.Container{ctr(corev1.ResourceList{"memory": q("1Gi")}), ctr(nil)}, Resources: podLevel(corev1.ResourceList{"cpu": q("1")})},
			1000, 1 << 30},
		{"pod-level cpu, nothing names memory: the memory default per container",
			corev1.PodSpec{Containers: []corev1.Container{ctr(nil), ctr(nil)}, Resources: podLevel(corev1.ResourceList{"cpu": q("1")})},
			1000, 2 * DefaultMemoryRequest},
		{"pod-level memory, an init container names cpu (zero)",
			corev1.PodSpec{InitContainers: []corev1.Container{ctr(corev1.ResourceList{"cpu": q("0")})}, Containers: []corev1.Container{ctr(nil)},
				Resources: podLevel(corev1.ResourceList{"memory": q("2Gi")})},
			0, 2 << 30},
		{"pod-level memory, overhead names cpu",
			corev1.PodSpec{Containers: []corev1.Container{ctr(nil)}, Overhead: corev1.ResourceList{"cpu": q("50m")},
				Resources: podLevel(corev1.ResourceList{"memory": q("2Gi")})},
			50, 2 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NodeNonZeroRequests(&corev1.Pod{Spec: tt.spec})
			if got.MilliCPU != tt.wantCPU || got.Memory != tt.wantMem {
				t.Errorf("NodeNonZeroRequests = cpu %d memory %d, want cpu %d memory %d", got.MilliCPU, got.Memory, tt.wantCPU, tt.wantMem)
			}
		})
	}
}

// TestPodRequestsInPlaceResize: a container whose status reports its
// actual resources counts the largest of its desired, actual and
// allocated requests; when the resize is infeasible, only the actual and
// allocated ones; a sidecar's status counts too (upstream's
// determineContainerReqs under InPlacePodVerticalScaling).
func TestPodRequestsInPlaceResize(t *testing.T) {
	q := resource.MustParse
	always := corev1.ContainerRestartPolicyAlways
	cpu := func(v string) corev1.ResourceList { return corev1.ResourceList{corev1.ResourceCPU: q(v)} }
	status := func(name string, actual, allocated corev1.ResourceList) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Resources: &corev1.ResourceRequirements{Requests: actual}, AllocatedResources: allocated}
	}
	infeasible := []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}}
	tests := []struct {
		name           string
		spec           corev1.PodSpec
		status         corev1.PodStatus
		want           int64 // cpu, PodRequests(pod, false)
		wantSkip       int64 // cpu with SkipStatus
		wantNonZeroMem int64
	}{
		{"actual above desired", corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: cpu("1")}}}},
			corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{status("c", cpu("2500m"), nil)}}, 2500, 1000, DefaultMemoryRequest},
		{"allocated above both", corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: cpu("1")}}}},
			corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{status("c", cpu("500m"), cpu("2500m"))}}, 2500, 1000, DefaultMemoryRequest},
		{"allocated without actual resources is ignored", corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: cpu("1")}}}},
			corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c", AllocatedResources: cpu("3")}}}, 1000, 1000, DefaultMemoryRequest},
		{"infeasible: what the container has", corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: cpu("3")}}}},
			corev1.PodStatus{Conditions: infeasible, ContainerStatuses: []corev1.ContainerStatus{status("c", corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}, nil)}},
			1000, 3000, 1 << 30},
		{"sidecar status", corev1.PodSpec{InitContainers: []corev1.Container{{Name: "s", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: cpu("500m")}}},
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: cpu("500m")}}}},
			corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{status("s", cpu("2500m"), nil)}}, 3000, 1000, 2 * DefaultMemoryRequest},
		{"a plain init container's status does not count", corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i", Resources: corev1.ResourceRequirements{Requests: cpu("500m")}}},
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: cpu("500m")}}}},
			corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{status("i", cpu("2500m"), nil)}}, 500, 500, DefaultMemoryRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tt.spec, Status: tt.status}
			if got := PodRequests(pod, false).MilliCPU; got != tt.want {
				t.Errorf("PodRequests cpu = %d, want %d", got, tt.want)
			}
			if got := PodRequestsWith(pod, PodRequestsOptions{SkipStatus: true}).MilliCPU; got != tt.wantSkip {
				t.Errorf("PodRequestsWith(SkipStatus) cpu = %d, want %d", got, tt.wantSkip)
			}
			if got := PodRequests(pod, true).Memory; got != tt.wantNonZeroMem {
				t.Errorf("non-zero memory = %d, want %d", got, tt.wantNonZeroMem)
			}
		})
	}
}
