package scheduler

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/corev1helpers"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/internal/queue"
)

func stripManagedFields(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok && o.GetManagedFields() != nil {
		o.SetManagedFields(nil)
	}
	return obj, nil
}

// unwrap returns the object of a delete notification (tombstones
// included).
func unwrap[T any](obj any) (T, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	v, ok := obj.(T)
	return v, ok
}

func assigned(p *corev1.Pod) bool { return p.Spec.NodeName != "" }

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func (s *Scheduler) responsibleFor(p *corev1.Pod) bool {
	_, ok := s.profiles[p.Spec.SchedulerName]
	return ok
}

// addEventHandlers wires the informers to the cache (bound pods, nodes)
// and the queue (pending pods of our profiles; cluster events the
// profiles' plugins registered).
func (s *Scheduler) addEventHandlers(ctx context.Context, podInformer cache.SharedIndexInformer, hints map[string]queue.QueueingHintMap) error {
	reg, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			p, ok := obj.(*corev1.Pod)
			if !ok {
				return
			}
			s.onPodAdd(p)
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Pod)
			n, ok2 := newObj.(*corev1.Pod)
			if !ok1 || !ok2 {
				return
			}
			s.onPodUpdate(o, n)
		},
		DeleteFunc: func(obj any) {
			if p, ok := unwrap[*corev1.Pod](obj); ok {
				s.onPodDelete(p)
			}
		},
	})
	if err != nil {
		return err
	}
	s.handlers = append(s.handlers, reg)
	reg, err = s.factory.Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			n, ok := obj.(*corev1.Node)
			if !ok {
				return
			}
			s.cache.AddNode(s.logger, n)
			s.queue.MoveAllToActiveOrBackoffQueue(s.logger, framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}, nil, n, nil)
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Node)
			n, ok2 := newObj.(*corev1.Node)
			if !ok1 || !ok2 {
				return
			}
			s.cache.UpdateNode(s.logger, o, n)
			for _, e := range nodeUpdateEvents(o, n) {
				s.queue.MoveAllToActiveOrBackoffQueue(s.logger, e, o, n, nil)
			}
		},
		DeleteFunc: func(obj any) {
			if n, ok := unwrap[*corev1.Node](obj); ok {
				if err := s.cache.RemoveNode(s.logger, n); err != nil {
					s.logger.Error("Scheduler cache RemoveNode failed", "node", n.Name, "err", err)
				}
				s.queue.MoveAllToActiveOrBackoffQueue(s.logger, framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Delete}, n, nil, nil)
			}
		},
	})
	if err != nil {
		return err
	}
	s.handlers = append(s.handlers, reg)
	// Other resources: only those some plugin registered events for.
	wanted := map[framework.EventResource]bool{}
	for _, m := range hints {
		for e := range m {
			wanted[e.Resource] = true
		}
	}
	all := wanted[framework.WildCard]
	add := func(res framework.EventResource, inf cache.SharedIndexInformer) error {
		if !all && !wanted[res] {
			return nil
		}
		reg, err := inf.AddEventHandler(s.moveOn(res))
		if err == nil {
			s.handlers = append(s.handlers, reg)
		}
		return err
	}
	if err := add(framework.PersistentVolume, s.factory.PersistentVolumes().Informer()); err != nil {
		return err
	}
	if err := add(framework.PersistentVolumeClaim, s.factory.PersistentVolumeClaims().Informer()); err != nil {
		return err
	}
	if err := add(framework.StorageClass, s.factory.StorageClasses().Informer()); err != nil {
		return err
	}
	if err := add(framework.CSINode, informers.InformerFor[*storagev1.CSINode, *storagev1.CSINodeList](s.factory).Informer()); err != nil {
		return err
	}
	if err := add(framework.CSIDriver, informers.InformerFor[*storagev1.CSIDriver, *storagev1.CSIDriverList](s.factory).Informer()); err != nil {
		return err
	}
	if err := add(framework.CSIStorageCapacity, informers.InformerFor[*storagev1.CSIStorageCapacity, *storagev1.CSIStorageCapacityList](s.factory).Informer()); err != nil {
		return err
	}
	if err := add(framework.ResourceClaim, informers.InformerFor[*resourcev1.ResourceClaim, *resourcev1.ResourceClaimList](s.factory).Informer()); err != nil {
		return err
	}
	if err := add(framework.ResourceSlice, informers.InformerFor[*resourcev1.ResourceSlice, *resourcev1.ResourceSliceList](s.factory).Informer()); err != nil {
		return err
	}
	if err := add(framework.DeviceClass, informers.InformerFor[*resourcev1.DeviceClass, *resourcev1.DeviceClassList](s.factory).Informer()); err != nil {
		return err
	}
	return nil
}

// moveOn requeues pods on add/update/delete of a resource.
func (s *Scheduler) moveOn(res framework.EventResource) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			s.queue.MoveAllToActiveOrBackoffQueue(s.logger, framework.ClusterEvent{Resource: res, ActionType: framework.Add}, nil, obj, nil)
		},
		UpdateFunc: func(oldObj, newObj any) {
			s.queue.MoveAllToActiveOrBackoffQueue(s.logger, framework.ClusterEvent{Resource: res, ActionType: framework.Update}, oldObj, newObj, nil)
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			s.queue.MoveAllToActiveOrBackoffQueue(s.logger, framework.ClusterEvent{Resource: res, ActionType: framework.Delete}, obj, nil, nil)
		},
	}
}

func (s *Scheduler) onPodAdd(p *corev1.Pod) {
	switch {
	case terminal(p):
	case assigned(p):
		if err := s.cache.AddPod(s.logger, p); err != nil {
			s.logger.Error("Scheduler cache AddPod failed", "pod", klogKey(p), "err", err)
		}
		s.queue.AssignedPodAdded(s.logger, p)
	case s.responsibleFor(p):
		s.queue.Add(s.logger, p)
	}
}

func (s *Scheduler) onPodUpdate(o, n *corev1.Pod) {
	switch {
	case terminal(n):
		// A finished pod frees its node as a deleted one does.
		s.onPodDelete(o)
	case assigned(o):
		if err := s.cache.UpdatePod(s.logger, o, n); err != nil {
			s.logger.Error("Scheduler cache UpdatePod failed", "pod", klogKey(n), "err", err)
		}
		for _, e := range assignedPodUpdateEvents(o, n) {
			s.queue.AssignedPodUpdated(s.logger, o, n, e)
		}
	case assigned(n):
		// Bound (by us or another scheduler): out of the queue, into the
		// cache (confirming our assumption).
		if s.responsibleFor(o) {
			s.queue.Delete(o)
		}
		s.onPodAdd(n)
	case s.responsibleFor(n):
		if s.responsibleFor(o) {
			s.queue.Update(s.logger, o, n)
		} else {
			s.queue.Add(s.logger, n)
		}
	case s.responsibleFor(o):
		s.queue.Delete(o)
	}
}

func (s *Scheduler) onPodDelete(p *corev1.Pod) {
	if !assigned(p) {
		if !s.responsibleFor(p) {
			return
		}
		s.queue.Delete(p)
		fwk, ok := s.profiles[p.Spec.SchedulerName]
		if !ok {
			return
		}
		// As upstream: a pod rejected while waiting at Permit was assumed
		// on a node it now frees, so pods that could use the room are
		// retried; a deleted pod that had a nominated node held room that
		// pods of lower or equal priority treated as taken.
		if fwk.RejectWaitingPod(p.UID) {
			s.queue.MoveAllToActiveOrBackoffQueue(s.logger, queue.EventAssignedPodDelete, p, nil, nil)
		} else if p.Status.NominatedNodeName != "" {
			prio := corev1helpers.PodPriority(p)
			s.queue.MoveAllToActiveOrBackoffQueue(s.logger, queue.EventAssignedPodDelete, p, nil, func(q *corev1.Pod) bool {
				return corev1helpers.PodPriority(q) <= prio
			})
		}
		return
	}
	if err := s.cache.RemovePod(s.logger, p); err != nil {
		s.logger.Debug("Scheduler cache RemovePod failed", "pod", klogKey(p), "err", err)
	}
	// A waiting pod that was deleted (assumed) is rejected.
	if fwk, ok := s.profiles[p.Spec.SchedulerName]; ok {
		fwk.RejectWaitingPod(p.UID)
	}
	s.queue.MoveAllToActiveOrBackoffQueue(s.logger, framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}, p, nil, nil)
}

// nodeUpdateEvents classifies a node update by what changed, as
// upstream's nodeSchedulingPropertiesChange.
func nodeUpdateEvents(o, n *corev1.Node) []framework.ClusterEvent {
	var out []framework.ClusterEvent
	ev := func(a framework.ActionType) {
		out = append(out, framework.ClusterEvent{Resource: framework.Node, ActionType: a})
	}
	if o.Spec.Unschedulable != n.Spec.Unschedulable {
		ev(framework.UpdateNodeTaint)
	}
	if !equality.Semantic.DeepEqual(o.Status.Allocatable, n.Status.Allocatable) {
		ev(framework.UpdateNodeAllocatable)
	}
	if !reflect.DeepEqual(o.Labels, n.Labels) {
		ev(framework.UpdateNodeLabel)
	}
	if !reflect.DeepEqual(o.Spec.Taints, n.Spec.Taints) {
		ev(framework.UpdateNodeTaint)
	}
	if conditionsChanged(o.Status.Conditions, n.Status.Conditions) {
		ev(framework.UpdateNodeCondition)
	}
	if !reflect.DeepEqual(o.Annotations, n.Annotations) {
		ev(framework.UpdateNodeAnnotation)
	}
	return out
}

func conditionsChanged(a, b []corev1.NodeCondition) bool {
	if len(a) != len(b) {
		return true
	}
	m := make(map[corev1.NodeConditionType]corev1.ConditionStatus, len(a))
	for _, c := range a {
		m[c.Type] = c.Status
	}
	for _, c := range b {
		if s, ok := m[c.Type]; !ok || s != c.Status {
			return true
		}
	}
	return false
}

// assignedPodUpdateEvents classifies an update of a bound pod.
func assignedPodUpdateEvents(o, n *corev1.Pod) []framework.ClusterEvent {
	var out []framework.ClusterEvent
	if !reflect.DeepEqual(o.Labels, n.Labels) {
		out = append(out, framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodLabel})
	}
	if scaledDown(o, n) {
		out = append(out, framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodScaleDown})
	}
	return out
}

func scaledDown(o, n *corev1.Pod) bool {
	or, nr := framework.PodRequests(o, false), framework.PodRequests(n, false)
	return nr.MilliCPU < or.MilliCPU || nr.Memory < or.Memory || nr.EphemeralStorage < or.EphemeralStorage
}
