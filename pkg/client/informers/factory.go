package informers

import (
	"context"
	"reflect"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
)

// NewInformerFunc makes an informer for the factory, with the resync
// period the factory chose for its type.
type NewInformerFunc func(c *client.Client, resyncPeriod time.Duration) cache.SharedIndexInformer

// Option configures a SharedInformerFactory.
type Option func(*SharedInformerFactory)

// WithNamespace limits the factory's informers to one namespace (for
// namespaced resources).
func WithNamespace(namespace string) Option {
	return func(f *SharedInformerFactory) { f.namespace = namespace }
}

// WithTweakListOptions adjusts every list and watch of the factory's
// informers, e.g. to set a label or field selector.
func WithTweakListOptions(tweak func(*metav1.ListOptions)) Option {
	return func(f *SharedInformerFactory) { f.tweak = tweak }
}

// WithTransform sets the transform of every informer the factory makes
// (see SharedInformer.SetTransform).
func WithTransform(transform cache.TransformFunc) Option {
	return func(f *SharedInformerFactory) { f.transform = transform }
}

// WithCustomResyncConfig sets the resync period of some object types
// (keyed by an example object, e.g. &corev1.Pod{}).
func WithCustomResyncConfig(resync map[client.Object]time.Duration) Option {
	return func(f *SharedInformerFactory) {
		for obj, d := range resync {
			f.customResync[reflect.TypeOf(obj)] = d
		}
	}
}

// WithInformerOptions tunes every informer: clock and Reflector options
// (backoff, randomness, paging, watch-list, logger). Its ResyncPeriod and
// Indexers are ignored: the factory sets them.
func WithInformerOptions(o cache.SharedIndexInformerOptions) Option {
	return func(f *SharedInformerFactory) { f.informerOpts = o }
}

// SharedInformerFactory makes and runs shared informers, one per resource.
// It is safe for concurrent use.
type SharedInformerFactory struct {
	client        *client.Client
	defaultResync time.Duration
	namespace     string
	tweak         func(*metav1.ListOptions)
	transform     cache.TransformFunc
	customResync  map[reflect.Type]time.Duration
	informerOpts  cache.SharedIndexInformerOptions

	mu           sync.Mutex
	informers    map[informerKey]*entry
	cancels      []context.CancelFunc
	shuttingDown bool
	wg           sync.WaitGroup
}

// informerKey identifies an informer: its objects' Go type and, when the
// type does not determine it (unstructured), its resource.
type informerKey struct {
	typ reflect.Type
	res client.Resource
}

type entry struct {
	informer cache.SharedIndexInformer
	typed    any // *cache.TypedInformer[T], once asked for
	started  bool
}

// NewSharedInformerFactory returns a factory whose informers use c, with
// defaultResync as the handlers' default resync period (0: none).
func NewSharedInformerFactory(c *client.Client, defaultResync time.Duration, opts ...Option) *SharedInformerFactory {
	f := &SharedInformerFactory{
		client:        c,
		defaultResync: defaultResync,
		namespace:     metav1.NamespaceAll,
		customResync:  map[reflect.Type]time.Duration{},
		informers:     map[informerKey]*entry{},
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

func keyFor(obj client.Object) informerKey {
	res, _ := client.ResourceFor(obj) // zero for types that are not built in
	return informerKey{typ: reflect.TypeOf(obj), res: res}
}

// InformerFor returns the factory's informer for obj's type, making it
// with newFunc the first time (client-go's InformerFor). The factory's
// transform is applied to it.
func (f *SharedInformerFactory) InformerFor(obj client.Object, newFunc NewInformerFunc) cache.SharedIndexInformer {
	return f.entryFor(keyFor(obj), newFunc).informer
}

func (f *SharedInformerFactory) entryFor(key informerKey, newFunc NewInformerFunc) *entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.informers[key]; ok {
		return e
	}
	resync, ok := f.customResync[key.typ]
	if !ok {
		resync = f.defaultResync
	}
	inf := newFunc(f.client, resync)
	if f.transform != nil {
		_ = inf.SetTransform(f.transform) // a new informer has not started
	}
	e := &entry{informer: inf}
	f.informers[key] = e
	return e
}

// Existing returns the factory's informer of gvr's built-in typed objects
// if one was asked for, else nil; nil too when the factory sees only part
// of the objects (a namespace or list options). A consumer that reads any
// object's metadata (the garbage collector) joins it instead of opening a
// second watch of the same resource.
func (f *SharedInformerFactory) Existing(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.namespace != metav1.NamespaceAll || f.tweak != nil {
		return nil
	}
	for k, e := range f.informers {
		if k.res.GroupVersionResource() == gvr && k.typ != reflect.TypeFor[*unstructured.Unstructured]() {
			return e.informer
		}
	}
	return nil
}

// InformerFor returns the factory's informer of the built-in resource of
// T (see client.For), with a typed Lister.
func InformerFor[T client.Object, L client.ObjectList](f *SharedInformerFactory) *cache.TypedInformer[T] {
	res, err := client.ResourceFor(newObject[T]())
	if err != nil {
		panic(err) // not a built-in type: a programming error; use InformerForResource
	}
	return InformerForResource[T, L](f, res)
}

// InformerForResource returns the factory's informer of res, whose objects
// are T (for example unstructured objects of a custom resource).
func InformerForResource[T client.Object, L client.ObjectList](f *SharedInformerFactory, res client.Resource) *cache.TypedInformer[T] {
	key := informerKey{typ: reflect.TypeFor[T](), res: res}
	e := f.entryFor(key, func(c *client.Client, resync time.Duration) cache.SharedIndexInformer {
		typed := client.NewTyped[T, L](c, res)
		if res.Namespaced {
			typed = typed.Namespace(f.namespace)
		}
		o := f.informerOpts
		o.ResyncPeriod = resync
		o.Indexers = cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
		return cache.NewTypedInformer(typed, f.tweak, o).Informer()
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := e.typed.(*cache.TypedInformer[T]); ok {
		return t
	}
	t := cache.WrapTypedInformer[T](e.informer, res.GroupVersionResource().GroupResource())
	e.typed = t
	return t
}

// Start runs every informer made so far that is not running yet, until
// ctx is done or Shutdown. It may be called again for informers asked for
// later; after Shutdown it does nothing.
func (f *SharedInformerFactory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for _, e := range f.informers {
		if e.started {
			continue
		}
		e.started = true
		ictx, cancel := context.WithCancel(ctx)
		f.cancels = append(f.cancels, cancel)
		inf := e.informer
		f.wg.Go(func() { inf.Run(ictx) })
	}
}

// WaitForCacheSync waits until every started informer has synced or ctx is
// done, and reports for each object type whether its informer(s) synced.
func (f *SharedInformerFactory) WaitForCacheSync(ctx context.Context) map[reflect.Type]bool {
	f.mu.Lock()
	started := map[informerKey]cache.SharedIndexInformer{}
	for k, e := range f.informers {
		if e.started {
			started[k] = e.informer
		}
	}
	f.mu.Unlock()
	res := make(map[reflect.Type]bool, len(started))
	for k, inf := range started {
		synced := cache.WaitForSynced(ctx, inf.Synced())
		if prev, seen := res[k.typ]; seen {
			synced = synced && prev
		}
		res[k.typ] = synced
	}
	return res
}

// Shutdown stops every informer the factory started and waits for their
// goroutines (including handler calls in progress). Start does nothing
// afterwards. It may be called more than once.
func (f *SharedInformerFactory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	cancels := f.cancels
	f.cancels = nil
	f.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
	f.wg.Wait()
}

// newObject returns a new zero object of the pointer type T.
func newObject[T client.Object]() T {
	var zero T
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer {
		return zero
	}
	return reflect.New(typ.Elem()).Interface().(T)
}

// Accessors for common built-in resources.

func (f *SharedInformerFactory) Pods() *cache.TypedInformer[*corev1.Pod] {
	return InformerFor[*corev1.Pod, *corev1.PodList](f)
}

func (f *SharedInformerFactory) Nodes() *cache.TypedInformer[*corev1.Node] {
	return InformerFor[*corev1.Node, *corev1.NodeList](f)
}

func (f *SharedInformerFactory) Namespaces() *cache.TypedInformer[*corev1.Namespace] {
	return InformerFor[*corev1.Namespace, *corev1.NamespaceList](f)
}

func (f *SharedInformerFactory) Services() *cache.TypedInformer[*corev1.Service] {
	return InformerFor[*corev1.Service, *corev1.ServiceList](f)
}

func (f *SharedInformerFactory) Endpoints() *cache.TypedInformer[*corev1.Endpoints] {
	return InformerFor[*corev1.Endpoints, *corev1.EndpointsList](f)
}

func (f *SharedInformerFactory) ConfigMaps() *cache.TypedInformer[*corev1.ConfigMap] {
	return InformerFor[*corev1.ConfigMap, *corev1.ConfigMapList](f)
}

func (f *SharedInformerFactory) Secrets() *cache.TypedInformer[*corev1.Secret] {
	return InformerFor[*corev1.Secret, *corev1.SecretList](f)
}

func (f *SharedInformerFactory) ServiceAccounts() *cache.TypedInformer[*corev1.ServiceAccount] {
	return InformerFor[*corev1.ServiceAccount, *corev1.ServiceAccountList](f)
}

func (f *SharedInformerFactory) PersistentVolumes() *cache.TypedInformer[*corev1.PersistentVolume] {
	return InformerFor[*corev1.PersistentVolume, *corev1.PersistentVolumeList](f)
}

func (f *SharedInformerFactory) PersistentVolumeClaims() *cache.TypedInformer[*corev1.PersistentVolumeClaim] {
	return InformerFor[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](f)
}

func (f *SharedInformerFactory) Deployments() *cache.TypedInformer[*appsv1.Deployment] {
	return InformerFor[*appsv1.Deployment, *appsv1.DeploymentList](f)
}

func (f *SharedInformerFactory) ReplicaSets() *cache.TypedInformer[*appsv1.ReplicaSet] {
	return InformerFor[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](f)
}

func (f *SharedInformerFactory) StatefulSets() *cache.TypedInformer[*appsv1.StatefulSet] {
	return InformerFor[*appsv1.StatefulSet, *appsv1.StatefulSetList](f)
}

func (f *SharedInformerFactory) DaemonSets() *cache.TypedInformer[*appsv1.DaemonSet] {
	return InformerFor[*appsv1.DaemonSet, *appsv1.DaemonSetList](f)
}

func (f *SharedInformerFactory) ControllerRevisions() *cache.TypedInformer[*appsv1.ControllerRevision] {
	return InformerFor[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](f)
}

func (f *SharedInformerFactory) Jobs() *cache.TypedInformer[*batchv1.Job] {
	return InformerFor[*batchv1.Job, *batchv1.JobList](f)
}

func (f *SharedInformerFactory) CronJobs() *cache.TypedInformer[*batchv1.CronJob] {
	return InformerFor[*batchv1.CronJob, *batchv1.CronJobList](f)
}

func (f *SharedInformerFactory) Leases() *cache.TypedInformer[*coordinationv1.Lease] {
	return InformerFor[*coordinationv1.Lease, *coordinationv1.LeaseList](f)
}

func (f *SharedInformerFactory) EndpointSlices() *cache.TypedInformer[*discoveryv1.EndpointSlice] {
	return InformerFor[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](f)
}

func (f *SharedInformerFactory) PodDisruptionBudgets() *cache.TypedInformer[*policyv1.PodDisruptionBudget] {
	return InformerFor[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](f)
}

func (f *SharedInformerFactory) PriorityClasses() *cache.TypedInformer[*schedulingv1.PriorityClass] {
	return InformerFor[*schedulingv1.PriorityClass, *schedulingv1.PriorityClassList](f)
}

func (f *SharedInformerFactory) StorageClasses() *cache.TypedInformer[*storagev1.StorageClass] {
	return InformerFor[*storagev1.StorageClass, *storagev1.StorageClassList](f)
}

// ForResource returns the factory's informer of any resource (a custom
// resource included) with unstructured objects: client-go's
// dynamicinformer ForResource. Informers of unstructured objects are keyed
// by resource, so each resource gets its own list, watch and cache.
func (f *SharedInformerFactory) ForResource(res client.Resource) *cache.TypedInformer[*unstructured.Unstructured] {
	return InformerForResource[*unstructured.Unstructured, *unstructured.UnstructuredList](f, res)
}
