package storage

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// CachedObject wraps an object held by the watch cache and remembers its
// serializations, so an object sent to many watchers and lists is encoded
// once per format. The wrapped object is shared and must never be mutated.
type CachedObject struct {
	runtime.Object

	mu   sync.Mutex
	encs []encoding
}

type encoding struct {
	id   string
	data []byte
	err  error
}

// NewCachedObject wraps obj.
func NewCachedObject(obj runtime.Object) *CachedObject {
	return &CachedObject{Object: obj}
}

// Encoded returns the encoding of the object identified by id, computing it
// with enc the first time.
func (c *CachedObject) Encoded(id string, enc func(runtime.Object) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.encs {
		if e.id == id {
			return e.data, e.err
		}
	}
	data, err := enc(c.Object)
	c.encs = append(c.encs, encoding{id: id, data: data, err: err})
	return data, err
}

// DeepCopyObject returns a private copy of the wrapped object.
func (c *CachedObject) DeepCopyObject() runtime.Object { return c.Object.DeepCopyObject() }

// Unwrap returns the object inside a CachedObject, or obj itself.
func Unwrap(obj runtime.Object) runtime.Object {
	if c, ok := obj.(*CachedObject); ok {
		return c.Object
	}
	return obj
}
