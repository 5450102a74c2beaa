package storage

import (
	"sync"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Objects written by the same manager with the same shape (every pod of a
// Deployment, every lease renewal) carry byte-identical managedFields sets.
// InternManagedFields makes such objects share one copy of those bytes and
// of the manager and version strings, so the watch cache does not hold
// thousands of copies of the same field set.

const (
	// maxInterned bounds the distinct field sets kept; beyond it new sets
	// are not interned (the table is never a leak).
	maxInterned = 8192
	// maxInternedSize: larger sets are rare and left alone.
	maxInternedSize = 16 << 10
)

var fieldSets struct {
	mu sync.RWMutex
	m  map[string][]byte
}

func internFieldSet(raw []byte) []byte {
	if len(raw) == 0 || len(raw) > maxInternedSize {
		return raw
	}
	fieldSets.mu.RLock()
	canon, ok := fieldSets.m[string(raw)]
	fieldSets.mu.RUnlock()
	if ok {
		return canon
	}
	fieldSets.mu.Lock()
	defer fieldSets.mu.Unlock()
	if canon, ok := fieldSets.m[string(raw)]; ok {
		return canon
	}
	if fieldSets.m == nil {
		fieldSets.m = map[string][]byte{}
	}
	if len(fieldSets.m) >= maxInterned {
		return raw
	}
	canon = append([]byte(nil), raw...)
	fieldSets.m[string(canon)] = canon
	return canon
}

func internString(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// InternManagedFields replaces obj's managedFields bytes and strings by
// shared canonical copies. It must be called before obj is shared (the
// interned bytes are never modified: callers copy managedFields before
// changing them, as DeepCopy does).
func InternManagedFields(obj runtime.Object) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	mf := m.GetManagedFields()
	for i := range mf {
		e := &mf[i]
		e.Manager = internString(e.Manager)
		e.APIVersion = internString(e.APIVersion)
		e.FieldsType = internString(e.FieldsType)
		e.Subresource = internString(e.Subresource)
		if e.FieldsV1 != nil {
			e.FieldsV1.Raw = internFieldSet(e.FieldsV1.Raw)
		}
	}
}
