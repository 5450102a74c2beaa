package quota

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Evaluator is upstream's quota.Evaluator for one resource, without its
// listing (the controller lists, admission charges one object).
type Evaluator struct {
	GroupResource schema.GroupResource
	// MatchingResources is the subset of quota resource names it tracks.
	MatchingResources func([]corev1.ResourceName) []corev1.ResourceName
	// Usage is what one object counts at time now.
	Usage func(obj runtime.Object, now time.Time) (corev1.ResourceList, error)
	// MatchesScope reports whether obj is inside one scope requirement;
	// nil: no scoped quota ever matches (upstream's MatchesNoScopeFunc).
	MatchesScope func(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)
	// Constraints rejects an object that does not say what the quota
	// requires it to (nil: none).
	Constraints func(required []corev1.ResourceName, obj runtime.Object) error
}

var (
	grPods     = schema.GroupResource{Resource: "pods"}
	grServices = schema.GroupResource{Resource: "services"}
	grPVCs     = schema.GroupResource{Resource: "persistentvolumeclaims"}
)

// ObjectCountName is count/<resource>[.<group>], upstream's
// ObjectCountQuotaResourceNameFor.
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// EvaluatorFor is the evaluator of a resource: the typed ones for pods,
// services and claims, an object count evaluator (count/<resource>.<group>
// and the legacy name where upstream has one) for everything else.
func EvaluatorFor(gr schema.GroupResource) *Evaluator {
	switch gr {
	case grPods:
		return &Evaluator{GroupResource: gr, MatchingResources: MatchingPodResources,
			Usage: func(obj runtime.Object, now time.Time) (corev1.ResourceList, error) {
				p, err := asPod(obj)
				if err != nil {
					return nil, err
				}
				return PodUsage(p, now), nil
			},
			MatchesScope: func(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
				p, err := asPod(obj)
				if err != nil {
					return false, err
				}
				return PodMatchesScope(sel, p)
			},
			Constraints: func(required []corev1.ResourceName, obj runtime.Object) error {
				p, err := asPod(obj)
				if err != nil {
					return err
				}
				return PodConstraints(required, p)
			},
		}
	case grServices:
		return &Evaluator{GroupResource: gr, MatchingResources: MatchingServiceResources,
			Usage: func(obj runtime.Object, _ time.Time) (corev1.ResourceList, error) {
				s, ok := obj.(*corev1.Service)
				if !ok {
					return nil, fmt.Errorf("unexpected object %T, want *v1.Service", obj)
				}
				return ServiceUsage(s), nil
			}}
	case grPVCs:
		return &Evaluator{GroupResource: gr, MatchingResources: MatchingPVCResources,
			Usage: func(obj runtime.Object, _ time.Time) (corev1.ResourceList, error) {
				c, ok := obj.(*corev1.PersistentVolumeClaim)
				if !ok {
					return nil, fmt.Errorf("unexpected object %T, want *v1.PersistentVolumeClaim", obj)
				}
				return PVCUsage(c), nil
			}}
	}
	names := []corev1.ResourceName{ObjectCountName(gr)}
	for legacy, lgr := range legacyCounts {
		if lgr == gr {
			names = append(names, legacy)
		}
	}
	return &Evaluator{GroupResource: gr,
		MatchingResources: func(in []corev1.ResourceName) []corev1.ResourceName {
			var out []corev1.ResourceName
			for _, n := range in {
				if slices.Contains(names, n) {
					out = append(out, n)
				}
			}
			return out
		},
		Usage: func(runtime.Object, time.Time) (corev1.ResourceList, error) {
			out := corev1.ResourceList{}
			for _, n := range names {
				out[n] = One()
			}
			return out, nil
		}}
}

func asPod(obj runtime.Object) (*corev1.Pod, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T, want *v1.Pod", obj)
	}
	return p, nil
}

// ScopeSelectors are a quota's scopes (as Exists requirements) and its
// scopeSelector's expressions.
func ScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// Matches is upstream's generic.Matches: the quota's status.hard names a
// resource the evaluator tracks and obj is inside every scope.
func (e *Evaluator) Matches(q *corev1.ResourceQuota, obj runtime.Object) (bool, error) {
	if len(e.MatchingResources(ResourceNames(q.Status.Hard))) == 0 {
		return false, nil
	}
	for _, sel := range ScopeSelectors(q) {
		if e.MatchesScope == nil {
			return false, nil
		}
		ok, err := e.MatchesScope(sel, obj)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// validationSet are the compute resources a quota obliges every container
// to state (upstream's backward-compatibility rule).
var validationSet = []corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
}

// PodConstraints is upstream's pod evaluator Constraints: when a quota
// tracks cpu or memory requests or limits, every container and init
// container must state them ("must specify limits.cpu for: a,b;
// requests.memory for: c"), unless the pod sets pod-level resources.
func PodConstraints(required []corev1.ResourceName, pod *corev1.Pod) error {
	if pod.Spec.Resources != nil && (len(pod.Spec.Resources.Requests) > 0 || len(pod.Spec.Resources.Limits) > 0) {
		return nil
	}
	var need []corev1.ResourceName
	for _, r := range required {
		if slices.Contains(validationSet, r) && !slices.Contains(need, r) {
			need = append(need, r)
		}
	}
	missing := map[corev1.ResourceName][]string{}
	check := func(c *corev1.Container) {
		has := containerComputeNames(c.Resources)
		for _, r := range need {
			if !has[r] && !slices.Contains(missing[r], c.Name) {
				missing[r] = append(missing[r], c.Name)
			}
		}
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i])
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range slices.Sorted(maps.Keys(missing)) {
		ns := missing[r]
		slices.Sort(ns)
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(ns, ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// containerComputeNames are the compute quota names one container states.
func containerComputeNames(r corev1.ResourceRequirements) map[corev1.ResourceName]bool {
	out := map[corev1.ResourceName]bool{}
	for _, x := range []struct{ plain, req, lim corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
	} {
		if _, ok := r.Requests[x.plain]; ok {
			out[x.plain], out[x.req] = true, true
		}
		if _, ok := r.Limits[x.plain]; ok {
			out[x.lim] = true
		}
	}
	return out
}

// One is a count of one.
func One() resource.Quantity { return one() }

// Mask is the part of l named in names.
func Mask(l corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range l {
		if slices.Contains(names, k) {
			out[k] = v.DeepCopy()
		}
	}
	return out
}

// Sum is a+b.
func Sum(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	Add(out, a)
	Add(out, b)
	return out
}

// SubtractNonNegative is a-b with negative results as zero, every name of
// either list present (upstream's SubtractWithNonNegativeResult).
func SubtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range a {
		q := v.DeepCopy()
		if o, ok := b[k]; ok {
			q.Sub(o)
		}
		if q.Sign() <= 0 {
			q = resource.MustParse("0")
		}
		out[k] = q
	}
	for k := range b {
		if _, ok := out[k]; !ok {
			out[k] = resource.MustParse("0")
		}
	}
	return out
}

// RemoveZeros drops zero quantities.
func RemoveZeros(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range l {
		if !v.IsZero() {
			out[k] = v
		}
	}
	return out
}

// IsNegative names the negative quantities.
func IsNegative(l corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for k, v := range l {
		if v.Sign() < 0 {
			out = append(out, k)
		}
	}
	return out
}

// LessThanOrEqual reports whether a <= b for every name of b that a has,
// and names the ones exceeded.
func LessThanOrEqual(a, b corev1.ResourceList) (bool, []corev1.ResourceName) {
	var exceeded []corev1.ResourceName
	for k, v := range b {
		if o, ok := a[k]; ok && o.Cmp(v) > 0 {
			exceeded = append(exceeded, k)
		}
	}
	return len(exceeded) == 0, exceeded
}

// String renders a list as upstream's quota admission does:
// sorted name=quantity pairs joined by commas.
func String(l corev1.ResourceList) string {
	var parts []string
	for _, k := range ResourceNames(l) {
		v := l[k]
		parts = append(parts, string(k)+"="+v.String())
	}
	return strings.Join(parts, ",")
}
