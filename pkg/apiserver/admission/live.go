package admission

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	liveLookupTTL = 30 * time.Second
	liveLookupMax = 4096
)

// liveLookup lists a resource in a namespace from the watch cache or,
// when the cache has none there (one created a moment ago may not have
// reached it), from storage, reusing that live answer per namespace for
// liveLookupTTL, as upstream's LimitRanger and ResourceQuota plugins do.
type liveLookup struct {
	mu   sync.Mutex
	live map[string]liveEntry
}

type liveEntry struct {
	expiry time.Time
	objs   []runtime.Object
}

func (l *liveLookup) list(ctx context.Context, d Deps, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	objs, err := d.Getter.List(ctx, gr, ns)
	if err != nil || len(objs) > 0 {
		return objs, err
	}
	var now time.Time
	if d.Clock != nil {
		now = d.Clock.Now()
	} else {
		now = time.Now()
	}
	l.mu.Lock()
	e, ok := l.live[ns]
	l.mu.Unlock()
	if ok && now.Before(e.expiry) {
		return e.objs, nil
	}
	objs, err = d.Getter.ListConsistent(ctx, gr, ns)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live == nil {
		l.live = map[string]liveEntry{}
	}
	if len(l.live) >= liveLookupMax {
		for k, v := range l.live {
			if !now.Before(v.expiry) || len(l.live) >= liveLookupMax {
				delete(l.live, k)
			}
		}
	}
	l.live[ns] = liveEntry{expiry: now.Add(liveLookupTTL), objs: objs}
	return objs, nil
}

// forget drops the live answer for ns (an object of the resource is being
// created there: the next lookup must not reuse an answer without it).
func (l *liveLookup) forget(ns string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.live, ns)
}
