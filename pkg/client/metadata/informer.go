package metadata

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
)

// NewListWatch returns a ListWatch of res's metadata in namespace ("" =
// all), with tweak (may be nil) applied to every list and watch.
func NewListWatch(m *Client, res client.Resource, namespace string, tweak func(*metav1.ListOptions)) *cache.ListWatch {
	rc := m.Resource(res).Namespace(namespace)
	return &cache.ListWatch{
		ListFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&o)
			}
			return rc.List(ctx, o)
		},
		WatchFunc: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if tweak != nil {
				tweak(&o)
			}
			return rc.Watch(ctx, o)
		},
	}
}

// Informer is a metadata-only informer of one resource.
type Informer = cache.TypedInformer[*metav1.PartialObjectMetadata]

// NewInformer returns a metadata informer of res (indexed by namespace
// unless o.Indexers says otherwise).
func NewInformer(m *Client, res client.Resource, namespace string, tweak func(*metav1.ListOptions), o cache.SharedIndexInformerOptions) *Informer {
	if o.Indexers == nil {
		o.Indexers = cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	}
	if o.Reflector.Name == "" {
		// Every metadata informer decodes the same type: name the resource
		// in its logs.
		o.Reflector.Name = "metadata " + res.GroupVersionResource().String()
	}
	inf := cache.NewSharedIndexInformerWithOptions(NewListWatch(m, res, namespace, tweak), &metav1.PartialObjectMetadata{}, o)
	return cache.WrapTypedInformer[*metav1.PartialObjectMetadata](inf, res.GroupVersionResource().GroupResource())
}

// SharedInformerFactory makes and runs metadata informers, one per
// GroupVersionResource (client-go's metadatainformer factory).
type SharedInformerFactory struct {
	m            *client.Client
	mc           *Client
	resync       time.Duration
	namespace    string
	tweak        func(*metav1.ListOptions)
	informerOpts cache.SharedIndexInformerOptions
	transform    cache.TransformFunc

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]*factoryEntry
	wg        sync.WaitGroup
	shutdown  bool
}

type factoryEntry struct {
	informer *Informer
	res      client.Resource
	started  bool
	cancel   context.CancelFunc
}

// FactoryOption configures a SharedInformerFactory.
type FactoryOption func(*SharedInformerFactory)

// WithNamespace limits the factory's informers to one namespace.
func WithNamespace(ns string) FactoryOption {
	return func(f *SharedInformerFactory) { f.namespace = ns }
}

// WithTweakListOptions adjusts every list and watch.
func WithTweakListOptions(tweak func(*metav1.ListOptions)) FactoryOption {
	return func(f *SharedInformerFactory) { f.tweak = tweak }
}

// WithInformerOptions tunes every informer (clock, reflector options); its
// ResyncPeriod and Indexers are set by the factory.
func WithInformerOptions(o cache.SharedIndexInformerOptions) FactoryOption {
	return func(f *SharedInformerFactory) { f.informerOpts = o }
}

// WithTransform sets the transform of every informer the factory makes
// (see SharedInformer.SetTransform): e.g. to drop what the consumer never
// reads before the object is cached.
func WithTransform(transform cache.TransformFunc) FactoryOption {
	return func(f *SharedInformerFactory) { f.transform = transform }
}

// NewSharedInformerFactory returns a factory of metadata informers over c,
// whose handlers resync every defaultResync (0: never).
func NewSharedInformerFactory(c *client.Client, defaultResync time.Duration, opts ...FactoryOption) *SharedInformerFactory {
	f := &SharedInformerFactory{m: c, mc: New(c), resync: defaultResync, informers: map[schema.GroupVersionResource]*factoryEntry{}}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Client is the factory's metadata client.
func (f *SharedInformerFactory) Client() *Client { return f.mc }

// ForResource returns the informer of res, making it the first time.
func (f *SharedInformerFactory) ForResource(res client.Resource) *Informer {
	f.mu.Lock()
	defer f.mu.Unlock()
	gvr := res.GroupVersionResource()
	if e, ok := f.informers[gvr]; ok {
		return e.informer
	}
	o := f.informerOpts
	o.ResyncPeriod = f.resync
	o.Indexers = nil
	ns := f.namespace
	if !res.Namespaced {
		ns = ""
	}
	inf := NewInformer(f.mc, res, ns, f.tweak, o)
	if f.transform != nil {
		_ = inf.Informer().SetTransform(f.transform) // a new informer has not started
	}
	f.informers[gvr] = &factoryEntry{informer: inf, res: res}
	return inf
}

// Has reports whether the factory has an informer of gvr.
func (f *SharedInformerFactory) Has(gvr schema.GroupVersionResource) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.informers[gvr]
	return ok
}

// Start runs every informer not yet started, until ctx is done or the
// informer is stopped with Stop.
func (f *SharedInformerFactory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	for _, e := range f.informers {
		if e.started {
			continue
		}
		e.started = true
		ictx, cancel := context.WithCancel(ctx)
		e.cancel = cancel
		inf := e.informer
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			inf.Run(ictx)
		}()
	}
}

// Stop stops and forgets the informer of gvr (a resource that is no longer
// served); a later ForResource makes a new one.
func (f *SharedInformerFactory) Stop(gvr schema.GroupVersionResource) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.informers[gvr]; ok {
		if e.cancel != nil {
			e.cancel()
		}
		delete(f.informers, gvr)
	}
}

// WaitForCacheSync waits until every started informer has synced or ctx
// ends, and reports which have synced.
func (f *SharedInformerFactory) WaitForCacheSync(ctx context.Context) map[schema.GroupVersionResource]bool {
	f.mu.Lock()
	started := map[schema.GroupVersionResource]*Informer{}
	for gvr, e := range f.informers {
		if e.started {
			started[gvr] = e.informer
		}
	}
	f.mu.Unlock()
	out := map[schema.GroupVersionResource]bool{}
	for gvr, inf := range started {
		select {
		case <-inf.Informer().Synced():
			out[gvr] = true
		case <-ctx.Done():
			out[gvr] = inf.HasSynced()
		}
	}
	return out
}

// Shutdown stops every informer and waits for them (after their ctx
// ended or Stop).
func (f *SharedInformerFactory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	for _, e := range f.informers {
		if e.cancel != nil {
			e.cancel()
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
}
