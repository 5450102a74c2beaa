package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// Finalizers the garbage collector acts on.
const (
	FinalizerOrphan     = metav1.FinalizerOrphanDependents // "orphan"
	FinalizerForeground = metav1.FinalizerDeleteDependents // "foregroundDeletion"
)

// DeleteResult says what a delete did.
type DeleteResult struct {
	// Object is the object as deleted, or as it now waits (deletionTimestamp set).
	Object runtime.Object
	// Deleted is true when the object is gone from storage.
	Deleted bool
}

// propagation returns the garbage collection policy a delete asks for;
// "" when it names none.
func propagation(opts *metav1.DeleteOptions) (metav1.DeletionPropagation, error) {
	if opts.PropagationPolicy != nil && opts.OrphanDependents != nil { //nolint:staticcheck // upstream still honours it
		return "", apierrors.NewBadRequest("propagationPolicy and orphanDependents cannot both be set")
	}
	if opts.PropagationPolicy != nil {
		switch p := *opts.PropagationPolicy; p {
		case metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
			return p, nil
		default:
			return "", apierrors.NewBadRequest(fmt.Sprintf("propagationPolicy: Unsupported value: %q: supported values: \"Foreground\", \"Background\", \"Orphan\"", p))
		}
	}
	if o := opts.OrphanDependents; o != nil { //nolint:staticcheck
		if *o {
			return metav1.DeletePropagationOrphan, nil
		}
		return metav1.DeletePropagationBackground, nil
	}
	return "", nil
}

// defaultPropagation is the policy of a delete that names none: as
// upstream, a garbage collection finalizer already on the object decides,
// then the resource's default.
func (s *Store) defaultPropagation(m metav1.Object) metav1.DeletionPropagation {
	for _, f := range m.GetFinalizers() {
		switch f {
		case FinalizerOrphan:
			return metav1.DeletePropagationOrphan
		case FinalizerForeground:
			return metav1.DeletePropagationForeground
		}
	}
	if p := s.Strategy.DefaultPropagation; p != "" {
		return p
	}
	return metav1.DeletePropagationBackground
}

// gcFinalizers returns obj's finalizers as the policy wants them.
func gcFinalizers(current []string, policy metav1.DeletionPropagation) ([]string, bool) {
	want := map[string]bool{
		FinalizerOrphan:     policy == metav1.DeletePropagationOrphan,
		FinalizerForeground: policy == metav1.DeletePropagationForeground,
	}
	var out []string
	changed := false
	for _, f := range current {
		if keep, managed := want[f]; managed {
			if !keep {
				changed = true
				continue
			}
			delete(want, f) // already present
		}
		out = append(out, f)
	}
	for _, f := range []string{FinalizerOrphan, FinalizerForeground} {
		if want[f] {
			out = append(out, f)
			changed = true
		}
	}
	return out, changed
}

// Delete deletes ns/name following the Kubernetes lifecycle:
//   - an object with finalizers (or with finalizers the propagation policy
//     adds) only gets metadata.deletionTimestamp; whoever owns each finalizer
//     removes it, and removing the last one deletes the object;
//   - a resource with graceful deletion (pods on a node) gets
//     deletionTimestamp = now + grace period and deletionGracePeriodSeconds;
//     the node agent finishes the deletion with a grace period of 0;
//   - a second delete of an object already being deleted changes nothing
//     (except that a shorter grace period shortens the wait).
func (s *Store) Delete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions, admit ValidateFunc) (DeleteResult, error) {
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	dryRun := len(opts.DryRun) > 0
	key := s.Key(ns, name)
	policy, err := propagation(opts)
	if err != nil {
		return DeleteResult{}, err
	}
	if g := opts.GracePeriodSeconds; g != nil && *g < 0 {
		one := int64(1)
		opts.GracePeriodSeconds = &one
	}
	var pre *storage.Preconditions
	if p := opts.Preconditions; p != nil {
		pre = &storage.Preconditions{UID: p.UID, ResourceVersion: p.ResourceVersion}
	}
	existing := s.NewFunc()
	if err := s.Storage.Get(ctx, key, storage.GetOptions{}, existing); err != nil {
		return DeleteResult{}, s.interpret(err, name)
	}
	em, _ := meta.Accessor(existing)
	if pre != nil {
		if pre.UID != nil && *pre.UID != em.GetUID() {
			return DeleteResult{}, apierrors.NewConflict(s.Resource, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, em.GetUID()))
		}
		if pre.ResourceVersion != nil && *pre.ResourceVersion != em.GetResourceVersion() {
			return DeleteResult{}, apierrors.NewConflict(s.Resource, name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, em.GetResourceVersion()))
		}
	}
	if admit != nil {
		if err := admit(ctx, existing); err != nil {
			return DeleteResult{}, err
		}
	}
	if policy == "" {
		policy = s.defaultPropagation(em)
	}
	grace, graceful := s.gracePeriod(existing, opts)
	_, finalizersChange := gcFinalizers(em.GetFinalizers(), policy)
	needsUpdate := graceful || len(em.GetFinalizers()) > 0 || finalizersChange || em.GetDeletionTimestamp() != nil ||
		s.Strategy.Finalizing != nil

	if needsUpdate {
		var deleteNow bool
		var last runtime.Object
		update := func(in runtime.Object) (runtime.Object, error) {
			m, _ := meta.Accessor(in)
			fins, _ := gcFinalizers(m.GetFinalizers(), policy)
			if m.GetDeletionTimestamp() == nil {
				// Only the first delete chooses the propagation policy.
				m.SetFinalizers(fins)
			}
			now := s.Env.Clock.Now()
			switch {
			case m.GetDeletionTimestamp() == nil:
				g := int64(0)
				if graceful {
					g = grace
				}
				ts := metav1.NewTime(now.Add(time.Duration(g) * time.Second).Truncate(time.Second))
				m.SetDeletionTimestamp(&ts)
				m.SetDeletionGracePeriodSeconds(&g)
			case s.Strategy.GracePeriod != nil:
				// Already being deleted: a shorter grace period shortens the
				// wait; 0 (the node agent's final delete) ends it.
				cur := m.GetDeletionGracePeriodSeconds()
				if cur == nil || grace < *cur {
					ts := metav1.NewTime(now.Add(time.Duration(grace) * time.Second).Truncate(time.Second))
					if old := m.GetDeletionTimestamp(); old != nil && old.Before(&ts) {
						ts = *old
					}
					m.SetDeletionTimestamp(&ts)
					m.SetDeletionGracePeriodSeconds(&grace)
				}
			}
			g := m.GetDeletionGracePeriodSeconds()
			wait := s.Strategy.Finalizing != nil && s.Strategy.Finalizing(in)
			deleteNow = len(m.GetFinalizers()) == 0 && (g == nil || *g == 0) && !wait
			last = in
			return in, nil
		}
		if dryRun {
			obj, _ := update(existing.DeepCopyObject())
			return DeleteResult{Object: obj, Deleted: deleteNow}, nil
		}
		out := s.NewFunc()
		err := s.Storage.GuaranteedUpdate(ctx, key, out, false, pre, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, error) {
			return update(in)
		}, existing)
		if err != nil {
			return DeleteResult{}, s.interpret(err, name)
		}
		if !deleteNow {
			return DeleteResult{Object: out}, nil
		}
		existing = last
	} else if dryRun {
		return DeleteResult{Object: existing, Deleted: true}, nil
	}
	out := s.NewFunc()
	if err := s.Storage.Delete(ctx, key, out, pre, nil, existing); err != nil {
		if storage.IsNotFound(err) {
			return DeleteResult{}, apierrors.NewNotFound(s.Resource, name)
		}
		return DeleteResult{}, s.interpret(err, name)
	}
	s.afterDelete(ctx, out)
	return DeleteResult{Object: out, Deleted: true}, nil
}

// gracePeriod decides whether deleting obj is graceful and for how long.
func (s *Store) gracePeriod(obj runtime.Object, opts *metav1.DeleteOptions) (int64, bool) {
	if s.Strategy.GracePeriod == nil {
		return 0, false
	}
	def, graceful := s.Strategy.GracePeriod(obj)
	if !graceful {
		return 0, false
	}
	g := def
	if opts.GracePeriodSeconds != nil {
		g = *opts.GracePeriodSeconds
	}
	if g <= 0 {
		return 0, false
	}
	return g, true
}

// DeleteCollection deletes every object in ns that the list options select,
// each as a DELETE would, and returns those it removed or marked.
func (s *Store) DeleteCollection(ctx context.Context, ns string, lo ListOptions, opts *metav1.DeleteOptions, admit ValidateFunc) ([]runtime.Object, error) {
	objs, _, err := s.List(ctx, ns, lo)
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, o := range objs {
		m, err := meta.Accessor(storage.Unwrap(o))
		if err != nil {
			return nil, err
		}
		optsCopy := opts.DeepCopy()
		res, err := s.Delete(ctx, m.GetNamespace(), m.GetName(), optsCopy, admit)
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			var se *apierrors.StatusError
			if errors.As(err, &se) {
				return nil, err
			}
			return nil, apierrors.NewInternalError(err)
		}
		out = append(out, res.Object)
	}
	return out, nil
}
