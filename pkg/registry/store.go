package registry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// OptimisticLockErrorMsg is upstream's Conflict message for a stale update.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// ValidateFunc is validating admission for a create or delete.
type ValidateFunc func(ctx context.Context, obj runtime.Object) error

// ValidateUpdateFunc is validating admission for an update.
type ValidateUpdateFunc func(ctx context.Context, obj, old runtime.Object) error

// UpdatedObjectInfo computes the new object of an update from the stored one
// (a PUT body, or a patch applied to the stored object).
type UpdatedObjectInfo interface {
	Preconditions() *metav1.Preconditions
	UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error)
}

// Env is what a Store needs from its surroundings.
type Env struct {
	Clock clock.Clock
	// Rand makes UIDs and generated names.
	Rand *rand.Rand
}

// Store is the generic REST storage of one resource: it turns API verbs into
// storage operations, applying the resource's Strategy and the Kubernetes
// object lifecycle (uid, timestamps, generation, finalizers, graceful
// deletion).
type Store struct {
	// Resource is the qualified resource for errors ("pods", "deployments.apps").
	Resource schema.GroupResource
	// Kind is the group kind for Invalid errors.
	Kind       schema.GroupKind
	Namespaced bool
	Prefix     string // "/registry/pods/"
	Storage    storage.Interface
	NewFunc    func() runtime.Object
	NewList    func() runtime.Object
	Strategy   *Strategy
	Env        *Env
	// Hooks are the resource's side effects outside its object (nil: none).
	Hooks *Hooks
}

// Key is the storage key of ns/name.
func (s *Store) Key(ns, name string) string {
	if s.Namespaced {
		return s.Prefix + ns + "/" + name
	}
	return s.Prefix + name
}

// KeyOf is the storage key of an object.
func (s *Store) KeyOf(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(storage.Unwrap(obj))
	if err != nil {
		return "", err
	}
	return s.Key(m.GetNamespace(), m.GetName()), nil
}

// listKey is the prefix of a list in ns ("" = all namespaces).
func (s *Store) listKey(ns string) string {
	if s.Namespaced && ns != "" {
		return s.Prefix + ns + "/"
	}
	return s.Prefix
}

// Attrs extracts the labels and fields selectors match against.
func (s *Store) Attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	l, f, err := s.Strategy.attrs(obj)
	return labels.Set(l), f, err
}

// interpret turns a storage error into the API error clients expect.
func (s *Store) interpret(err error, name string) error {
	var se *storage.StorageError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code {
	case storage.ErrCodeKeyNotFound:
		return apierrors.NewNotFound(s.Resource, name)
	case storage.ErrCodeKeyExists:
		return apierrors.NewAlreadyExists(s.Resource, name)
	case storage.ErrCodeResourceVersionConflicts:
		msg := OptimisticLockErrorMsg
		if se.Msg != "" {
			msg = se.Msg
		}
		return apierrors.NewConflict(s.Resource, name, errors.New(msg))
	case storage.ErrCodeInvalidObj:
		return apierrors.NewBadRequest(se.Msg)
	case storage.ErrCodeUnreachable:
		return apierrors.NewServerTimeout(s.Resource, "storage", 2)
	}
	return apierrors.NewInternalError(err)
}

func (s *Store) invalid(name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(s.Kind, name, errs)
}

// Get returns ns/name. resourceVersion "" reads storage; others may be
// served from the watch cache.
func (s *Store) Get(ctx context.Context, ns, name string, opts metav1.GetOptions) (runtime.Object, error) {
	out := s.NewFunc()
	if err := s.Storage.Get(ctx, s.Key(ns, name), storage.GetOptions{ResourceVersion: opts.ResourceVersion}, out); err != nil {
		return nil, s.interpret(err, name)
	}
	return out, nil
}

// ListOptions are the list/watch parameters after parsing.
type ListOptions struct {
	Label                labels.Selector
	Field                fields.Selector
	ResourceVersion      string
	ResourceVersionMatch string
	Limit                int64
	Continue             string
	AllowWatchBookmarks  bool
	SendInitialEvents    *bool
}

func (s *Store) predicate(o ListOptions) storage.SelectionPredicate {
	return storage.SelectionPredicate{
		Label:               o.Label,
		Field:               o.Field,
		GetAttrs:            s.Attrs,
		Limit:               o.Limit,
		Continue:            o.Continue,
		AllowWatchBookmarks: o.AllowWatchBookmarks,
	}
}

// List returns the matching objects in ns ("" = all). The objects may be
// shared with the watch cache and must not be mutated.
func (s *Store) List(ctx context.Context, ns string, o ListOptions) ([]runtime.Object, metav1.ListMeta, error) {
	key, recursive := s.listKey(ns), true
	// A field selector on the name is a single-key read.
	if name, ok := s.predicate(o).MatchesSingleName(); ok && (ns != "" || !s.Namespaced) {
		key, recursive = s.Key(ns, name), false
	}
	objs, lm, err := s.Storage.ListObjects(ctx, key, storage.ListOptions{
		ResourceVersion:      o.ResourceVersion,
		ResourceVersionMatch: o.ResourceVersionMatch,
		Predicate:            s.predicate(o),
		Recursive:            recursive,
	})
	if err != nil {
		return nil, lm, s.interpret(err, "")
	}
	return objs, lm, nil
}

// Watch streams changes of the matching objects in ns.
func (s *Store) Watch(ctx context.Context, ns string, o ListOptions) (watch.Interface, error) {
	key, recursive := s.listKey(ns), true
	if name, ok := s.predicate(o).MatchesSingleName(); ok && (ns != "" || !s.Namespaced) {
		key, recursive = s.Key(ns, name), false
	}
	w, err := s.Storage.Watch(ctx, key, storage.ListOptions{
		ResourceVersion:      o.ResourceVersion,
		ResourceVersionMatch: o.ResourceVersionMatch,
		Predicate:            s.predicate(o),
		Recursive:            recursive,
		ProgressNotify:       true,
		SendInitialEvents:    o.SendInitialEvents,
	})
	if err != nil {
		return nil, s.interpret(err, "")
	}
	return w, nil
}

// generateNameChars are the characters upstream uses for generated names.
const generateNameChars = "bcdfghjklmnpqrstvwxz2456789"

func (s *Store) generateName(base string) string {
	const maxGeneratedNameLength = 63 - 5
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	b := make([]byte, 5)
	for i := range b {
		b[i] = generateNameChars[s.Env.Rand.IntN(len(generateNameChars))]
	}
	return base + string(b)
}

func (s *Store) newUID() types.UID { return NewUID(s.Env.Rand) }

// NewUID returns a random (version 4) UUID drawn from r.
func NewUID(r *rand.Rand) types.UID {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	b[6] = (b[6] & 0x0f) | 0x40 // version 4
	b[8] = (b[8] & 0x3f) | 0x80 // RFC 4122 variant
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// checkNamespace makes obj's namespace agree with the request's.
func (s *Store) checkNamespace(m metav1.Object, ns string) error {
	if !s.Namespaced {
		m.SetNamespace("")
		return nil
	}
	if m.GetNamespace() == "" {
		m.SetNamespace(ns)
	} else if ns != "" && m.GetNamespace() != ns {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if m.GetNamespace() == "" {
		return apierrors.NewBadRequest("namespace is required")
	}
	return nil
}

// prepareCreate runs the create lifecycle on obj: system fields, the
// BeforeCreate hook (whose undo goes to undo), strategy, validation. It is
// also the create-on-update path.
func (s *Store) prepareCreate(ctx context.Context, ns string, obj runtime.Object, dryRun bool, undo *undoList) (metav1.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err := s.checkNamespace(m, ns); err != nil {
		return nil, err
	}
	// System fields are the server's to set.
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
	m.SetResourceVersion("")
	m.SetCreationTimestamp(metav1.NewTime(s.Env.Clock.Now().Truncate(time.Second)))
	m.SetUID(s.newUID())
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(s.generateName(m.GetGenerateName()))
	}
	if m.GetName() != "" {
		if err := s.beforeCreate(ctx, obj, dryRun, undo); err != nil {
			return nil, err
		}
	}
	if s.Strategy.HasStatus && !s.Strategy.KeepStatusOnCreate {
		ResetStatus(obj)
	}
	if s.Strategy.Generation {
		m.SetGeneration(1)
	} else {
		m.SetGeneration(0)
	}
	if s.Strategy.PrepareForCreate != nil {
		s.Strategy.PrepareForCreate(obj)
	}
	if s.Strategy.SetRequester != nil {
		s.Strategy.SetRequester(obj, UserFrom(ctx))
	}
	var errs field.ErrorList
	if m.GetName() == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	}
	if len(errs) == 0 && s.Strategy.Validate != nil {
		errs = append(errs, s.Strategy.Validate(obj)...)
	}
	if len(errs) > 0 {
		return nil, s.invalid(m.GetName(), errs)
	}
	if s.Strategy.Canonicalize != nil {
		s.Strategy.Canonicalize(obj)
	}
	return m, nil
}

// Create stores a new object. admit is validating admission (may be nil).
func (s *Store) Create(ctx context.Context, ns string, obj runtime.Object, admit ValidateFunc, dryRun bool) (_ runtime.Object, err error) {
	var undo undoList
	defer func() {
		if err != nil || dryRun {
			undo.run()
		}
	}()
	m, err := s.prepareCreate(ctx, ns, obj, dryRun, &undo)
	if err != nil {
		return nil, err
	}
	if admit != nil {
		if err := admit(ctx, obj); err != nil {
			return nil, err
		}
	}
	key := s.Key(m.GetNamespace(), m.GetName())
	if dryRun {
		existing := s.NewFunc()
		if err := s.Storage.Get(ctx, key, storage.GetOptions{IgnoreNotFound: true}, existing); err != nil {
			return nil, s.interpret(err, m.GetName())
		}
		if em, _ := meta.Accessor(existing); em != nil && em.GetResourceVersion() != "" {
			return nil, apierrors.NewAlreadyExists(s.Resource, m.GetName())
		}
		return obj, nil
	}
	out := s.NewFunc()
	if err := s.Storage.Create(ctx, key, obj, out); err != nil {
		err = s.interpret(err, m.GetName())
		if apierrors.IsAlreadyExists(err) && m.GetGenerateName() != "" && strings.HasPrefix(m.GetName(), m.GetGenerateName()) {
			return nil, apierrors.NewGenerateNameConflict(s.Resource, m.GetName(), 1)
		}
		return nil, err
	}
	return out, nil
}

// errDeleteDuringUpdate aborts an update that removed the last finalizer
// of an object being deleted: it is deleted instead.
var errDeleteDuringUpdate = errors.New("finalizers emptied: delete")

// UpdateOptions are the parameters of an update.
type UpdateOptions struct {
	DryRun bool
	// ForceAllowCreate lets the update create the object (server-side apply).
	ForceAllowCreate bool
	// NoCreate refuses to create a missing object even where PUT may (a
	// patch of a missing object is NotFound).
	NoCreate bool
}

// Update replaces ns/name with what info computes from the stored object.
// It reports whether the object was created.
func (s *Store) Update(ctx context.Context, ns, name string, info UpdatedObjectInfo, admitCreate ValidateFunc,
	admitUpdate ValidateUpdateFunc, opts UpdateOptions) (runtime.Object, bool, error) {
	key := s.Key(ns, name)
	var pre *storage.Preconditions
	if p := info.Preconditions(); p != nil {
		pre = &storage.Preconditions{UID: p.UID, ResourceVersion: p.ResourceVersion}
	}
	allowCreate := (s.Strategy.AllowCreateOnUpdate || opts.ForceAllowCreate) && !opts.NoCreate
	var (
		creating bool
		toDelete runtime.Object
		// lastOld is the stored object the stored update was made from.
		lastOld runtime.Object
		undo    undoList
	)
	tryUpdate := func(existing runtime.Object, res storage.ResponseMeta) (runtime.Object, error) {
		// A retried attempt starts afresh: undo the previous one's hooks.
		undo.run()
		lastOld = existing
		creating = res.ResourceVersion == 0
		if creating && !allowCreate {
			return nil, apierrors.NewNotFound(s.Resource, name)
		}
		obj, err := info.UpdatedObject(ctx, existing)
		if err != nil {
			return nil, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if m.GetName() != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
		}
		if creating {
			if _, err := s.prepareCreate(ctx, ns, obj, opts.DryRun, &undo); err != nil {
				return nil, err
			}
			if admitCreate != nil {
				if err := admitCreate(ctx, obj); err != nil {
					return nil, err
				}
			}
			return obj, nil
		}
		newRV, err := storage.ParseResourceVersion(m.GetResourceVersion())
		if err != nil {
			return nil, err
		}
		switch {
		case newRV == 0 && s.Strategy.AllowUnconditionalUpdate:
			m.SetResourceVersion(storage.FormatRV(int64(res.ResourceVersion)))
		case newRV == 0:
			return nil, s.invalid(name, field.ErrorList{field.Invalid(field.NewPath("metadata", "resourceVersion"), int64(0), "must be specified for an update")})
		case uint64(newRV) != res.ResourceVersion:
			return nil, apierrors.NewConflict(s.Resource, name, errors.New(OptimisticLockErrorMsg))
		}
		if err := s.beforeUpdate(ctx, obj, existing, opts.DryRun, &undo); err != nil {
			return nil, err
		}
		if err := s.prepareUpdate(ns, obj, existing); err != nil {
			return nil, err
		}
		if admitUpdate != nil {
			if err := admitUpdate(ctx, obj, existing); err != nil {
				return nil, err
			}
		}
		if s.shouldDeleteDuringUpdate(obj, existing) {
			toDelete = obj
			return nil, errDeleteDuringUpdate
		}
		return obj, nil
	}
	if opts.DryRun {
		// Run the whole update against the stored object without writing.
		existing := s.NewFunc()
		if err := s.Storage.Get(ctx, key, storage.GetOptions{IgnoreNotFound: true}, existing); err != nil {
			return nil, false, s.interpret(err, name)
		}
		em, _ := meta.Accessor(existing)
		rev, _ := storage.ParseResourceVersion(em.GetResourceVersion())
		if rev != 0 && pre != nil {
			if (pre.UID != nil && *pre.UID != em.GetUID()) || (pre.ResourceVersion != nil && *pre.ResourceVersion != em.GetResourceVersion()) {
				return nil, false, apierrors.NewConflict(s.Resource, name, errors.New("precondition failed"))
			}
		}
		obj, err := tryUpdate(existing, storage.ResponseMeta{ResourceVersion: uint64(rev)})
		undo.run()
		if err == errDeleteDuringUpdate {
			return toDelete, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return obj, creating, nil
	}
	out := s.NewFunc()
	err := s.Storage.GuaranteedUpdate(ctx, key, out, allowCreate, pre, tryUpdate, nil)
	if err == errDeleteDuringUpdate {
		undo.run()
		// As upstream, the client gets the object it sent (finalizers
		// gone), and the object is deleted.
		if _, _, err := s.deleteNow(ctx, name, key, toDelete, pre); err != nil {
			return nil, false, err
		}
		return toDelete, false, nil
	}
	if err != nil {
		undo.run()
		return nil, false, s.interpret(err, name)
	}
	if !creating {
		s.afterUpdate(ctx, out, lastOld)
	}
	return out, creating, nil
}

// prepareUpdate runs the update lifecycle on obj given the stored object.
func (s *Store) prepareUpdate(ns string, obj, old runtime.Object) error {
	m, _ := meta.Accessor(obj)
	om, _ := meta.Accessor(old)
	if err := s.checkNamespace(m, ns); err != nil {
		return err
	}
	// What the server owns stays as stored.
	if m.GetUID() == "" {
		m.SetUID(om.GetUID())
	}
	m.SetCreationTimestamp(om.GetCreationTimestamp())
	m.SetGeneration(om.GetGeneration())
	m.SetSelfLink("")
	if om.GetDeletionTimestamp() != nil {
		m.SetDeletionTimestamp(om.GetDeletionTimestamp())
		m.SetDeletionGracePeriodSeconds(om.GetDeletionGracePeriodSeconds())
	} else {
		m.SetDeletionTimestamp(nil)
		m.SetDeletionGracePeriodSeconds(nil)
	}
	if s.Strategy.HasStatus {
		CopyStatus(obj, old)
	}
	if s.Strategy.PrepareForUpdate != nil {
		s.Strategy.PrepareForUpdate(obj, old)
	}
	if s.Strategy.StampUpdate != nil {
		s.Strategy.StampUpdate(obj, old, s.Env.Clock.Now())
	}
	if s.Strategy.Generation && specChanged(obj, old) {
		m.SetGeneration(om.GetGeneration() + 1)
	}
	var errs field.ErrorList
	if m.GetUID() != om.GetUID() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "uid"), m.GetUID(), "field is immutable"))
	}
	if s.Strategy.ValidateUpdate != nil {
		errs = append(errs, s.Strategy.ValidateUpdate(obj, old)...)
	}
	if len(errs) > 0 {
		return s.invalid(m.GetName(), errs)
	}
	if s.Strategy.Canonicalize != nil {
		s.Strategy.Canonicalize(obj)
	}
	return nil
}

// shouldDeleteDuringUpdate: an object being deleted whose finalizers are
// all gone and whose grace period is over is deleted by the update.
func (s *Store) shouldDeleteDuringUpdate(obj, old runtime.Object) bool {
	m, _ := meta.Accessor(obj)
	om, _ := meta.Accessor(old)
	if m.GetDeletionTimestamp() == nil || len(m.GetFinalizers()) > 0 {
		return false
	}
	if s.Strategy.Finalizing != nil && s.Strategy.Finalizing(obj) {
		return false
	}
	if g := m.GetDeletionGracePeriodSeconds(); g != nil && *g > 0 {
		return false
	}
	return len(om.GetFinalizers()) > 0 || om.GetDeletionTimestamp() != nil
}

// deleteNow removes the object from storage and reports the result the way
// DELETE does.
func (s *Store) deleteNow(ctx context.Context, name, key string, last runtime.Object, pre *storage.Preconditions) (runtime.Object, bool, error) {
	out := s.NewFunc()
	if err := s.Storage.Delete(ctx, key, out, pre, nil, last); err != nil {
		if storage.IsNotFound(err) {
			// Someone else finished it (and ran the hooks).
			return last, true, nil
		}
		return nil, false, s.interpret(err, name)
	}
	s.afterDelete(ctx, out)
	return out, true, nil
}
