package volumebinding

import (
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
)

// assumeCache overlays an informer's lister with objects the scheduler
// assumed (changed in memory in Reserve, to be written in PreBind), as
// upstream's AssumeCache: an assumed object hides the informer's until the
// informer shows a newer version (the write, or somebody else's), or it is
// restored.
type assumeCache[T runtime.Object] struct {
	lister   cache.Lister[T]
	resource schema.GroupResource

	mu      sync.RWMutex
	assumed map[string]T // key: namespace/name or name
}

func newAssumeCache[T runtime.Object](l cache.Lister[T], resource schema.GroupResource) *assumeCache[T] {
	return &assumeCache[T]{lister: l, resource: resource, assumed: map[string]T{}}
}

func cacheKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// newer reports whether a's resourceVersion is newer than b's (numeric
// versions compare as numbers; others: any difference is newer).
func newer(a, b runtime.Object) bool {
	ma, err1 := meta.Accessor(a)
	mb, err2 := meta.Accessor(b)
	if err1 != nil || err2 != nil {
		return false
	}
	ra, rb := ma.GetResourceVersion(), mb.GetResourceVersion()
	na, errA := strconv.ParseUint(ra, 10, 64)
	nb, errB := strconv.ParseUint(rb, 10, 64)
	if errA == nil && errB == nil {
		return na > nb
	}
	return ra != rb
}

// get returns the assumed object if the informer has nothing newer,
// else the informer's (dropping the stale assumption).
func (c *assumeCache[T]) get(namespace, name string) (T, error) {
	latest, err := helper.GetObject(c.lister, c.resource, namespace, name)
	key := cacheKey(namespace, name)
	c.mu.RLock()
	a, ok := c.assumed[key]
	c.mu.RUnlock()
	if !ok {
		return latest, err
	}
	if err == nil && newer(latest, a) {
		c.mu.Lock()
		if cur, still := c.assumed[key]; still && !newer(cur, latest) {
			delete(c.assumed, key)
		}
		c.mu.Unlock()
		return latest, nil
	}
	if apierrors.IsNotFound(err) {
		c.restore(namespace, name) // deleted: the assumption is moot
		return latest, err
	}
	if err != nil {
		return latest, err
	}
	return a, nil
}

// getAPI returns the informer's object, ignoring assumptions.
func (c *assumeCache[T]) getAPI(namespace, name string) (T, error) {
	return helper.GetObject(c.lister, c.resource, namespace, name)
}

// assume records obj (a changed copy of the informer's object at the same
// resourceVersion).
func (c *assumeCache[T]) assume(obj T) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	cur, err := c.get(m.GetNamespace(), m.GetName())
	if err != nil {
		return err
	}
	if newer(cur, obj) {
		mc, _ := meta.Accessor(cur)
		return fmt.Errorf("%v %q is out of sync (stored: %s, assume: %s)", c.resource.Resource, cacheKey(m.GetNamespace(), m.GetName()), mc.GetResourceVersion(), m.GetResourceVersion())
	}
	c.mu.Lock()
	c.assumed[cacheKey(m.GetNamespace(), m.GetName())] = obj
	c.mu.Unlock()
	return nil
}

// restore drops the assumption for an object.
func (c *assumeCache[T]) restore(namespace, name string) {
	c.mu.Lock()
	delete(c.assumed, cacheKey(namespace, name))
	c.mu.Unlock()
}

// list returns the informer's objects that keep, with assumptions applied
// (keep sees the assumed version).
func (c *assumeCache[T]) list(keep func(T) bool) ([]T, error) {
	all, err := c.lister.List(nil)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	n := len(c.assumed)
	c.mu.RUnlock()
	var out []T
	for _, o := range all {
		if n > 0 {
			if m, err := meta.Accessor(o); err == nil {
				c.mu.RLock()
				a, ok := c.assumed[cacheKey(m.GetNamespace(), m.GetName())]
				c.mu.RUnlock()
				if ok && !newer(o, a) {
					o = a
				}
			}
		}
		if keep(o) {
			out = append(out, o)
		}
	}
	return out, nil
}
