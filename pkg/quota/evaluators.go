package quota

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// The object count names of the typed evaluators.
const (
	PodCount     corev1.ResourceName = "count/pods"
	ServiceCount corev1.ResourceName = "count/services"
	PVCCount     corev1.ResourceName = "count/persistentvolumeclaims"

	storageClassSuffix = ".storageclass.storage.k8s.io/"
	// betaStorageClassAnnotation is the storage class of a claim before
	// spec.storageClassName existed (still honoured first, as upstream).
	betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"
)

var podResources = []corev1.ResourceName{
	PodCount, corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods,
}

var serviceResources = []corev1.ResourceName{
	ServiceCount, corev1.ResourceServices, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
}

var pvcResources = []corev1.ResourceName{PVCCount, corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage}

func one() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }

func Zero() resource.Quantity { return resource.Quantity{Format: resource.DecimalSI} }

// IsExtendedResourceName: a name outside kubernetes.io (and not
// requests.*) with a domain, as upstream's helper.
func IsExtendedResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	if !strings.Contains(s, "/") || strings.Contains(s, "kubernetes.io/") {
		return false
	}
	return true
}

// MatchingPodResources is the subset of names the pod evaluator tracks.
func MatchingPodResources(names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		s := string(n)
		switch {
		case slices.Contains(podResources, n),
			strings.HasPrefix(s, corev1.ResourceHugePagesPrefix),
			strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix),
			strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) && IsExtendedResourceName(corev1.ResourceName(strings.TrimPrefix(s, corev1.DefaultResourceRequestsPrefix))):
			out = append(out, n)
		}
	}
	return out
}

func MatchingServiceResources(names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		if slices.Contains(serviceResources, n) {
			out = append(out, n)
		}
	}
	return out
}

func MatchingPVCResources(names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, n := range names {
		s := string(n)
		if slices.Contains(pvcResources, n) ||
			strings.HasSuffix(s, storageClassSuffix+string(corev1.ResourceRequestsStorage)) ||
			strings.HasSuffix(s, storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims)) {
			out = append(out, n)
		}
	}
	return out
}

// QuotaPod reports whether a pod's compute resources count: not
// terminal, and not terminating past its grace period.
func QuotaPod(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil &&
		now.After(pod.DeletionTimestamp.Add(time.Duration(*pod.DeletionGracePeriodSeconds)*time.Second)) {
		return false
	}
	return true
}

// PodUsage is what a pod counts against a quota: count/pods always;
// pods and its requests and limits while QuotaPod.
func PodUsage(pod *corev1.Pod, now time.Time) corev1.ResourceList {
	result := corev1.ResourceList{PodCount: one()}
	if !QuotaPod(pod, now) {
		return result
	}
	requests, limits := podRequests(pod), podLimits(pod)
	result[corev1.ResourcePods] = one()
	for _, r := range []struct{ plain, req, lim corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	} {
		if q, ok := requests[r.plain]; ok {
			result[r.plain] = q
			result[r.req] = q
		}
		if q, ok := limits[r.plain]; ok {
			result[r.lim] = q
		}
	}
	for name, q := range requests {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			result[name] = q
			result[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(name))] = q
		}
		if IsExtendedResourceName(name) {
			result[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(name))] = q
		}
	}
	return result
}

func Add(dst corev1.ResourceList, src corev1.ResourceList) {
	for k, v := range src {
		sum := dst[k].DeepCopy()
		sum.Add(v)
		dst[k] = sum
	}
}

func maxInto(dst corev1.ResourceList, src corev1.ResourceList) {
	for k, v := range src {
		if cur, ok := dst[k]; !ok || v.Cmp(cur) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}

// podResourceList is upstream's PodRequests/PodLimits: the containers'
// sum, sidecars (restartable init containers) added, at least the largest
// init container (with the sidecars started before it), plus overhead;
// pod-level cpu and memory replace the containers' when set.
func podResourceList(pod *corev1.Pod, of func(corev1.ResourceRequirements) corev1.ResourceList, limits bool) corev1.ResourceList {
	reqs := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		Add(reqs, of(c.Resources))
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		r := of(c.Resources)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			Add(reqs, r)
			Add(sidecars, r)
			maxInto(initMax, sidecars)
			continue
		}
		tmp := corev1.ResourceList{}
		Add(tmp, r)
		Add(tmp, sidecars)
		maxInto(initMax, tmp)
	}
	maxInto(reqs, initMax)
	if pod.Spec.Resources != nil {
		for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := of(*pod.Spec.Resources)[n]; ok {
				reqs[n] = q.DeepCopy()
			}
		}
	}
	for n, q := range pod.Spec.Overhead {
		if _, ok := reqs[n]; ok || !limits {
			sum := reqs[n].DeepCopy()
			sum.Add(q)
			reqs[n] = sum
		}
	}
	return reqs
}

func podRequests(pod *corev1.Pod) corev1.ResourceList {
	return podResourceList(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }, false)
}

func podLimits(pod *corev1.Pod) corev1.ResourceList {
	return podResourceList(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Limits }, true)
}

// isBestEffort: no positive cpu or memory request or limit anywhere in the
// pod (its QoS class is BestEffort).
func isBestEffort(pod *corev1.Pod) bool {
	positive := func(l corev1.ResourceList) bool {
		for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := l[n]; ok && q.Sign() > 0 {
				return true
			}
		}
		return false
	}
	if pod.Spec.Resources != nil && (positive(pod.Spec.Resources.Requests) || positive(pod.Spec.Resources.Limits)) {
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if positive(c.Resources.Requests) || positive(c.Resources.Limits) {
				return false
			}
		}
	}
	return true
}

func isTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

func usesCrossNamespacePodAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	cross := func(t corev1.PodAffinityTerm) bool { return len(t.Namespaces) > 0 || t.NamespaceSelector != nil }
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	return slices.ContainsFunc(terms, cross)
}

// PodMatchesScope is upstream's podMatchesScopeFunc.
func PodMatchesScope(sel corev1.ScopedResourceSelectorRequirement, pod *corev1.Pod) (bool, error) {
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return isTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !isTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return isBestEffort(pod), nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !isBestEffort(pod), nil
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		s, err := scopeSelector(sel)
		if err != nil {
			return false, err
		}
		return s.Matches(labels.Set{string(corev1.ResourceQuotaScopePriorityClass): pod.Spec.PriorityClassName}), nil
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespacePodAffinity(pod), nil
	}
	return false, nil
}

// scopeSelector is upstream's ScopedResourceSelectorRequirementsAsSelector.
func scopeSelector(sel corev1.ScopedResourceSelectorRequirement) (labels.Selector, error) {
	var op selection.Operator
	switch sel.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return nil, &unknownOperatorError{string(sel.Operator)}
	}
	r, err := labels.NewRequirement(string(sel.ScopeName), op, sel.Values)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*r), nil
}

type unknownOperatorError struct{ op string }

func (e *unknownOperatorError) Error() string {
	return "\"" + e.op + "\" is not a valid scope selector operator"
}

// ServiceUsage is what a service counts: one service; its ports as node
// ports when NodePort or LoadBalancer; one load balancer when LoadBalancer.
func ServiceUsage(svc *corev1.Service) corev1.ResourceList {
	ports := *resource.NewQuantity(int64(len(svc.Spec.Ports)), resource.DecimalSI)
	result := corev1.ResourceList{
		ServiceCount: one(), corev1.ResourceServices: one(),
		corev1.ResourceServicesLoadBalancers: Zero(), corev1.ResourceServicesNodePorts: Zero(),
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		result[corev1.ResourceServicesNodePorts] = ports
	case corev1.ServiceTypeLoadBalancer:
		result[corev1.ResourceServicesNodePorts] = ports
		result[corev1.ResourceServicesLoadBalancers] = one()
	}
	return result
}

// QuotaServiceType is the service type quota cares about ("" for the
// others).
func QuotaServiceType(svc *corev1.Service) corev1.ServiceType {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		return svc.Spec.Type
	}
	return ""
}

// ClaimClass is the claim's storage class (the beta annotation first), as
// upstream's GetPersistentVolumeClaimClass.
func ClaimClass(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[betaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// PVCStorage is the storage a claim is charged: its request (rounded up
// to a whole byte), or what was allocated to it when that is more.
func PVCStorage(pvc *corev1.PersistentVolumeClaim) *resource.Quantity {
	var out *resource.Quantity
	if req, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		q := req.DeepCopy()
		q.RoundUp(0)
		out = &q
	}
	if alloc, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && (out == nil || alloc.Cmp(*out) > 0) {
		q := alloc.DeepCopy()
		q.RoundUp(0)
		out = &q
	}
	return out
}

// PVCUsage is what a claim counts: one claim (also against its class) and
// its storage (also against its class).
func PVCUsage(pvc *corev1.PersistentVolumeClaim) corev1.ResourceList {
	result := corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: one(), PVCCount: one()}
	class := ClaimClass(pvc)
	if class != "" {
		result[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one()
	}
	if s := PVCStorage(pvc); s != nil {
		result[corev1.ResourceRequestsStorage] = *s
		if class != "" {
			result[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = *s
		}
	}
	return result
}
