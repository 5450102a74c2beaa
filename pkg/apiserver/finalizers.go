package apiserver

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// The finalizer loop is a stopgap that lets deletions finish while skiff
// has no controller manager: it does, in miniature, the work of upstream's
// namespace controller (empty a terminating namespace, then drop its
// "kubernetes" finalizer) and garbage collector (the "orphan" and
// "foregroundDeletion" finalizers, and deleting dependents whose owners are
// gone). It reads and writes through the registry like any client would.
// When the controller manager lands, these move to pkg/controller and this
// file goes away.

// finalizerInterval is how often the loop sweeps even without a trigger.
const finalizerInterval = 5 * time.Second

func (s *Server) runFinalizers(ctx context.Context, poke <-chan struct{}) {
	t := s.cfg.Clock.NewTicker(finalizerInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		case <-poke:
		}
		// Several passes let a chain of deletions settle quickly.
		for i := 0; i < 3; i++ {
			if !s.finalizePass(ctx) {
				break
			}
		}
	}
}

// pokeFinalizers asks the loop for an early pass.
func (s *Server) pokeFinalizers() {
	select {
	case s.finalizerPoke <- struct{}{}:
	default:
	}
}

// finalizePass runs one sweep; it reports whether it changed anything.
func (s *Server) finalizePass(ctx context.Context) bool {
	all := map[*registry.Store][]runtime.Object{}
	live := map[types.UID]bool{}
	byKind := map[schema.GroupKind]*registry.Store{}
	for _, st := range s.allStores() {
		byKind[st.Kind] = st
		objs, _, err := st.List(ctx, "", registry.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false
		}
		for i := range objs {
			objs[i] = storage.Unwrap(objs[i])
			if m, err := meta.Accessor(objs[i]); err == nil {
				live[m.GetUID()] = true
			}
		}
		all[st] = objs
	}
	changed := false
	// Dependents by owner uid.
	dependents := map[types.UID][]depRef{}
	for st, objs := range all {
		for _, o := range objs {
			m, _ := meta.Accessor(o)
			for _, ref := range m.GetOwnerReferences() {
				dependents[ref.UID] = append(dependents[ref.UID], depRef{st, m})
			}
		}
	}
	for st, objs := range all {
		for _, o := range objs {
			m, _ := meta.Accessor(o)
			if m.GetDeletionTimestamp() != nil {
				if hasFinalizer(m, registry.FinalizerOrphan) && s.orphanDependents(ctx, m, dependents[m.GetUID()]) {
					changed = s.removeFinalizer(ctx, st, m, registry.FinalizerOrphan) || changed
				}
				if hasFinalizer(m, registry.FinalizerForeground) && s.deleteDependents(ctx, dependents[m.GetUID()], metav1.DeletePropagationForeground) {
					changed = s.removeFinalizer(ctx, st, m, registry.FinalizerForeground) || changed
				}
				if ns, ok := o.(*corev1.Namespace); ok && hasSpecFinalizer(ns) {
					changed = s.emptyNamespace(ctx, ns, all) || changed
				}
				continue
			}
			// Background garbage collection: every owner is gone. The
			// snapshot above is only a filter (the stores' caches lag
			// independently, so a just-created owner may be missing from
			// it): a candidate is deleted only once each owner has been
			// confirmed absent by a fresh read, as upstream's collector
			// does.
			refs := m.GetOwnerReferences()
			if len(refs) == 0 {
				continue
			}
			if slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return live[r.UID] }) {
				continue
			}
			changed = s.collectOrphan(ctx, st, m, byKind) || changed
		}
	}
	return changed
}

// collectOrphan deletes dependent m of st if, read afresh, every one of its
// owners is absent: not found, or found with another uid. An owner whose
// kind skiff does not serve, or a namespaced owner of a cluster-scoped
// dependent, cannot be resolved, which keeps the dependent (as upstream).
// The delete is conditional on the uid and resourceVersion just read, so a
// dependent changed in between is left for the next pass.
func (s *Server) collectOrphan(ctx context.Context, st *registry.Store, m metav1.Object, byKind map[schema.GroupKind]*registry.Store) bool {
	cur, err := st.Get(ctx, m.GetNamespace(), m.GetName(), metav1.GetOptions{})
	if err != nil {
		return false
	}
	dep, err := meta.Accessor(storage.Unwrap(cur))
	if err != nil || dep.GetUID() != m.GetUID() || dep.GetDeletionTimestamp() != nil {
		return false
	}
	refs := dep.GetOwnerReferences()
	if len(refs) == 0 {
		return false
	}
	for _, ref := range refs {
		if !s.ownerAbsent(ctx, st.Namespaced, dep.GetNamespace(), ref, byKind) {
			return false
		}
	}
	bg := metav1.DeletePropagationBackground
	uid, rv := dep.GetUID(), dep.GetResourceVersion()
	_, err = st.Delete(ctx, dep.GetNamespace(), dep.GetName(), &metav1.DeleteOptions{PropagationPolicy: &bg,
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}, nil)
	return err == nil
}

// ownerAbsent reports whether the owner ref names is confirmed gone by a
// fresh read; false when it exists or cannot be resolved.
func (s *Server) ownerAbsent(ctx context.Context, depNamespaced bool, depNamespace string, ref metav1.OwnerReference, byKind map[schema.GroupKind]*registry.Store) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	owner := byKind[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if owner == nil {
		return false // a kind skiff does not serve: unresolvable
	}
	ns := ""
	if owner.Namespaced {
		if !depNamespaced {
			return false // a cluster-scoped dependent cannot have a namespaced owner
		}
		ns = depNamespace // a namespaced owner lives in its dependent's namespace
	}
	obj, err := owner.Get(ctx, ns, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		return false
	}
	om, err := meta.Accessor(storage.Unwrap(obj))
	return err == nil && om.GetUID() != ref.UID
}

type depRef struct {
	st *registry.Store
	m  metav1.Object
}

func hasFinalizer(m metav1.Object, f string) bool {
	for _, x := range m.GetFinalizers() {
		if x == f {
			return true
		}
	}
	return false
}

func hasSpecFinalizer(ns *corev1.Namespace) bool {
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return true
		}
	}
	return false
}

// update rewrites one stored object with fn.
func (s *Server) updateStored(ctx context.Context, st *registry.Store, m metav1.Object, fn func(obj runtime.Object)) bool {
	_, _, err := st.Update(ctx, m.GetNamespace(), m.GetName(), &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		obj := old.DeepCopyObject()
		fn(obj)
		return obj, nil
	}}, nil, nil, registry.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		s.cfg.Logger.Debug("finalizer update failed", "name", m.GetName(), "err", err)
		return false
	}
	return err == nil
}

func (s *Server) removeFinalizer(ctx context.Context, st *registry.Store, m metav1.Object, f string) bool {
	return s.updateStored(ctx, st, m, func(obj runtime.Object) {
		om, _ := meta.Accessor(obj)
		var keep []string
		for _, x := range om.GetFinalizers() {
			if x != f {
				keep = append(keep, x)
			}
		}
		om.SetFinalizers(keep)
	})
}

// orphanDependents removes the owner's references from its dependents.
func (s *Server) orphanDependents(ctx context.Context, owner metav1.Object, deps []depRef) bool {
	ok := true
	for _, d := range deps {
		done := s.updateStored(ctx, d.st, d.m, func(obj runtime.Object) {
			om, _ := meta.Accessor(obj)
			var keep []metav1.OwnerReference
			for _, ref := range om.GetOwnerReferences() {
				if ref.UID != owner.GetUID() {
					keep = append(keep, ref)
				}
			}
			om.SetOwnerReferences(keep)
		})
		ok = ok && done
	}
	return ok
}

// deleteDependents deletes dependents; it reports true once none is left.
func (s *Server) deleteDependents(ctx context.Context, deps []depRef, policy metav1.DeletionPropagation) bool {
	for _, d := range deps {
		if d.m.GetDeletionTimestamp() != nil {
			continue
		}
		// Conditional on the state seen: a dependent changed since (its
		// ownerReference perhaps removed) is looked at again next pass.
		p := policy
		uid, rv := d.m.GetUID(), d.m.GetResourceVersion()
		_, err := d.st.Delete(ctx, d.m.GetNamespace(), d.m.GetName(), &metav1.DeleteOptions{PropagationPolicy: &p,
			Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}, nil)
		if err != nil && !apierrors.IsNotFound(err) {
			s.cfg.Logger.Debug("deleting dependent failed", "name", d.m.GetName(), "err", err)
		}
	}
	return len(deps) == 0
}

// emptyNamespace deletes everything in a terminating namespace and, once
// nothing is left, drops its "kubernetes" finalizer (which deletes it).
func (s *Server) emptyNamespace(ctx context.Context, ns *corev1.Namespace, all map[*registry.Store][]runtime.Object) bool {
	remaining := 0
	bg := metav1.DeletePropagationBackground
	for st, objs := range all {
		if !st.Namespaced {
			continue
		}
		for _, o := range objs {
			m, _ := meta.Accessor(o)
			if m.GetNamespace() != ns.Name {
				continue
			}
			remaining++
			if m.GetDeletionTimestamp() == nil {
				if _, err := st.Delete(ctx, ns.Name, m.GetName(), &metav1.DeleteOptions{PropagationPolicy: &bg}, nil); err != nil && !apierrors.IsNotFound(err) {
					s.cfg.Logger.Debug("emptying namespace", "namespace", ns.Name, "name", m.GetName(), "err", err)
				}
			}
		}
	}
	if remaining > 0 {
		return true // deletions made; the next pass checks again
	}
	st := s.stores[grNamespaces]
	return s.updateStored(ctx, s.finalizeStore(st), ns, func(obj runtime.Object) {
		n := obj.(*corev1.Namespace)
		var keep []corev1.FinalizerName
		for _, f := range n.Spec.Finalizers {
			if f != corev1.FinalizerKubernetes {
				keep = append(keep, f)
			}
		}
		n.Spec.Finalizers = keep
	})
}

// finalizeStore is the namespaces store as the finalize subresource uses it:
// spec.finalizers may change.
func (s *Server) finalizeStore(st *registry.Store) *registry.Store {
	fs := *st
	strategy := *st.Strategy
	strategy.PrepareForUpdate = nil
	strategy.ValidateUpdate = nil
	fs.Strategy = &strategy
	return &fs
}
