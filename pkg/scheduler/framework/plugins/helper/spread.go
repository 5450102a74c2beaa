package helper

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client/cache"
)

var (
	rcKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ssKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// DefaultSelector is upstream's selector of the pods "like" pod, for the
// default spreading constraints: the selectors of the Services selecting
// the pod merged, plus the selector of its controlling
// ReplicationController, ReplicaSet or StatefulSet. Empty when the pod
// has neither. A nil lister is treated as empty.
func DefaultSelector(pod *corev1.Pod, services cache.Lister[*corev1.Service], rcs cache.Lister[*corev1.ReplicationController],
	rss cache.Lister[*appsv1.ReplicaSet], sss cache.Lister[*appsv1.StatefulSet]) labels.Selector {
	set := make(labels.Set)
	// Services, RCs, RSs and StatefulSets selecting the pod cannot have
	// conflicting labels: merging is safe.
	if services != nil {
		for _, svc := range GetPodServices(services, pod) {
			set = labels.Merge(set, svc.Spec.Selector)
		}
	}
	selector := set.AsSelector()

	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return selector
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return selector
	}
	addSelector := func(ls *metav1.LabelSelector) {
		other, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			return
		}
		if r, ok := other.Requirements(); ok {
			selector = selector.Add(r...)
		}
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind:
		if rcs != nil {
			if rc, err := rcs.Namespace(pod.Namespace).Get(owner.Name); err == nil {
				set = labels.Merge(set, rc.Spec.Selector)
				selector = set.AsSelector()
			}
		}
	case rsKind:
		if rss != nil {
			if rs, err := rss.Namespace(pod.Namespace).Get(owner.Name); err == nil {
				addSelector(rs.Spec.Selector)
			}
		}
	case ssKind:
		if sss != nil {
			if ss, err := sss.Namespace(pod.Namespace).Get(owner.Name); err == nil {
				addSelector(ss.Spec.Selector)
			}
		}
	}
	return selector
}

// GetPodServices returns the Services of the pod's namespace whose
// selector selects the pod (a Service without a selector selects nothing).
func GetPodServices(services cache.Lister[*corev1.Service], pod *corev1.Pod) []*corev1.Service {
	all, err := services.Namespace(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*corev1.Service
	podLabels := labels.Set(pod.Labels)
	for _, svc := range all {
		if svc.Spec.Selector == nil {
			continue
		}
		if labels.SelectorFromValidatedSet(svc.Spec.Selector).Matches(podLabels) {
			out = append(out, svc)
		}
	}
	return out
}
