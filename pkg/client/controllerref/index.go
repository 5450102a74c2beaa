package controllerref

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client/cache"
)

// ControllerUIDIndex is the index AddControllerUIDIndex adds to an
// informer: every object under its controller's UID, and an object without
// a controller under OrphanKey(its namespace). A controller that syncs one
// owner then reads that owner's objects (and the orphans it may adopt)
// instead of every object of the namespace, as upstream's
// PodControllerUIDIndex does for the ReplicaSet controller.
const ControllerUIDIndex = "controllerUID"

// OrphanKey is the ControllerUIDIndex key of the objects of namespace that
// have no controller. UIDs never contain '/', so it never names an owner.
func OrphanKey(namespace string) string { return "orphan/" + namespace }

func controllerUIDIndexFunc(obj any) ([]string, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("controllerUID index: %T is not an object", obj)
	}
	if ref := GetControllerOfNoCopy(o); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{OrphanKey(o.GetNamespace())}, nil
}

// AddControllerUIDIndex adds ControllerUIDIndex to inf unless it has it
// already (several controllers share one informer).
func AddControllerUIDIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[ControllerUIDIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{ControllerUIDIndex: controllerUIDIndexFunc})
}

// Controlled returns the objects of indexer (which has ControllerUIDIndex)
// controlled by the owner with UID uid, and with includeOrphans also the
// objects of namespace that have no controller.
func Controlled[T metav1.Object](indexer cache.Indexer, namespace string, uid types.UID, includeOrphans bool) ([]T, error) {
	owned, err := indexer.ByIndex(ControllerUIDIndex, string(uid))
	if err != nil {
		return nil, err
	}
	var orphans []any
	if includeOrphans {
		if orphans, err = indexer.ByIndex(ControllerUIDIndex, OrphanKey(namespace)); err != nil {
			return nil, err
		}
	}
	out := make([]T, 0, len(owned)+len(orphans))
	for _, list := range [][]any{owned, orphans} {
		for _, o := range list {
			if t, ok := o.(T); ok {
				out = append(out, t)
			}
		}
	}
	return out, nil
}
