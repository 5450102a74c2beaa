package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// Default requests the scheduler assumes for scoring when a container
// requests no CPU or memory, as upstream's (so that many zero-request
// pods still spread): 0.1 CPU and 200 MB.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// Resource is an amount of compute resources in the scheduler's units:
// milli-CPU, bytes, a pod count, and everything else (extended resources,
// hugepages) by name.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int
	ScalarResources  map[corev1.ResourceName]int64
}

// NewResource converts a ResourceList.
func NewResource(rl corev1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds every quantity of rl.
func (r *Resource) Add(rl corev1.ResourceList) {
	if r == nil {
		return
	}
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory += q.Value()
		case corev1.ResourcePods:
			r.AllowedPodNumber += int(q.Value())
		case corev1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		default:
			if IsScalarResourceName(name) {
				r.AddScalar(name, q.Value())
			}
		}
	}
}

// AddResource adds o.
func (r *Resource) AddResource(o *Resource) {
	if o == nil {
		return
	}
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for n, v := range o.ScalarResources {
		r.AddScalar(n, v)
	}
}

// SubResource subtracts o.
func (r *Resource) SubResource(o *Resource) {
	if o == nil {
		return
	}
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for n, v := range o.ScalarResources {
		r.AddScalar(n, -v)
	}
}

// AddScalar adds v of the scalar resource name.
func (r *Resource) AddScalar(name corev1.ResourceName, v int64) {
	r.SetScalar(name, r.ScalarResources[name]+v)
}

// SetScalar sets the scalar resource name.
func (r *Resource) SetScalar(name corev1.ResourceName, v int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[corev1.ResourceName]int64{}
	}
	r.ScalarResources[name] = v
}

// Clone deep-copies r.
func (r *Resource) Clone() *Resource {
	out := *r
	if r.ScalarResources != nil {
		out.ScalarResources = make(map[corev1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			out.ScalarResources[k] = v
		}
	}
	return &out
}

// IsZero reports whether r holds nothing.
func (r *Resource) IsZero() bool {
	if r.MilliCPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 || r.AllowedPodNumber != 0 {
		return false
	}
	for _, v := range r.ScalarResources {
		if v != 0 {
			return false
		}
	}
	return true
}

// Get returns the amount of one resource in the Resource's units.
func (r *Resource) Get(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourcePods:
		return int64(r.AllowedPodNumber)
	case corev1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	}
	return r.ScalarResources[name]
}

// IsScalarResourceName reports names kept in ScalarResources, as
// upstream's scheduler util: extended resources (domain-prefixed, not
// kubernetes.io/), hugepages-*, prefixed native resources
// ("kubernetes.io/x", "foo.kubernetes.io/x") and attachable-volumes-*.
func IsScalarResourceName(name corev1.ResourceName) bool {
	return IsExtendedResourceName(name) || isPrefixed(string(name), corev1.ResourceHugePagesPrefix) ||
		isPrefixedNativeResource(string(name)) || isPrefixed(string(name), corev1.ResourceAttachableVolumesPrefix)
}

// isPrefixedNativeResource: a name with a domain in the kubernetes.io
// namespace.
func isPrefixedNativeResource(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return isNativeResource(s)
		}
	}
	return false
}

// IsExtendedResourceName reports a resource outside the kubernetes.io
// namespace with a domain prefix ("example.com/gpu"), as upstream's
// helper; requests.* quota names are not.
func IsExtendedResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if isNativeResource(s) || isPrefixed(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

func isNativeResource(s string) bool {
	slash := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			slash = i
			break
		}
	}
	if slash < 0 {
		return true
	}
	domain := s[:slash]
	return domain == "kubernetes.io" || len(domain) > len(".kubernetes.io") && domain[len(domain)-len(".kubernetes.io"):] == ".kubernetes.io"
}

func isPrefixed(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// PodRequests computes what a pod asks of a node, as upstream's
// resource helper does for the scheduler: the sum of the regular and
// restartable init ("sidecar") containers, or the largest single init
// container step (plus the sidecars started before it) when that is
// more, plus the pod overhead. Pod-level requests (spec.resources),
// when set, replace the container sum for CPU, memory and hugepages-*
// (upstream's supported pod-level resources). A container (or sidecar)
// being resized in place counts the largest of its desired, actual and
// allocated requests (only its actual and allocated ones when the resize
// is infeasible). With nonZero, a container without a CPU or
// memory request counts DefaultMilliCPURequest / DefaultMemoryRequest
// (the scheduler's "non-zero" requests used for scoring).
func PodRequests(pod *corev1.Pod, nonZero bool) *Resource {
	return PodRequestsWith(pod, PodRequestsOptions{NonZeroCPU: nonZero, NonZeroMemory: nonZero})
}

// PodRequestsOptions choose what PodRequestsWith counts (upstream's
// resource helper PodResourcesOptions, as the scheduler uses them).
type PodRequestsOptions struct {
	// NonZeroCPU and NonZeroMemory: a container without a CPU (memory)
	// request counts DefaultMilliCPURequest (DefaultMemoryRequest).
	NonZeroCPU, NonZeroMemory bool
	// SkipPodLevel ignores pod-level requests (spec.resources), as
	// upstream's NodeResourcesFit does when it scores (its scorer never
	// gets the PodLevelResources feature flag).
	SkipPodLevel bool
	// SkipStatus ignores the containers' actual (status) requests, as
	// NodeResourcesFit's scoring does likewise.
	SkipStatus bool
}

// PodRequestsWith is PodRequests with options.
func PodRequestsWith(pod *corev1.Pod, o PodRequestsOptions) *Resource {
	var statuses map[string]*corev1.ContainerStatus
	infeasible := false
	if !o.SkipStatus {
		statuses = resizeStatuses(pod)
		if statuses != nil {
			infeasible = resizeInfeasible(pod)
		}
	}
	reqs := &Resource{}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		reqs.AddResource(containerRequests(c.Resources.Requests, statuses[c.Name], infeasible, o))
	}
	sidecars := &Resource{}
	initMax := &Resource{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		var st *corev1.ContainerStatus
		if sidecar {
			st = statuses[c.Name]
		}
		cr := containerRequests(c.Resources.Requests, st, infeasible, o)
		if sidecar {
			reqs.AddResource(cr)
			sidecars.AddResource(cr)
			cr = sidecars.Clone()
		} else {
			cr.AddResource(sidecars)
		}
		maxInto(initMax, cr)
	}
	maxInto(reqs, initMax)
	if pod.Spec.Resources != nil && !o.SkipPodLevel {
		for name, q := range pod.Spec.Resources.Requests {
			switch {
			case name == corev1.ResourceCPU:
				reqs.MilliCPU = q.MilliValue()
			case name == corev1.ResourceMemory:
				reqs.Memory = q.Value()
			case isPrefixed(string(name), corev1.ResourceHugePagesPrefix):
				reqs.SetScalar(name, q.Value())
			}
		}
	}
	reqs.Add(pod.Spec.Overhead)
	return reqs
}

// NodeNonZeroRequests is what a pod on a node counts in the node's
// NonZeroRequested, as upstream's PodInfo.CalculateResource: the
// non-zero requests, except that for a pod with pod-level requests a
// container gets the default CPU (memory) request only when neither the
// pod nor any of its containers (nor its overhead) names CPU (memory).
func NodeNonZeroRequests(pod *corev1.Pod) *Resource {
	if !podLevelRequestsSet(pod) {
		return PodRequests(pod, true)
	}
	return PodRequestsWith(pod, PodRequestsOptions{
		NonZeroCPU:    !podNamesRequest(pod, corev1.ResourceCPU),
		NonZeroMemory: !podNamesRequest(pod, corev1.ResourceMemory),
	})
}

// podLevelRequestsSet: spec.resources requests a resource that may be
// set at pod level (upstream's IsPodLevelRequestsSet).
func podLevelRequestsSet(pod *corev1.Pod) bool {
	if pod.Spec.Resources == nil {
		return false
	}
	for name := range pod.Spec.Resources.Requests {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || isPrefixed(string(name), corev1.ResourceHugePagesPrefix) {
			return true
		}
	}
	return false
}

// podNamesRequest: the pod's aggregated requests have an entry for name
// (a container, its status, the pod level or the overhead names it, even
// as zero).
func podNamesRequest(pod *corev1.Pod, name corev1.ResourceName) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if _, ok := cs[i].Resources.Requests[name]; ok {
				return true
			}
		}
	}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, cs := range list {
			if cs.Resources != nil {
				_, a := cs.Resources.Requests[name]
				_, b := cs.AllocatedResources[name]
				if a || b {
					return true
				}
			}
		}
	}
	if _, ok := pod.Spec.Resources.Requests[name]; ok {
		return true
	}
	_, ok := pod.Spec.Overhead[name]
	return ok
}

// resizeStatuses are the statuses (containers' and init containers', by
// name) that report the container's actual resources; nil when none does.
func resizeStatuses(pod *corev1.Pod) map[string]*corev1.ContainerStatus {
	var out map[string]*corev1.ContainerStatus
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Resources == nil {
				continue
			}
			if out == nil {
				out = map[string]*corev1.ContainerStatus{}
			}
			out[list[i].Name] = &list[i]
		}
	}
	return out
}

// resizeInfeasible: the kubelet found the pod's resize infeasible
// (PodResizePending with reason Infeasible).
func resizeInfeasible(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodResizePending {
			return c.Reason == corev1.PodReasonInfeasible
		}
	}
	return false
}

// containerRequests is a container's requests: with a status reporting
// its actual resources (a resize in progress), the largest of the
// desired (spec), actual and allocated requests, or, when the resize is
// infeasible, the larger of the actual and allocated ones (upstream's
// determineContainerReqs); then the non-zero defaults for what none of
// them names.
func containerRequests(spec corev1.ResourceList, status *corev1.ContainerStatus, infeasible bool, o PodRequestsOptions) *Resource {
	var r *Resource
	named := func(name corev1.ResourceName) bool { _, ok := spec[name]; return ok }
	if status == nil {
		r = NewResource(spec)
	} else {
		if infeasible {
			r = NewResource(status.Resources.Requests)
		} else {
			r = NewResource(spec)
			maxInto(r, NewResource(status.Resources.Requests))
		}
		maxInto(r, NewResource(status.AllocatedResources))
		named = func(name corev1.ResourceName) bool {
			_, a := status.Resources.Requests[name]
			_, b := status.AllocatedResources[name]
			_, c := spec[name]
			return a || b || (c && !infeasible)
		}
	}
	if o.NonZeroCPU && !named(corev1.ResourceCPU) {
		r.MilliCPU = DefaultMilliCPURequest
	}
	if o.NonZeroMemory && !named(corev1.ResourceMemory) {
		r.Memory = DefaultMemoryRequest
	}
	return r
}

// maxInto sets every amount of r to the larger of r's and o's.
func maxInto(r, o *Resource) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	r.AllowedPodNumber = max(r.AllowedPodNumber, o.AllowedPodNumber)
	for n, v := range o.ScalarResources {
		if v > r.ScalarResources[n] {
			r.SetScalar(n, v)
		}
	}
}
