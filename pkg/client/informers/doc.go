// Package informers is skiff's counterpart of client-go's informers
// package: a SharedInformerFactory that hands out one shared informer per
// resource, so that every controller in a process shares one list, one
// watch and one cache per resource.
//
//	f := informers.NewSharedInformerFactory(c, 10*time.Minute)
//	pods := f.Pods()                                                // or:
//	rs := informers.InformerFor[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](f)
//	pods.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{...})
//	f.Start(ctx)            // starts the informers asked for so far
//	f.WaitForCacheSync(ctx) // map[reflect.Type]bool
//	p, err := pods.Lister().Namespace("default").Get("web")
//	...
//	f.Shutdown()            // stops them and waits
//
// ForResource(res) is the dynamic informer of any resource, custom
// resources included, with *unstructured.Unstructured objects (client-go's
// dynamicinformer).
//
// Informers are keyed by the Go type of their objects and, for types
// shared by several resources (unstructured objects), by resource. Options
// (WithNamespace, WithTweakListOptions, WithTransform,
// WithCustomResyncConfig, WithInformerOptions) apply to every informer the
// factory makes. Start may be called again after asking for more
// informers: it only starts the new ones. The package has no package-level
// mutable state; clocks and randomness come in through WithInformerOptions.
//
// Cached objects are read-only. Every object an informer hands out (to
// listers, indexers and event handlers) is the one in its cache, shared
// by every controller of the process: a consumer that wants to change it
// DeepCopies it first, as with client-go. A transform may rely on this:
// the controller manager's (pkg/client/intern) makes pods of one template
// share their equal parts, so a write through one cached pod would change
// many (pkg/controllermanager's TestControllersLeaveCachedPodsUnchanged
// checks that no controller writes).
package informers
