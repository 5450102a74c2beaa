package helper

import (
	"fmt"

	"github.com/skiff-sh/skiff/pkg/client/cache"
)

// As converts the old and new objects a queueing hint gets to T. Either
// may be nil (an add has no old object, a delete no new one); a deleted
// object seen only by a relist (cache.DeletedFinalStateUnknown) is
// unwrapped. An object of another type is an error.
func As[T any](oldObj, newObj any) (T, T, error) {
	var oldT, newT T
	var ok bool
	if newObj != nil {
		if newT, ok = newObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, but got %T", newT, newObj)
		}
	}
	if oldObj != nil {
		if tomb, isTomb := oldObj.(cache.DeletedFinalStateUnknown); isTomb {
			oldObj = tomb.Obj
		} else if tomb, isTomb := oldObj.(*cache.DeletedFinalStateUnknown); isTomb && tomb != nil {
			oldObj = tomb.Obj
		}
		if oldT, ok = oldObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, but got %T", oldT, oldObj)
		}
	}
	return oldT, newT, nil
}
