package controllerref

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Resolve returns the owner a controller reference names, looked up by
// name with get, when the reference is of kind and the object found has
// the reference's UID: an owner deleted and re-created under the same
// name does not inherit the old one's objects.
func Resolve[T metav1.Object](ref *metav1.OwnerReference, kind string, get func(name string) (T, error)) (T, bool) {
	var zero T
	if ref == nil || ref.Kind != kind {
		return zero, false
	}
	o, err := get(ref.Name)
	if err != nil || o.GetUID() != ref.UID {
		return zero, false
	}
	return o, true
}

// Selecting returns those of owners whose label selector (selector(owner))
// matches the labels lbls; an empty or invalid selector matches nothing,
// and neither does anything match an object without labels. Controllers
// use it to find the owners that may adopt an orphan.
func Selecting[T any](owners []T, selector func(T) *metav1.LabelSelector, lbls map[string]string) []T {
	if len(lbls) == 0 {
		return nil
	}
	var out []T
	for _, o := range owners {
		sel, err := metav1.LabelSelectorAsSelector(selector(o))
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(lbls)) {
			continue
		}
		out = append(out, o)
	}
	return out
}
