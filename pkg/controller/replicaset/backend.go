package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
)

// backend is the owner resource the controller manages: ReplicaSets, or
// ReplicationControllers seen as ReplicaSets.
type backend interface {
	gvk() schema.GroupVersionKind
	informer() cache.SharedIndexInformer
	get(ns, name string) (*appsv1.ReplicaSet, error)
	list(ns string) ([]*appsv1.ReplicaSet, error)
	liveGet(ctx context.Context, ns, name string) (metav1.Object, error)
	updateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error)
	// toRS converts an informer object (nil if it is not one).
	toRS(obj any) *appsv1.ReplicaSet
	// original is the object events are recorded on.
	original(rs *appsv1.ReplicaSet) runtime.Object
}

var (
	replicaSetKind            = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	replicationControllerKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")
)

type rsBackend struct {
	inf    *cache.TypedInformer[*appsv1.ReplicaSet]
	client *client.Typed[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
}

func (b *rsBackend) gvk() schema.GroupVersionKind        { return replicaSetKind }
func (b *rsBackend) informer() cache.SharedIndexInformer { return b.inf.Informer() }
func (b *rsBackend) get(ns, name string) (*appsv1.ReplicaSet, error) {
	return b.inf.Lister().Namespace(ns).Get(name)
}
func (b *rsBackend) list(ns string) ([]*appsv1.ReplicaSet, error) {
	return b.inf.Lister().Namespace(ns).List(labels.Everything())
}
func (b *rsBackend) liveGet(ctx context.Context, ns, name string) (metav1.Object, error) {
	return b.client.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}
func (b *rsBackend) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	return b.client.Namespace(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
}
func (b *rsBackend) toRS(obj any) *appsv1.ReplicaSet {
	rs, _ := obj.(*appsv1.ReplicaSet)
	return rs
}
func (b *rsBackend) original(rs *appsv1.ReplicaSet) runtime.Object { return rs }

type rcBackend struct {
	inf    *cache.TypedInformer[*corev1.ReplicationController]
	client *client.Typed[*corev1.ReplicationController, *corev1.ReplicationControllerList]
}

func (b *rcBackend) gvk() schema.GroupVersionKind        { return replicationControllerKind }
func (b *rcBackend) informer() cache.SharedIndexInformer { return b.inf.Informer() }
func (b *rcBackend) get(ns, name string) (*appsv1.ReplicaSet, error) {
	rc, err := b.inf.Lister().Namespace(ns).Get(name)
	if err != nil {
		return nil, err
	}
	return RCToRS(rc), nil
}
func (b *rcBackend) list(ns string) ([]*appsv1.ReplicaSet, error) {
	rcs, err := b.inf.Lister().Namespace(ns).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ReplicaSet, 0, len(rcs))
	for _, rc := range rcs {
		out = append(out, RCToRS(rc))
	}
	return out, nil
}
func (b *rcBackend) liveGet(ctx context.Context, ns, name string) (metav1.Object, error) {
	return b.client.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}
func (b *rcBackend) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	rc, err := b.client.Namespace(rs.Namespace).UpdateStatus(ctx, RSToRC(rs), metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return RCToRS(rc), nil
}
func (b *rcBackend) toRS(obj any) *appsv1.ReplicaSet {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return nil
	}
	return RCToRS(rc)
}
func (b *rcBackend) original(rs *appsv1.ReplicaSet) runtime.Object { return RSToRC(rs) }

// RCToRS is the ReplicaSet a ReplicationController behaves as.
func RCToRS(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: *rc.ObjectMeta.DeepCopy(),
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        rc.Spec.Replicas,
			MinReadySeconds: rc.Spec.MinReadySeconds,
			Selector:        &metav1.LabelSelector{MatchLabels: rc.Spec.Selector},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas:             rc.Status.Replicas,
			FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas:        rc.Status.ReadyReplicas,
			AvailableReplicas:    rc.Status.AvailableReplicas,
			ObservedGeneration:   rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Replicas != nil {
		n := *rc.Spec.Replicas
		rs.Spec.Replicas = &n
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template.DeepCopy()
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return rs
}

// RSToRC converts back (the inverse of RCToRS).
func RSToRC(rs *appsv1.ReplicaSet) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
		ObjectMeta: *rs.ObjectMeta.DeepCopy(),
		Spec: corev1.ReplicationControllerSpec{
			Replicas:        rs.Spec.Replicas,
			MinReadySeconds: rs.Spec.MinReadySeconds,
			Template:        rs.Spec.Template.DeepCopy(),
		},
		Status: corev1.ReplicationControllerStatus{
			Replicas:             rs.Status.Replicas,
			FullyLabeledReplicas: rs.Status.FullyLabeledReplicas,
			ReadyReplicas:        rs.Status.ReadyReplicas,
			AvailableReplicas:    rs.Status.AvailableReplicas,
			ObservedGeneration:   rs.Status.ObservedGeneration,
		},
	}
	if rs.Spec.Selector != nil {
		rc.Spec.Selector = rs.Spec.Selector.MatchLabels
	}
	for _, c := range rs.Status.Conditions {
		rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return rc
}
