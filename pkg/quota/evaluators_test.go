package quota

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func ctr(req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

// show renders a resource list as sorted name=value pairs.
func show(l corev1.ResourceList) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		v := l[k]
		out = append(out, fmt.Sprintf("%s=%s", k, v.String()))
	}
	return strings.Join(out, " ")
}

func TestPodUsage(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	grace := int64(30)
	tests := []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{name: "best effort", pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}}},
			want: "count/pods=1 pods=1"},
		{name: "containers summed",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
				ctr(rl("cpu", "100m", "memory", "64Mi"), rl("cpu", "200m")),
				ctr(rl("cpu", "250m", "ephemeral-storage", "1Gi"), rl("cpu", "300m", "memory", "128Mi")),
			}}},
			want: "count/pods=1 cpu=350m ephemeral-storage=1Gi limits.cpu=500m limits.memory=128Mi memory=64Mi pods=1 requests.cpu=350m requests.ephemeral-storage=1Gi requests.memory=64Mi"},
		{name: "the largest init container wins",
			pod:  corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{ctr(rl("cpu", "2"), nil)}, Containers: []corev1.Container{ctr(rl("cpu", "500m"), nil)}}},
			want: "count/pods=1 cpu=2 pods=1 requests.cpu=2"},
		{name: "sidecars add up, and run beside later init containers",
			pod: corev1.Pod{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					{Name: "side", Image: "i", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m")}},
					ctr(rl("cpu", "1"), nil),
				},
				Containers: []corev1.Container{ctr(rl("cpu", "500m"), nil)}}},
			want: "count/pods=1 cpu=1100m pods=1 requests.cpu=1100m"},
		{name: "overhead added to requests, and to limits that are set",
			pod:  corev1.Pod{Spec: corev1.PodSpec{Overhead: rl("cpu", "10m", "memory", "1Mi"), Containers: []corev1.Container{ctr(rl("cpu", "100m"), rl("cpu", "100m"))}}},
			want: "count/pods=1 cpu=110m limits.cpu=110m memory=1Mi pods=1 requests.cpu=110m requests.memory=1Mi"},
		{name: "pod-level resources replace the containers'",
			pod:  corev1.Pod{Spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: rl("cpu", "1")}, Containers: []corev1.Container{ctr(rl("cpu", "100m"), nil)}}},
			want: "count/pods=1 cpu=1 pods=1 requests.cpu=1"},
		{name: "hugepages and extended resources",
			pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("hugepages-2Mi", "4Mi", "example.com/gpu", "2"), nil)}}},
			want: "count/pods=1 hugepages-2Mi=4Mi pods=1 requests.example.com/gpu=2 requests.hugepages-2Mi=4Mi"},
		{name: "a succeeded pod counts only as an object",
			pod:  corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1"), nil)}}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
			want: "count/pods=1"},
		{name: "terminating within its grace period still counts",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: now.Add(-10 * time.Second)}, DeletionGracePeriodSeconds: &grace},
				Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1"), nil)}}},
			want: "count/pods=1 cpu=1 pods=1 requests.cpu=1"},
		{name: "terminating past its grace period does not",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: now.Add(-31 * time.Second)}, DeletionGracePeriodSeconds: &grace},
				Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1"), nil)}}},
			want: "count/pods=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := show(PodUsage(&tt.pod, now)); got != tt.want {
				t.Errorf("PodUsage =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

func TestPodMatchesScope(t *testing.T) {
	deadline := int64(60)
	bestEffort := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}}}
	burstable := &corev1.Pod{Spec: corev1.PodSpec{ActiveDeadlineSeconds: &deadline, PriorityClassName: "high",
		Containers: []corev1.Container{ctr(rl("memory", "1Mi"), nil)}}}
	crossNS := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}, Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "k", Namespaces: []string{"other"}}}}}}}
	sel := func(scope corev1.ResourceQuotaScope, op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: scope, Operator: op, Values: values}
	}
	tests := []struct {
		sel  corev1.ScopedResourceSelectorRequirement
		pod  *corev1.Pod
		want bool
	}{
		{sel(corev1.ResourceQuotaScopeBestEffort, corev1.ScopeSelectorOpExists), bestEffort, true},
		{sel(corev1.ResourceQuotaScopeBestEffort, corev1.ScopeSelectorOpExists), burstable, false},
		{sel(corev1.ResourceQuotaScopeNotBestEffort, corev1.ScopeSelectorOpExists), burstable, true},
		{sel(corev1.ResourceQuotaScopeTerminating, corev1.ScopeSelectorOpExists), burstable, true},
		{sel(corev1.ResourceQuotaScopeTerminating, corev1.ScopeSelectorOpExists), bestEffort, false},
		{sel(corev1.ResourceQuotaScopeNotTerminating, corev1.ScopeSelectorOpExists), bestEffort, true},
		{sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpIn, "high", "mid"), burstable, true},
		{sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpIn, "low"), burstable, false},
		{sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpNotIn, "low"), burstable, true},
		{sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpExists), bestEffort, false},
		// As upstream: the pod's class is always a key (maybe ""), so
		// DoesNotExist never matches.
		{sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpDoesNotExist), bestEffort, false},
		{sel(corev1.ResourceQuotaScopeCrossNamespacePodAffinity, corev1.ScopeSelectorOpExists), crossNS, true},
		{sel(corev1.ResourceQuotaScopeCrossNamespacePodAffinity, corev1.ScopeSelectorOpExists), burstable, false},
	}
	for i, tt := range tests {
		got, err := PodMatchesScope(tt.sel, tt.pod)
		if err != nil || got != tt.want {
			t.Errorf("%d: PodMatchesScope(%v %v %v) = %v, %v; want %v", i, tt.sel.ScopeName, tt.sel.Operator, tt.sel.Values, got, err, tt.want)
		}
	}
}

func TestServiceAndClaimUsage(t *testing.T) {
	ports := []corev1.ServicePort{{Port: 80}, {Port: 443}}
	for _, tt := range []struct {
		svc  corev1.Service
		want string
	}{
		{corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports}}, "count/services=1 services=1 services.loadbalancers=0 services.nodeports=0"},
		{corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports}}, "count/services=1 services=1 services.loadbalancers=0 services.nodeports=2"},
		{corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports}}, "count/services=1 services=1 services.loadbalancers=1 services.nodeports=2"},
	} {
		if got := show(ServiceUsage(&tt.svc)); got != tt.want {
			t.Errorf("ServiceUsage(%s) = %s, want %s", tt.svc.Spec.Type, got, tt.want)
		}
	}
	fast := "fast"
	for _, tt := range []struct {
		pvc  corev1.PersistentVolumeClaim
		want string
	}{
		{corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}}},
			"count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=1Gi"},
		{corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &fast, Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}},
			Status: corev1.PersistentVolumeClaimStatus{AllocatedResources: rl("storage", "2Gi")}},
			"count/persistentvolumeclaims=1 fast.storageclass.storage.k8s.io/persistentvolumeclaims=1 fast.storageclass.storage.k8s.io/requests.storage=2Gi persistentvolumeclaims=1 requests.storage=2Gi"},
		{corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{betaStorageClassAnnotation: "old"}},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &fast}},
			"count/persistentvolumeclaims=1 old.storageclass.storage.k8s.io/persistentvolumeclaims=1 persistentvolumeclaims=1"},
	} {
		if got := show(PVCUsage(&tt.pvc)); got != tt.want {
			t.Errorf("PVCUsage = %s, want %s", got, tt.want)
		}
	}
}
