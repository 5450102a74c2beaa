package ownerref

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Patcher applies a strategic merge patch to the named object.
type Patcher func(ctx context.Context, namespace, name string, patch []byte) error

// Manager claims objects for one controller.
type Manager struct {
	Controller metav1.Object
	Kind       schema.GroupVersionKind
	Selector   labels.Selector
	// CanAdopt is checked (once) before the first adoption.
	CanAdopt func(ctx context.Context) error
	Patch    Patcher

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

// Claim decides whether obj belongs to the controller, adopting or releasing
// it as needed. It reports whether the controller owns obj afterwards.
func (m *Manager) Claim(ctx context.Context, obj metav1.Object) (bool, error) {
	match := m.Selector.Matches(labels.Set(obj.GetLabels()))
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		if ref.UID != m.Controller.GetUID() {
			return false, nil
		}
		if match {
			return true, nil
		}
		if m.Controller.GetDeletionTimestamp() != nil {
			return false, nil
		}
		if err := m.release(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return false, nil
	}
	if m.Controller.GetDeletionTimestamp() != nil || !match || obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if ns := m.Controller.GetNamespace(); ns != "" && ns != obj.GetNamespace() {
		return false, nil
	}
	if err := m.adopt(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (m *Manager) adopt(ctx context.Context, obj metav1.Object) error {
	if err := m.canAdopt(ctx); err != nil {
		return fmt.Errorf("can't adopt %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []metav1.OwnerReference{*NewControllerRef(m.Controller, m.Kind)},
		"uid":             obj.GetUID(),
	}})
	if err != nil {
		return err
	}
	return m.Patch(ctx, obj.GetNamespace(), obj.GetName(), patch)
}

func (m *Manager) release(ctx context.Context, obj metav1.Object) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": []map[string]any{{"$patch": "delete", "uid": m.Controller.GetUID()}},
		"uid":             obj.GetUID(),
	}})
	if err != nil {
		return err
	}
	err = m.Patch(ctx, obj.GetNamespace(), obj.GetName(), patch)
	if apierrors.IsInvalid(err) {
		// The object no longer has the owner reference (or its UID changed).
		return nil
	}
	return err
}

// NewControllerRef is the controller reference of owner (controller and
// blockOwnerDeletion set).
func NewControllerRef(owner metav1.Object, gvk schema.GroupVersionKind) *metav1.OwnerReference {
	t := true
	return &metav1.OwnerReference{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         &t,
		BlockOwnerDeletion: &t,
	}
}

// RecheckDeletionTimestamp returns a CanAdopt that reads the owner live
// (get) and refuses when it is gone, was replaced or is being deleted.
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

// PatchType is the patch type Manager's patches use.
const PatchType = types.StrategicMergePatchType
