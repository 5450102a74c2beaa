package apiserver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/auth/bootstrappolicy"
	"github.com/skiff-sh/skiff/pkg/auth/node"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// The Node authorizer (--authorization-mode=Node) answers from a graph of
// pods, persistent volumes, volume attachments and resource slices the
// server keeps in step with their watch caches, as it does the RBAC index:
// filled before the first request is authorized, then updated by watch
// events.

// nodeAuthorizer builds the Node authorizer and its graph (once).
func (s *Server) nodeAuthorizer() *node.Authorizer {
	if s.nodeAuthz == nil {
		s.nodeGraph = node.NewGraph()
		s.nodeAuthz = node.New(s.nodeGraph, systemNodeRules())
	}
	return s.nodeAuthz
}

// systemNodeRules are upstream's NodeRules: the system:node ClusterRole's.
func systemNodeRules() []rbacv1.PolicyRule {
	for _, r := range bootstrappolicy.ClusterRoles() {
		if r.Name == "system:node" {
			return r.Rules
		}
	}
	return nil
}

// nodeGraphResources are what the Node authorizer's graph holds.
var nodeGraphResources = []struct {
	gr      schema.GroupResource
	example runtime.Object
}{
	{schema.GroupResource{Resource: "pods"}, &corev1.Pod{}},
	{schema.GroupResource{Resource: "persistentvolumes"}, &corev1.PersistentVolume{}},
	{schema.GroupResource{Group: storagev1.GroupName, Resource: "volumeattachments"}, &storagev1.VolumeAttachment{}},
	{schema.GroupResource{Group: resourcev1.GroupName, Resource: "resourceslices"}, &resourcev1.ResourceSlice{}},
}

// graphIndex is what a watch cache feeds (relistInto, feedIndex): the
// RBAC index and the node graph both have this shape.
type graphIndex interface {
	Replace(example runtime.Object, objs []runtime.Object)
	Set(obj runtime.Object)
	Delete(obj runtime.Object)
}

// startNodeGraph fills the node graph (when the Node mode is on) and keeps
// it in step in the background.
func (s *Server) startNodeGraph(ctx context.Context) error {
	if s.nodeGraph == nil {
		return nil
	}
	for _, r := range nodeGraphResources {
		st := s.stores[r.gr]
		if st == nil {
			continue
		}
		rv, err := relistInto(ctx, st, r.example, s.nodeGraph)
		if err != nil {
			return fmt.Errorf("initial list of %s: %w", r.gr, err)
		}
		go s.feedIndex(ctx, st, r.example, s.nodeGraph, rv)
	}
	return nil
}

// relistInto fills x with every object of st, read consistently (as an
// informer's first list): what was written before (the bootstrap RBAC
// policy at start, the objects present at a relist) is in x when it
// returns, even while the watch cache is still catching up.
func relistInto(ctx context.Context, st *registry.Store, example runtime.Object, x graphIndex) (string, error) {
	objs, lm, err := st.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return "", err
	}
	for i := range objs {
		objs[i] = storage.Unwrap(objs[i])
	}
	x.Replace(example, objs)
	return lm.ResourceVersion, nil
}

// feedIndex applies the events of one resource after rv to x, re-watching
// from the last revision seen when the watch ends and relisting when that
// revision is gone.
func (s *Server) feedIndex(ctx context.Context, st *registry.Store, example runtime.Object, x graphIndex, rv string) {
	for ctx.Err() == nil {
		w, err := st.Watch(ctx, "", registry.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				if nrv, err := relistInto(ctx, st, example, x); err == nil {
					rv = nrv
					continue
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-s.cfg.Clock.After(100 * time.Millisecond):
			}
			continue
		}
		relist := false
		for ev := range w.ResultChan() {
			obj := storage.Unwrap(ev.Object)
			switch ev.Type {
			case watch.Added, watch.Modified:
				x.Set(obj)
			case watch.Deleted:
				x.Delete(obj)
			case watch.Error:
				relist = true
			}
			if relist {
				break
			}
			if m, ok := obj.(metav1.Object); ok && m.GetResourceVersion() != "" {
				rv = m.GetResourceVersion()
			}
		}
		w.Stop()
		if relist && ctx.Err() == nil {
			if nrv, err := relistInto(ctx, st, example, x); err == nil {
				rv = nrv
			}
		}
	}
}
