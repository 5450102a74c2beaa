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
