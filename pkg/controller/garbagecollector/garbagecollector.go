package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/discovery"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/metadata"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// DefaultWorkers is upstream's --concurrent-gc-syncs default.
const DefaultWorkers = 20

// DefaultDiscoveryPeriod is how often upstream's garbage collector redoes
// discovery to follow resources that appear and disappear.
const DefaultDiscoveryPeriod = 30 * time.Second

// DefaultIgnoredResources are not followed (upstream's defaults: events
// have no owners worth collecting and are many).
var defaultIgnoredResources = []schema.GroupResource{{Group: "", Resource: "events"}, {Group: "events.k8s.io", Resource: "events"}}

// Config configures the garbage collector.
type Config struct {
	Client *client.Client
	// Informers is the controller manager's shared factory (may be nil): a
	// resource another controller already has a typed informer of (pods,
	// ReplicaSets, ...) is followed through that informer, as upstream's
	// collector uses the shared informers, instead of a second watch and
	// cache; every other resource through the collector's own metadata
	// informers.
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is the number of attemptToDelete and of attemptToOrphan
	// workers (--concurrent-gc-syncs).
	Workers int
	Logger  *slog.Logger
	// DiscoveryPeriod: how often resources are rediscovered (default 30s).
	DiscoveryPeriod time.Duration
	// IgnoredResources are not followed (default: events).
	IgnoredResources []schema.GroupResource
	// MetricsProvider for the work queues (may be nil).
	MetricsProvider workqueue.MetricsProvider
}

// Controller is the garbage collector.
type Controller struct {
	cfg      Config
	log      *slog.Logger
	disc     *discovery.Client
	meta     *metadata.Client
	factory  *metadata.SharedInformerFactory
	graph    *graph
	changes  *workqueue.Typed[*event]
	toDelete workqueue.TypedRateLimitingInterface[*node]
	toOrphan workqueue.TypedRateLimitingInterface[*node]
	absent   *absentCache
	// orphaned: the owners this collector orphaned (their orphan finalizer
	// removed) and their resourceVersion then, remembered so that a
	// dependent that existed by then but is observed only later is
	// orphaned too rather than collected.
	orphaned *orphanedOwners

	// workerLock: workers hold it shared; a resync of the monitors holds
	// it exclusively.
	workerLock sync.RWMutex

	mu       sync.Mutex
	monitors map[schema.GroupVersionResource]*monitor
	mapping  map[schema.GroupVersionKind]mapped
	byGK     map[schema.GroupKind]mapped
}

type monitor struct {
	informer cache.SharedIndexInformer
	reg      cache.ResourceEventHandlerRegistration
	// shared: the informer is the manager's (its handler is removed, the
	// informer left running, when the resource stops being followed).
	shared bool
}

type mapped struct {
	res client.Resource
}

// New returns a garbage collector for cfg.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("garbagecollector: no client")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.DiscoveryPeriod <= 0 {
		cfg.DiscoveryPeriod = DefaultDiscoveryPeriod
	}
	if cfg.IgnoredResources == nil {
		cfg.IgnoredResources = defaultIgnoredResources
	}
	c := &Controller{
		cfg:      cfg,
		log:      cfg.Logger.With("controller", "garbagecollector"),
		disc:     discovery.New(cfg.Client),
		graph:    newGraph(),
		changes:  workqueue.NewTyped[*event](),
		absent:   newAbsentCache(500),
		orphaned: newOrphanedOwners(500),
		monitors: map[schema.GroupVersionResource]*monitor{},
	}
	c.factory = metadata.NewSharedInformerFactory(cfg.Client, 0,
		metadata.WithInformerOptions(cache.SharedIndexInformerOptions{Clock: cfg.Clock}), metadata.WithTransform(graphFields))
	c.meta = c.factory.Client()
	rl := func(name string) workqueue.TypedRateLimitingInterface[*node] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[*node](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[*node]{Name: name, Clock: cfg.Clock, MetricsProvider: cfg.MetricsProvider})
	}
	c.toDelete = rl("garbage_collector_attempt_to_delete")
	c.toOrphan = rl("garbage_collector_attempt_to_orphan")
	return c, nil
}

// graphFields is the transform of the collector's informers: it keeps of
// each object only what the graph reads (identity, owner references,
// deletion timestamp, finalizers) and its resourceVersion. The collector
// caches the metadata of every object in the cluster, so labels,
// annotations and managedFields it never reads would be most of its
// memory; every decision that needs more GETs the object.
func graphFields(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil // a DeletedFinalStateUnknown tombstone
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		DeletionTimestamp: m.DeletionTimestamp, OwnerReferences: m.OwnerReferences, Finalizers: m.Finalizers,
	}}, nil
}

// Run runs the garbage collector until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	// Deferred in reverse: queues shut down, then workers are waited for,
	// then the informers.
	defer c.factory.Shutdown()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.changes.ShutDown()
	defer c.toOrphan.ShutDown()
	defer c.toDelete.ShutDown()
	wg.Go(func() {
		for c.processGraphChange() {
		}
	})
	// Follow what discovery finds, retrying until it answers.
	for {
		if err := c.syncMonitors(ctx); err == nil {
			break
		} else {
			c.log.Error("garbage collector: discovery failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.cfg.Clock.After(time.Second):
		}
	}
	if !c.waitSynced(ctx) {
		return nil
	}
	c.log.Info("garbage collector: all resource monitors have synced, proceeding to collect garbage")
	for range c.cfg.Workers {
		wg.Go(func() {
			for c.attemptToDeleteWorker(ctx) {
			}
		})
		wg.Go(func() {
			for c.attemptToOrphanWorker(ctx) {
			}
		})
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.cfg.Clock.After(c.cfg.DiscoveryPeriod):
		}
		c.workerLock.Lock()
		if err := c.syncMonitors(ctx); err != nil {
			c.log.Error("garbage collector: resyncing monitors", "err", err)
		}
		c.waitSynced(ctx)
		c.workerLock.Unlock()
	}
}

// HasSynced reports whether every monitor has synced (tests).
func (c *Controller) HasSynced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.monitors) == 0 {
		return false
	}
	for _, m := range c.monitors {
		select {
		case <-m.reg.Synced():
		default:
			return false
		}
	}
	return true
}

// Monitored reports whether the resource is followed (tests).
func (c *Controller) Monitored(gvr schema.GroupVersionResource) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.monitors[gvr]
	return ok
}

func (c *Controller) waitSynced(ctx context.Context) bool {
	c.mu.Lock()
	var synced []<-chan struct{}
	for _, m := range c.monitors {
		synced = append(synced, m.reg.Synced())
	}
	c.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return cache.WaitForSynced(wctx, synced...)
}

// syncMonitors rediscovers the deletable resources and starts and stops
// monitors to match (upstream's resyncMonitors).
func (c *Controller) syncMonitors(ctx context.Context) error {
	c.disc.Invalidate()
	preferred, err := c.disc.ServerPreferredResources(ctx)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return err
	}
	if err != nil {
		c.log.Warn("garbage collector: failed to discover some groups", "err", err)
	}
	if err := c.refreshMapping(ctx); err != nil {
		return err
	}
	deletable, err := discovery.GroupVersionResources(discovery.FilteredBy(discovery.SupportsAllVerbs("delete", "list", "watch"), preferred))
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	want := map[schema.GroupVersionResource]metav1.APIResource{}
	for gvr, r := range deletable {
		if slices.Contains(c.cfg.IgnoredResources, gvr.GroupResource()) {
			continue
		}
		want[gvr] = r
	}
	for gvr, m := range c.monitors {
		if _, ok := want[gvr]; !ok {
			if m.shared {
				_ = m.informer.RemoveEventHandler(m.reg)
			} else {
				c.factory.Stop(gvr)
			}
			delete(c.monitors, gvr)
			c.log.Info("garbage collector: stopped monitoring", "resource", gvr)
		}
	}
	for gvr, r := range want {
		if _, ok := c.monitors[gvr]; ok {
			continue
		}
		gvk := gvr.GroupVersion().WithKind(r.Kind)
		m := &monitor{}
		if c.cfg.Informers != nil {
			if inf := c.cfg.Informers.Existing(gvr); inf != nil {
				m.informer, m.shared = inf, true
			}
		}
		if m.informer == nil {
			m.informer = c.factory.ForResource(discovery.ResourceOf(gvr, r)).Informer()
		}
		reg, err := m.informer.AddEventHandler(c.handler(gvk))
		if err != nil {
			return err
		}
		m.reg = reg
		c.monitors[gvr] = m
	}
	c.factory.Start(ctx)
	return nil
}

func (c *Controller) handler(gvk schema.GroupVersionKind) cache.ResourceEventHandler {
	meta := func(obj any) *metav1.PartialObjectMetadata {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		switch o := obj.(type) {
		case *metav1.PartialObjectMetadata:
			return o // the collector's own informers: already trimmed
		case metav1.Object:
			// A shared typed informer's object: what the graph reads.
			// Owner references and finalizers are the cached object's own
			// slices, not copies: cached objects are read-only, and the
			// graph never writes to them (patches build new slices).
			return &metav1.PartialObjectMetadata{
				TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind},
				ObjectMeta: metav1.ObjectMeta{
					Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion(),
					DeletionTimestamp: o.GetDeletionTimestamp(), OwnerReferences: o.GetOwnerReferences(),
					Finalizers: o.GetFinalizers(),
				},
			}
		}
		return nil
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if m := meta(obj); m != nil {
				c.changes.Add(&event{typ: addEvent, gvk: gvk, obj: m})
			}
		},
		UpdateFunc: func(old, cur any) {
			if m := meta(cur); m != nil {
				c.changes.Add(&event{typ: updateEvent, gvk: gvk, obj: m, old: meta(old)})
			}
		},
		DeleteFunc: func(obj any) {
			if m := meta(obj); m != nil {
				c.changes.Add(&event{typ: deleteEvent, gvk: gvk, obj: m})
			}
		},
	}
}

func (c *Controller) processGraphChange() bool {
	ev, quit := c.changes.Get()
	if quit {
		return false
	}
	defer c.changes.Done(ev)
	c.graph.process(ev, sinks{
		attemptToDelete: c.toDelete.Add,
		attemptToOrphan: c.toOrphan.Add,
		absent:          c.absent.add,
	})
	return true
}

// refreshMapping rebuilds kind → resource from every served version.
func (c *Controller) refreshMapping(ctx context.Context) error {
	_, lists, err := c.disc.ServerGroupsAndResources(ctx)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return err
	}
	preferred, _ := c.disc.ServerPreferredResources(ctx)
	mapping := map[schema.GroupVersionKind]mapped{}
	byGK := map[schema.GroupKind]mapped{}
	add := func(lists []*metav1.APIResourceList, into func(gvk schema.GroupVersionKind, m mapped)) {
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil {
				continue
			}
			for _, r := range l.APIResources {
				if r.Kind == "" || strings.Contains(r.Name, "/") {
					continue
				}
				into(gv.WithKind(r.Kind), mapped{res: client.Resource{Group: gv.Group, Version: gv.Version, Resource: r.Name, Namespaced: r.Namespaced}})
			}
		}
	}
	add(lists, func(gvk schema.GroupVersionKind, m mapped) {
		if _, ok := mapping[gvk]; !ok {
			mapping[gvk] = m
		}
	})
	add(preferred, func(gvk schema.GroupVersionKind, m mapped) {
		if _, ok := byGK[gvk.GroupKind()]; !ok {
			byGK[gvk.GroupKind()] = m
		}
	})
	c.mu.Lock()
	c.mapping, c.byGK = mapping, byGK
	c.mu.Unlock()
	return nil
}

// resourceFor maps an apiVersion and kind to its resource; an unknown kind
// makes discovery run again (at most once a second).
func (c *Controller) resourceFor(ctx context.Context, apiVersion, kind string) (client.Resource, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	lookup := func() (client.Resource, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if m, ok := c.mapping[gvk]; ok {
			return m.res, true
		}
		if m, ok := c.byGK[gvk.GroupKind()]; ok {
			return m.res, true
		}
		return client.Resource{}, false
	}
	if r, ok := lookup(); ok {
		return r, nil
	}
	c.disc.Invalidate()
	if err := c.refreshMapping(ctx); err != nil {
		return client.Resource{}, err
	}
	if r, ok := lookup(); ok {
		return r, nil
	}
	return client.Resource{}, fmt.Errorf("no matches for kind %q in version %q", kind, gvk.GroupVersion())
}

// errVirtualDelete: the item was found absent and a virtual delete event
// queued; the item is done with.
var errVirtualDelete = errors.New("enqueued virtual delete event")

// errNamespacedOwnerOfClusterScoped: a cluster-scoped object refers to a
// namespaced owner; retrying cannot help.
var errNamespacedOwnerOfClusterScoped = errors.New("cluster-scoped object cannot refer to namespace-scoped owner")

func (c *Controller) attemptToDeleteWorker(ctx context.Context) bool {
	n, quit := c.toDelete.Get()
	if quit {
		return false
	}
	defer c.toDelete.Done(n)
	c.workerLock.RLock()
	defer c.workerLock.RUnlock()
	err := c.attemptToDeleteItem(ctx, n)
	switch {
	case errors.Is(err, errVirtualDelete), errors.Is(err, errNamespacedOwnerOfClusterScoped):
		c.toDelete.Forget(n)
	case err != nil:
		if ctx.Err() == nil {
			c.log.Info("garbage collector: error syncing item", "item", n.identity.String(), "err", err)
		}
		c.toDelete.AddRateLimited(n)
	default:
		st := c.graph.state(n)
		if st.present && st.virtual {
			// Not observed yet: look again later, so a virtual node for an
			// object that came and went cannot stay in the graph.
			c.toDelete.AddRateLimited(n)
		} else {
			c.toDelete.Forget(n)
		}
	}
	return true
}

func (c *Controller) attemptToOrphanWorker(ctx context.Context) bool {
	n, quit := c.toOrphan.Get()
	if quit {
		return false
	}
	defer c.toOrphan.Done(n)
	c.workerLock.RLock()
	defer c.workerLock.RUnlock()
	if err := c.orphan(ctx, n); err != nil {
		if ctx.Err() == nil {
			c.log.Info("garbage collector: error orphaning dependents", "owner", n.identity.String(), "err", err)
		}
		c.toOrphan.AddRateLimited(n)
		return true
	}
	c.toOrphan.Forget(n)
	return true
}

// virtualDelete tells the graph that id was confirmed absent.
func (c *Controller) virtualDelete(id objectReference) {
	gv, _ := schema.ParseGroupVersion(id.APIVersion)
	c.changes.Add(&event{typ: deleteEvent, virtual: true, gvk: gv.WithKind(id.Kind), obj: &metav1.PartialObjectMetadata{
		ObjectMeta: metav1.ObjectMeta{Name: id.Name, Namespace: id.Namespace, UID: id.UID},
	}})
}

func (c *Controller) resourceClient(ctx context.Context, id objectReference) (*metadata.ResourceClient, error) {
	res, err := c.resourceFor(ctx, id.APIVersion, id.Kind)
	if err != nil {
		return nil, err
	}
	ns := ""
	if res.Namespaced {
		ns = id.Namespace
	}
	return c.meta.Resource(res).Namespace(ns), nil
}

func (c *Controller) getObject(ctx context.Context, id objectReference) (*metav1.PartialObjectMetadata, error) {
	res, err := c.resourceFor(ctx, id.APIVersion, id.Kind)
	if err != nil {
		return nil, err
	}
	if res.Namespaced && id.Namespace == "" {
		// A namespaced kind without a namespace: only a cluster-scoped
		// dependent names its owner so; it cannot be resolved (never
		// "absent", which would collect the dependent).
		return nil, errNamespacedOwnerOfClusterScoped
	}
	return c.meta.Resource(res).Namespace(id.Namespace).Get(ctx, id.Name, metav1.GetOptions{})
}

// attemptToDeleteItem decides about one object (upstream's function of
// the same name).
func (c *Controller) attemptToDeleteItem(ctx context.Context, n *node) error {
	st := c.graph.state(n)
	c.log.Debug("garbage collector: processing item", "item", n.identity.String(), "present", st.present, "virtual", st.virtual,
		"beingDeleted", st.beingDeleted, "deletingDependents", st.deletingDependents, "dependents", len(st.dependents))
	if !st.present {
		return nil
	}
	if st.beingDeleted && !st.deletingDependents {
		return nil // its deletion is under way; nothing to decide
	}
	latest, err := c.getObject(ctx, n.identity)
	switch {
	case apierrors.IsNotFound(err):
		c.virtualDelete(n.identity)
		return errVirtualDelete
	case err != nil:
		return err
	}
	if latest.UID != n.identity.UID {
		c.virtualDelete(n.identity)
		return errVirtualDelete
	}
	if st.deletingDependents {
		return c.processDeletingDependents(ctx, n)
	}
	refs := latest.OwnerReferences
	if len(refs) == 0 {
		return nil
	}
	solid, dangling, waiting, err := c.classifyReferences(ctx, n, refs)
	if err != nil {
		return err
	}
	// A reference to an owner deleted with the Orphan policy, from a
	// dependent unchanged since before the orphaning finished: it existed
	// then but was observed after (events of different resources come in
	// no particular order). The owner's deletion asked to keep it: remove
	// the reference as the orphaning would have, never collect it. (A
	// dependent written later with a reference to the deleted owner is
	// collected, as upstream.)
	var orphanedRefs []metav1.OwnerReference
	dangling = slices.DeleteFunc(dangling, func(r metav1.OwnerReference) bool {
		if c.orphaned.existedBefore(r.UID, latest.ResourceVersion) {
			orphanedRefs = append(orphanedRefs, r)
			return true
		}
		return false
	})
	if len(orphanedRefs) > 0 {
		c.log.Debug("garbage collector: orphaning a dependent observed after its owner's orphaning", "item", n.identity.String())
		if err := c.patchOwnerRefs(ctx, n.identity, func(refs []metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
			out := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool {
				return slices.ContainsFunc(orphanedRefs, func(o metav1.OwnerReference) bool { return o.UID == r.UID })
			})
			return out, len(out) != len(refs)
		}); err != nil {
			return err
		}
		if len(solid)+len(dangling)+len(waiting) == 0 {
			return nil
		}
	}
	c.log.Debug("garbage collector: classified owner references", "item", n.identity.String(), "solid", len(solid), "dangling", len(dangling), "waiting", len(waiting))
	switch {
	case len(solid) != 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		// Remove the references to owners that are gone or waiting for
		// this dependent; the solid owner keeps it.
		remove := map[types.UID]bool{}
		for _, r := range append(dangling, waiting...) {
			remove[r.UID] = true
		}
		return c.patchOwnerRefs(ctx, n.identity, func(refs []metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
			out := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return remove[r.UID] })
			return out, len(out) != len(refs)
		})
	case len(waiting) != 0 && len(st.dependents) != 0:
		// An owner waits for this object, which has dependents of its own:
		// delete it in the foreground too, unblocking dependents that
		// themselves wait for their dependents (a cycle would deadlock).
		for _, dep := range st.dependents {
			if c.graph.state(dep).deletingDependents {
				if err := c.patchOwnerRefs(ctx, dep.identity, func(refs []metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
					changed := false
					out := slices.Clone(refs)
					for i := range out {
						if out[i].UID == n.identity.UID && out[i].BlockOwnerDeletion != nil && *out[i].BlockOwnerDeletion {
							f := false
							out[i].BlockOwnerDeletion = &f
							changed = true
						}
					}
					return out, changed
				}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
		}
		return c.deleteObject(ctx, n.identity, metav1.DeletePropagationForeground)
	default:
		// No solid owner: collect it, with the policy its own finalizers
		// ask for.
		policy := metav1.DeletePropagationBackground
		switch {
		case hasFinalizer(latest, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case hasFinalizer(latest, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return c.deleteObject(ctx, n.identity, policy)
	}
}

// processDeletingDependents: an owner deleted in the foreground loses its
// finalizer once no blocking dependent is left; until then its blocking
// dependents are (again) tried.
func (c *Controller) processDeletingDependents(ctx context.Context, n *node) error {
	blocking := c.graph.blockingDependents(n)
	if len(blocking) == 0 {
		return c.removeFinalizer(ctx, n.identity, metav1.FinalizerDeleteDependents)
	}
	for _, dep := range blocking {
		if !c.graph.state(dep).deletingDependents {
			c.toDelete.Add(dep)
		}
	}
	return nil
}

// classifyReferences sorts owner references into solid (the owner exists
// and is not waiting for its dependents), dangling (confirmed absent) and
// waiting (being deleted with foregroundDeletion).
func (c *Controller) classifyReferences(ctx context.Context, n *node, refs []metav1.OwnerReference) (solid, dangling, waiting []metav1.OwnerReference, err error) {
	for _, ref := range refs {
		isDangling, owner, err := c.isDangling(ctx, ref, n)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case isDangling:
			dangling = append(dangling, ref)
		case owner.DeletionTimestamp != nil && hasFinalizer(owner, metav1.FinalizerDeleteDependents):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	return solid, dangling, waiting, nil
}

// isDangling reads the owner live (or remembers it absent).
func (c *Controller) isDangling(ctx context.Context, ref metav1.OwnerReference, n *node) (bool, *metav1.PartialObjectMetadata, error) {
	key := objectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}
	if c.absent.has(key) {
		return true, nil, nil
	}
	key.Namespace = n.identity.Namespace
	if c.absent.has(key) {
		return true, nil, nil
	}
	res, err := c.resourceFor(ctx, ref.APIVersion, ref.Kind)
	if err != nil {
		return false, nil, err
	}
	if !res.Namespaced {
		key.Namespace = ""
	}
	if n.identity.Namespace == "" && res.Namespaced {
		c.reportInvalidNamespace(n.identity, ref)
		return false, nil, errNamespacedOwnerOfClusterScoped
	}
	ns := ""
	if res.Namespaced {
		ns = n.identity.Namespace
	}
	owner, err := c.meta.Resource(res).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.absent.add(key)
		return true, nil, nil
	case err != nil:
		return false, nil, err
	}
	if owner.UID != ref.UID {
		c.absent.add(key)
		return true, nil, nil
	}
	return false, owner, nil
}

func (c *Controller) reportInvalidNamespace(dep objectReference, ref metav1.OwnerReference) {
	if c.cfg.Recorder == nil {
		return
	}
	gv, _ := schema.ParseGroupVersion(dep.APIVersion)
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: dep.Name, Namespace: dep.Namespace, UID: dep.UID}}
	obj.SetGroupVersionKind(gv.WithKind(dep.Kind))
	c.cfg.Recorder.Eventf(obj, corev1.EventTypeWarning, "OwnerRefInvalidNamespace",
		"ownerRef %s does not exist in namespace %q", mustJSON(ref), dep.Namespace)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (c *Controller) deleteObject(ctx context.Context, id objectReference, policy metav1.DeletionPropagation) error {
	rc, err := c.resourceClient(ctx, id)
	if err != nil {
		return err
	}
	uid := id.UID
	c.log.Debug("garbage collector: deleting", "object", id.String(), "propagationPolicy", policy)
	err = rc.Delete(ctx, id.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone, or replaced by another object of the same name: the graph
		// learns it from the informers.
		return nil
	}
	return err
}

// patchMeta applies a merge patch computed from the object's live
// metadata, with its resourceVersion as precondition; conflicts are
// retried a few times.
func (c *Controller) patchMeta(ctx context.Context, id objectReference, compute func(m *metav1.PartialObjectMetadata) (map[string]any, bool)) error {
	rc, err := c.resourceClient(ctx, id)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		m, err := rc.Get(ctx, id.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if m.UID != id.UID {
			return apierrors.NewNotFound(schema.GroupResource{}, id.Name)
		}
		fields, changed := compute(m)
		if !changed {
			return nil
		}
		fields["resourceVersion"] = m.ResourceVersion
		fields["uid"] = string(m.UID)
		body, _ := json.Marshal(map[string]any{"metadata": fields})
		_, err = rc.Patch(ctx, id.Name, types.MergePatchType, body, metav1.PatchOptions{})
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		return err
	}
}

func (c *Controller) patchOwnerRefs(ctx context.Context, id objectReference, fn func([]metav1.OwnerReference) ([]metav1.OwnerReference, bool)) error {
	return c.patchMeta(ctx, id, func(m *metav1.PartialObjectMetadata) (map[string]any, bool) {
		refs, changed := fn(m.OwnerReferences)
		if !changed {
			return nil, false
		}
		if len(refs) == 0 {
			return map[string]any{"ownerReferences": nil}, true
		}
		return map[string]any{"ownerReferences": refs}, true
	})
}

func (c *Controller) removeFinalizer(ctx context.Context, id objectReference, finalizer string) error {
	err := c.patchMeta(ctx, id, func(m *metav1.PartialObjectMetadata) (map[string]any, bool) {
		if !hasFinalizer(m, finalizer) {
			return nil, false
		}
		out := slices.DeleteFunc(slices.Clone(m.Finalizers), func(f string) bool { return f == finalizer })
		if len(out) == 0 {
			return map[string]any{"finalizers": nil}, true
		}
		return map[string]any{"finalizers": out}, true
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// orphan removes the owner's references from its dependents, then the
// orphan finalizer from the owner.
func (c *Controller) orphan(ctx context.Context, owner *node) error {
	st := c.graph.state(owner)
	var errs []error
	for _, dep := range st.dependents {
		err := c.patchOwnerRefs(ctx, dep.identity, func(refs []metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
			out := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return r.UID == owner.identity.UID })
			return out, len(out) != len(refs)
		})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("orphaning %s: %w", dep.identity, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// Dependents the graph does not hold yet, unchanged since the owner's
	// resourceVersion now, are orphaned when they show up
	// (attemptToDeleteItem).
	latest, err := c.getObject(ctx, owner.identity)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if latest.UID != owner.identity.UID {
		return nil
	}
	c.orphaned.add(owner.identity.UID, latest.ResourceVersion)
	return c.removeFinalizer(ctx, owner.identity, metav1.FinalizerOrphanDependents)
}

// orphanedOwners remembers orphaned owners' UIDs with their
// resourceVersion at the orphaning (bounded: cleared when full, as
// absentCache). It compares resourceVersions as numbers: skiff's storage
// revisions are one counter over every resource.
type orphanedOwners struct {
	mu  sync.Mutex
	max int
	m   map[types.UID]uint64
}

func newOrphanedOwners(max int) *orphanedOwners {
	return &orphanedOwners{max: max, m: map[types.UID]uint64{}}
}

func (o *orphanedOwners) add(uid types.UID, rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.m) >= o.max {
		clear(o.m)
	}
	o.m[uid] = n
}

// existedBefore reports whether uid is an orphaned owner and a dependent
// at resourceVersion rv was last written before its orphaning.
func (o *orphanedOwners) existedBefore(uid types.UID, rv string) bool {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	at, ok := o.m[uid]
	return ok && n < at
}

// absentCache remembers owners confirmed absent (bounded).
type absentCache struct {
	mu  sync.Mutex
	max int
	m   map[objectReference]struct{}
}

func newAbsentCache(max int) *absentCache {
	return &absentCache{max: max, m: map[objectReference]struct{}{}}
}

func (a *absentCache) add(r objectReference) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.m) >= a.max {
		clear(a.m)
	}
	a.m[r] = struct{}{}
}

func (a *absentCache) has(r objectReference) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.m[r]
	return ok
}
