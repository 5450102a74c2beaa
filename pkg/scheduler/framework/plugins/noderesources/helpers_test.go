package noderesources

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// Test fixtures after upstream's noderesources tests.
var (
	extendedResourceA     = corev1.ResourceName("example.com/aaa")
	extendedResourceB     = corev1.ResourceName("example.com/bbb")
	kubernetesIOResourceA = corev1.ResourceName("kubernetes.io/something")
	kubernetesIOResourceB = corev1.ResourceName("subdomain.kubernetes.io/something")
	hugePageResourceA     = corev1.ResourceName(corev1.ResourceHugePagesPrefix + "2Mi")

	defaultResources = []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
	extendedRes      = "abc.com/xyz"
	extendedResSet   = []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: extendedRes, Weight: 1}}
)

func makeResources(milliCPU, memory, pods, extendedA, storage, hugePageA int64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memory, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		extendedResourceA:               *resource.NewQuantity(extendedA, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(storage, resource.BinarySI),
		hugePageResourceA:               *resource.NewQuantity(hugePageA, resource.BinarySI),
	}
}

// newResourcePod has one container per usage, requesting it.
func newResourcePod(usage ...framework.Resource) *corev1.Pod {
	var containers []corev1.Container
	for _, u := range usage {
		rl := corev1.ResourceList{
			corev1.ResourceCPU:              *resource.NewMilliQuantity(u.MilliCPU, resource.DecimalSI),
			corev1.ResourceMemory:           *resource.NewQuantity(u.Memory, resource.BinarySI),
			corev1.ResourcePods:             *resource.NewQuantity(int64(u.AllowedPodNumber), resource.BinarySI),
			corev1.ResourceEphemeralStorage: *resource.NewQuantity(u.EphemeralStorage, resource.BinarySI),
		}
		for n, q := range u.ScalarResources {
			rl[n] = *resource.NewQuantity(q, resource.DecimalSI)
		}
		containers = append(containers, corev1.Container{Resources: corev1.ResourceRequirements{Requests: rl}})
	}
	return &corev1.Pod{Spec: corev1.PodSpec{Containers: containers}}
}

func newResourceInitPod(pod *corev1.Pod, usage ...framework.Resource) *corev1.Pod {
	pod.Spec.InitContainers = newResourcePod(usage...).Spec.Containers
	return pod
}

func newResourceOverheadPod(pod *corev1.Pod, overhead corev1.ResourceList) *corev1.Pod {
	pod.Spec.Overhead = overhead
	return pod
}

func newPodLevelResourcesPod(pod *corev1.Pod, r corev1.ResourceRequirements) *corev1.Pod {
	pod.Spec.Resources = &r
	return pod
}

func errReason(n corev1.ResourceName) string { return fmt.Sprintf("Insufficient %v", n) }

// podReq is upstream's st.MakePod().Req(r1).Req(r2)...: one container
// per map, quantities parsed ("3000" cpu is 3000 cores).
func podReq(reqs ...map[corev1.ResourceName]string) *corev1.Pod {
	p := &corev1.Pod{}
	for i, r := range reqs {
		rl := corev1.ResourceList{}
		for n, v := range r {
			rl[n] = resource.MustParse(v)
		}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("con%d", i), Image: "pause", Resources: corev1.ResourceRequirements{Requests: rl}})
	}
	return p
}

func onNode(p *corev1.Pod, node string) *corev1.Pod { p.Spec.NodeName = node; return p }

func withUID(p *corev1.Pod, name string, uid types.UID) *corev1.Pod {
	p.Name, p.UID = name, uid
	return p
}

// withSidecar adds a restartable init container requesting r.
func withSidecar(p *corev1.Pod, r map[corev1.ResourceName]string) *corev1.Pod {
	rl := corev1.ResourceList{}
	for n, v := range r {
		rl[n] = resource.MustParse(v)
	}
	p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "sidecar", Image: "pause",
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: corev1.ResourceRequirements{Requests: rl}})
	return p
}

// stNode is upstream's st.MakeNode().Name(name).Capacity(c): capacity
// and allocatable c plus 32 pods.
func stNode(name string, c map[corev1.ResourceName]string) *corev1.Node {
	rl := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("32")}
	for n, v := range c {
		rl[n] = resource.MustParse(v)
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl}}
}

// makeNode is upstream's test_util makeNode: cpu in milli, memory in
// bytes, extended resources, no pods entry.
func makeNode(name string, milliCPU, memory int64, extended map[string]int64) *corev1.Node {
	rl := corev1.ResourceList{}
	for n, q := range extended {
		rl[corev1.ResourceName(n)] = *resource.NewQuantity(q, resource.DecimalSI)
	}
	rl[corev1.ResourceCPU] = *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)
	rl[corev1.ResourceMemory] = *resource.NewQuantity(memory, resource.BinarySI)
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl}}
}

type rl = map[corev1.ResourceName]string
