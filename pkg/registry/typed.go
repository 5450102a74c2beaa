package registry

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Typed adapters let group packages plug their typed functions into a
// Strategy without writing type assertions.

// Default adapts a typed defaulting function.
func Default[T runtime.Object](f func(T)) func(runtime.Object) {
	return func(o runtime.Object) { f(o.(T)) }
}

// Validate adapts a typed create validation.
func Validate[T runtime.Object](f func(T) field.ErrorList) func(runtime.Object) field.ErrorList {
	return func(o runtime.Object) field.ErrorList { return f(o.(T)) }
}

// ValidateUpdate adapts a typed update validation.
func ValidateUpdate[T runtime.Object](f func(T, T) field.ErrorList) func(runtime.Object, runtime.Object) field.ErrorList {
	return func(o, old runtime.Object) field.ErrorList { return f(o.(T), old.(T)) }
}

// Prepare adapts a typed preparation of a new object.
func Prepare[T runtime.Object](f func(T)) func(runtime.Object) {
	return func(o runtime.Object) { f(o.(T)) }
}

// PrepareUpdate adapts a typed preparation of an update.
func PrepareUpdate[T runtime.Object](f func(obj, old T)) func(runtime.Object, runtime.Object) {
	return func(o, old runtime.Object) { f(o.(T), old.(T)) }
}

// Fields adapts a typed field-selector extractor.
func Fields[T runtime.Object](f func(T) map[string]string) func(runtime.Object) map[string]string {
	return func(o runtime.Object) map[string]string { return f(o.(T)) }
}

// ScaleOf builds the Scale view shared by every scalable workload.
func ScaleOf(m metav1.Object, specReplicas *int32, statusReplicas int32, selector *metav1.LabelSelector) *autoscalingv1.Scale {
	s := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		},
		Status: autoscalingv1.ScaleStatus{Replicas: statusReplicas},
	}
	if specReplicas != nil {
		s.Spec.Replicas = *specReplicas
	}
	if selector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(selector); err == nil {
			s.Status.Selector = sel.String()
		}
	}
	return s
}
