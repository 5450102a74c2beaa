package quota

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PodMatchesQuota: the pod matches every scope and every expression of
// the scopeSelector.
func PodMatchesQuota(q *corev1.ResourceQuota, p *corev1.Pod) (bool, error) {
	for _, s := range q.Spec.Scopes {
		ok, err := PodMatchesScope(corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists}, p)
		if err != nil || !ok {
			return false, err
		}
	}
	if q.Spec.ScopeSelector != nil {
		for _, e := range q.Spec.ScopeSelector.MatchExpressions {
			ok, err := PodMatchesScope(e, p)
			if err != nil || !ok {
				return false, err
			}
		}
	}
	return true, nil
}

// legacyCounts are the object counts upstream also names without count/.
var legacyCounts = map[corev1.ResourceName]schema.GroupResource{
	corev1.ResourceConfigMaps:             {Resource: "configmaps"},
	corev1.ResourceSecrets:                {Resource: "secrets"},
	corev1.ResourceReplicationControllers: {Resource: "replicationcontrollers"},
	corev1.ResourceQuotas:                 {Resource: "resourcequotas"},
}

// CountedResource is the resource an object count names
// (count/<resource>[.<group>], or a legacy name), except those the typed
// evaluators count.
func CountedResource(name corev1.ResourceName) (schema.GroupResource, bool) {
	if gr, ok := legacyCounts[name]; ok {
		return gr, true
	}
	s, ok := strings.CutPrefix(string(name), "count/")
	if !ok || name == PodCount || name == ServiceCount || name == PVCCount {
		return schema.GroupResource{}, false
	}
	res, group, _ := strings.Cut(s, ".")
	return schema.GroupResource{Group: group, Resource: res}, res != ""
}

func ResourceNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func Zeroed(ns []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range ns {
		out[n] = Zero()
	}
	return out
}

// mergeMasked adds to dst the values of src for the names in mask.
func MergeMasked(dst, src corev1.ResourceList, mask []corev1.ResourceName) {
	for _, n := range mask {
		if v, ok := src[n]; ok {
			sum := dst[n].DeepCopy()
			sum.Add(v)
			dst[n] = sum
		}
	}
}

// equalLists compares quantities by value, as upstream's quota.Equals.
func Equals(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
