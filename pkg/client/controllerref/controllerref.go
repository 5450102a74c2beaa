package controllerref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
)

// GetControllerOfNoCopy returns obj's controller reference (nil if it has
// none); the result points into obj.
func GetControllerOfNoCopy(obj metav1.Object) *metav1.OwnerReference {
	refs := obj.GetOwnerReferences()
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// GetControllerOf returns a copy of obj's controller reference (nil if it
// has none).
func GetControllerOf(obj metav1.Object) *metav1.OwnerReference {
	ref := GetControllerOfNoCopy(obj)
	if ref == nil {
		return nil
	}
	cp := *ref
	if ref.Controller != nil {
		c := *ref.Controller
		cp.Controller = &c
	}
	if ref.BlockOwnerDeletion != nil {
		b := *ref.BlockOwnerDeletion
		cp.BlockOwnerDeletion = &b
	}
	return &cp
}

// IsControlledBy reports whether obj's controller reference names owner's
// UID.
func IsControlledBy(obj, owner metav1.Object) bool {
	ref := GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == owner.GetUID()
}

// NewControllerRef is the controller reference to owner, of kind gvk, with
// controller and blockOwnerDeletion true.
func NewControllerRef(owner metav1.Object, gvk schema.GroupVersionKind) *metav1.OwnerReference {
	yes, block := true, true
	return &metav1.OwnerReference{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         &yes,
		BlockOwnerDeletion: &block,
	}
}

// PatchType is the type of AdoptPatch and ReleasePatch.
const PatchType = types.StrategicMergePatchType

type patchMeta struct {
	Metadata struct {
		OwnerReferences []any     `json:"ownerReferences"`
		UID             types.UID `json:"uid"`
	} `json:"metadata"`
}

// AdoptPatch is the strategic merge patch that makes owner (of kind gvk)
// the controller of the object whose UID is uid.
func AdoptPatch(owner metav1.Object, gvk schema.GroupVersionKind, uid types.UID) ([]byte, error) {
	var p patchMeta
	p.Metadata.OwnerReferences = []any{NewControllerRef(owner, gvk)}
	p.Metadata.UID = uid
	return json.Marshal(p)
}

// ReleasePatch is the strategic merge patch that removes the owner
// reference to ownerUID from the object whose UID is uid.
func ReleasePatch(ownerUID, uid types.UID) ([]byte, error) {
	var p patchMeta
	p.Metadata.OwnerReferences = []any{map[string]any{"$patch": "delete", "uid": ownerUID}}
	p.Metadata.UID = uid
	return json.Marshal(p)
}

// Patcher applies a strategic merge patch to namespace/name.
type Patcher func(ctx context.Context, namespace, name string, patch []byte) error

// PatcherFor is the Patcher of a typed client's resource.
func PatcherFor[T client.Object, L client.ObjectList](c *client.Typed[T, L]) Patcher {
	return func(ctx context.Context, namespace, name string, patch []byte) error {
		_, err := c.Namespace(namespace).Patch(ctx, name, PatchType, patch, metav1.PatchOptions{})
		return err
	}
}

// Manager claims objects for one controller (upstream's
// BaseControllerRefManager). A Manager is meant for one claim pass (one
// sync): CanAdopt is checked at most once in its life.
type Manager struct {
	// Controller is the owner; Kind its kind.
	Controller metav1.Object
	Kind       schema.GroupVersionKind
	// Selector chooses the objects the controller wants.
	Selector labels.Selector
	// CanAdopt (optional) is checked once, before the first adoption.
	CanAdopt func(ctx context.Context) error
	// Patch patches the claimed objects' resource.
	Patch Patcher

	once     sync.Once
	adoptErr error
}

func (m *Manager) canAdopt(ctx context.Context) error {
	m.once.Do(func() {
		if m.CanAdopt != nil {
			m.adoptErr = m.CanAdopt(ctx)
		}
	})
	return m.adoptErr
}

// Claim reports whether the controller owns obj once this returns,
// adopting a matching orphan or releasing an owned object that no longer
// matches. filters further restrict what matches (besides Selector).
func (m *Manager) Claim(ctx context.Context, obj metav1.Object, filters ...func(metav1.Object) bool) (bool, error) {
	match := m.Selector == nil || m.Selector.Matches(labels.Set(obj.GetLabels()))
	for _, f := range filters {
		match = match && f(obj)
	}
	if ref := GetControllerOfNoCopy(obj); ref != nil {
		if ref.UID != m.Controller.GetUID() {
			return false, nil // someone else's
		}
		if match {
			return true, nil
		}
		if m.Controller.GetDeletionTimestamp() != nil {
			return false, nil // ours, but we are going away: leave it to the GC
		}
		if err := m.Release(ctx, obj); err != nil {
			return false, err
		}
		return false, nil
	}
	// An orphan.
	if m.Controller.GetDeletionTimestamp() != nil || !match || obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if ns := m.Controller.GetNamespace(); ns != "" && ns != obj.GetNamespace() {
		return false, nil
	}
	if err := m.Adopt(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // gone meanwhile
		}
		return false, err
	}
	return true, nil
}

// Adopt makes the controller obj's controller (after CanAdopt).
func (m *Manager) Adopt(ctx context.Context, obj metav1.Object) error {
	if err := m.canAdopt(ctx); err != nil {
		return fmt.Errorf("can't adopt %s %s/%s (%v): %v", m.Kind.Kind, obj.GetNamespace(), obj.GetName(), obj.GetUID(), err) //nolint:errorlint // not wrapped: a NotFound owner must not read as a NotFound object
	}
	patch, err := AdoptPatch(m.Controller, m.Kind, obj.GetUID())
	if err != nil {
		return err
	}
	return m.Patch(ctx, obj.GetNamespace(), obj.GetName(), patch)
}

// Release removes the controller's reference from obj. An object that is
// gone or no longer carries the reference (or was recreated: UID
// mismatch) is released already.
func (m *Manager) Release(ctx context.Context, obj metav1.Object) error {
	patch, err := ReleasePatch(m.Controller.GetUID(), obj.GetUID())
	if err != nil {
		return err
	}
	err = m.Patch(ctx, obj.GetNamespace(), obj.GetName(), patch)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil
	}
	return err
}

// Claim claims each of objs with m and returns those the controller owns
// afterwards, in order, with every error met (joined); filters restrict
// what matches besides m.Selector.
func Claim[T metav1.Object](ctx context.Context, m *Manager, objs []T, filters ...func(T) bool) ([]T, error) {
	var fs []func(metav1.Object) bool
	for _, f := range filters {
		fs = append(fs, func(o metav1.Object) bool { return f(o.(T)) })
	}
	var claimed []T
	var errs []error
	for _, o := range objs {
		ok, err := m.Claim(ctx, o, fs...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			claimed = append(claimed, o)
		}
	}
	return claimed, errors.Join(errs...)
}

// RecheckDeletionTimestamp is a CanAdopt that reads the owner live (get,
// not from a cache) and refuses when it is gone, was replaced by another
// object of the same name, or is being deleted.
func RecheckDeletionTimestamp(owner metav1.Object, get func(ctx context.Context) (metav1.Object, error)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		fresh, err := get(ctx)
		if err != nil {
			return err
		}
		if fresh.GetUID() != owner.GetUID() {
			return fmt.Errorf("original %s/%s is gone: got uid %v, wanted %v", owner.GetNamespace(), owner.GetName(), fresh.GetUID(), owner.GetUID())
		}
		if fresh.GetDeletionTimestamp() != nil {
			return fmt.Errorf("%s/%s has just been deleted at %v", owner.GetNamespace(), owner.GetName(), fresh.GetDeletionTimestamp())
		}
		return nil
	}
}
