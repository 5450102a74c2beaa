package cache

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
)

// KeyFunc computes the store key of an object. It must be deterministic: the
// same object always yields the same key.
type KeyFunc func(obj any) (string, error)

// KeyError is returned when a KeyFunc fails for an object.
type KeyError struct {
	Obj any
	Err error
}

func (k KeyError) Error() string {
	return fmt.Sprintf("couldn't create key for object %+v: %v", k.Obj, k.Err)
}

func (k KeyError) Unwrap() error { return k.Err }

// ExplicitKey can be passed to MetaNamespaceKeyFunc (and so to any store using
// it) when the caller already knows the key; it is used verbatim.
type ExplicitKey string

// DeletedFinalStateUnknown is placed into a DeltaFIFO when an object was
// deleted but the watch deletion event was missed (typically discovered by a
// relist). Obj is the last known state of the object and may be stale or nil.
type DeletedFinalStateUnknown struct {
	Key string
	Obj any
}

// MetaNamespaceKeyFunc is the default KeyFunc: "namespace/name" for
// namespaced objects and "name" for cluster-scoped ones. An ExplicitKey is
// returned unchanged.
func MetaNamespaceKeyFunc(obj any) (string, error) {
	if key, ok := obj.(ExplicitKey); ok {
		return string(key), nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("object has no meta: %v", err)
	}
	if ns := m.GetNamespace(); ns != "" {
		return ns + "/" + m.GetName(), nil
	}
	return m.GetName(), nil
}

// DeletionHandlingMetaNamespaceKeyFunc is MetaNamespaceKeyFunc that also
// understands DeletedFinalStateUnknown tombstones, returning their Key.
// Delete event handlers should use it to key the objects they receive.
func DeletionHandlingMetaNamespaceKeyFunc(obj any) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return MetaNamespaceKeyFunc(obj)
}

// SplitMetaNamespaceKey splits a key produced by MetaNamespaceKeyFunc into
// namespace (empty for cluster-scoped keys) and name.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	switch strings.Count(key, "/") {
	case 0:
		return "", key, nil
	case 1:
		namespace, name, _ = strings.Cut(key, "/")
		return namespace, name, nil
	}
	return "", "", fmt.Errorf("unexpected key format: %q", key)
}
