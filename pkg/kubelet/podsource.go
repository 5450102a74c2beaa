package kubelet

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/intern"
)

// PodHandler receives the pods bound to one node.
type PodHandler interface {
	// PodUpdated: the pod was added or changed (also a replay of the
	// pods already known when the handler registers).
	PodUpdated(pod *corev1.Pod)
	// PodRemoved: the pod is gone from the API server.
	PodRemoved(pod *corev1.Pod)
}

// PodSource is how pods reach kubelets: Register subscribes the kubelet
// of nodeName (it receives the pods already bound to the node, then
// every change); Unregister ends that.
type PodSource interface {
	Register(nodeName string, h PodHandler)
	Unregister(nodeName string)
}

// InformerPodSource is a PodSource over one pod informer that dispatches
// by spec.nodeName: with the field selector spec.nodeName=<node> for a
// standalone kubelet, spec.nodeName!= for many hollow nodes in one
// process (one watch for all of them).
type InformerPodSource struct {
	informer *cache.TypedInformer[*corev1.Pod]

	mu       sync.RWMutex
	handlers map[string]PodHandler
}

const nodeNameIndex = "spec.nodeName"

// NewInformerPodSource returns a source watching the pods that match
// fieldSelector; Run runs it.
func NewInformerPodSource(c *client.Client, fieldSelector string) *InformerPodSource {
	s := &InformerPodSource{handlers: map[string]PodHandler{}}
	s.informer = cache.NewTypedInformer(client.For[*corev1.Pod, *corev1.PodList](c),
		func(o *metav1.ListOptions) { o.FieldSelector = fieldSelector },
		cache.SharedIndexInformerOptions{Indexers: cache.Indexers{nodeNameIndex: func(obj any) ([]string, error) {
			if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				return []string{p.Spec.NodeName}, nil
			}
			return nil, nil
		}}})
	// The cached pods are most of a many-node agent's memory: they drop
	// their managedFields (the kubelet never reads them; upstream's
	// components strip them alike) and share their equal parts
	// (pkg/client/intern: the pods of one template differ in little more
	// than their names). Cached pods are read-only, as always.
	in := intern.New()
	s.informer.Informer().SetTransform(func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			p.ManagedFields = nil
			in.Pod(p)
		}
		return obj, nil
	})
	s.informer.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { s.dispatch(p, false) },
		UpdateFunc: func(_, p *corev1.Pod) { s.dispatch(p, false) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				s.dispatch(d.Obj, true)
			}
		},
	})
	return s
}

// Run runs the informer until ctx ends.
func (s *InformerPodSource) Run(ctx context.Context) { s.informer.Run(ctx) }

// HasSynced reports whether the informer has listed the pods.
func (s *InformerPodSource) HasSynced() bool { return s.informer.HasSynced() }

func (s *InformerPodSource) dispatch(p *corev1.Pod, removed bool) {
	s.mu.RLock()
	h := s.handlers[p.Spec.NodeName]
	s.mu.RUnlock()
	if h == nil {
		return
	}
	if removed {
		h.PodRemoved(p)
	} else {
		h.PodUpdated(p)
	}
}

// Register implements PodSource.
func (s *InformerPodSource) Register(nodeName string, h PodHandler) {
	s.mu.Lock()
	s.handlers[nodeName] = h
	s.mu.Unlock()
	// Replay what the cache holds; a concurrent event for the same pod is
	// harmless (workers take the newest resourceVersion).
	objs, _ := s.informer.Informer().GetIndexer().ByIndex(nodeNameIndex, nodeName)
	for _, o := range objs {
		h.PodUpdated(o.(*corev1.Pod))
	}
}

// Unregister implements PodSource.
func (s *InformerPodSource) Unregister(nodeName string) {
	s.mu.Lock()
	delete(s.handlers, nodeName)
	s.mu.Unlock()
}
