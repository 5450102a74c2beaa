package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/customresource"
	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/storage/cacher"
)

// Custom resources are served from an immutable snapshot (crState) that
// the request router reads with one atomic load. The CRD controller (one
// goroutine) watches CustomResourceDefinitions, maintains their status
// conditions (NamesAccepted, Established, Terminating), deletes the objects
// of deleted CRDs, and builds a new snapshot, discovery documents and
// OpenAPI documents whenever the set of served custom resources changes.

var grCRDs = schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}

// crState is one immutable generation of the served custom resources.
type crState struct {
	endpoints map[schema.GroupVersionResource]*endpoint
	// stores are the storage-version stores (garbage collection, namespace
	// deletion, admission lookups).
	stores map[schema.GroupResource]*registry.Store
	// kinds finds a custom resource endpoint by kind (field managers).
	kinds map[schema.GroupVersionKind]*endpoint
	// discovery documents every served resource, these included: swapped
	// with the endpoints so that discovery never lags what is served.
	discovery *discoveryDocs
}

// crEndpoint is what a custom resource endpoint adds to an endpoint.
type crEndpoint struct {
	res     *customresource.Resource
	version *customresource.Version
	// terminating: the CRD is being deleted, creates are refused.
	terminating bool
}

// openAPISchema is the version's schema as decoded JSON.
func (c *crEndpoint) openAPISchema() map[string]any {
	out := map[string]any{"type": "object"}
	if c.version.Schema == nil {
		out["x-kubernetes-preserve-unknown-fields"] = true
		return out
	}
	data, err := json.Marshal(c.version.Schema)
	if err != nil {
		return out
	}
	_ = json.Unmarshal(data, &out)
	return out
}

// allStores returns the stores of every built-in and custom resource.
func (s *Server) allStores() map[schema.GroupResource]*registry.Store {
	crs := s.crs.Load().stores
	if len(crs) == 0 {
		return s.stores
	}
	out := make(map[schema.GroupResource]*registry.Store, len(s.stores)+len(crs))
	for gr, st := range s.stores {
		out[gr] = st
	}
	for gr, st := range crs {
		if out[gr] == nil {
			out[gr] = st
		}
	}
	return out
}

// allEndpoints returns the built-in endpoints and those of cs.
func (s *Server) allEndpoints(cs *crState) map[schema.GroupVersionResource]*endpoint {
	out := make(map[schema.GroupVersionResource]*endpoint, len(s.endpoints)+len(cs.endpoints))
	for gvr, e := range cs.endpoints {
		out[gvr] = e
	}
	for gvr, e := range s.endpoints { // built-ins win
		out[gvr] = e
	}
	return out
}

// crServing is the storage of one custom resource while its CRD exists: a
// watch cache over /registry/<group>/<plural>/.
type crServing struct {
	uid        types.UID
	signature  string // scope and selectable fields: a change restarts the cache
	cacher     *cacher.Cacher
	cancel     context.CancelFunc
	crdVersion string // servingKey of the CRD the endpoints were built from
	endpoints  map[schema.GroupVersionResource]*endpoint
	store      *registry.Store
}

// crdController keeps the served custom resources in line with the CRDs.
type crdController struct {
	s       *Server
	poke    chan struct{}
	serving map[string]*crServing // by CRD name; only the run goroutine uses it
}

func newCRDController(s *Server) *crdController {
	return &crdController{s: s, poke: make(chan struct{}, 1), serving: map[string]*crServing{}}
}

func (c *crdController) wake() {
	select {
	case c.poke <- struct{}{}:
	default:
	}
}

// run reconciles on every CRD change until ctx ends.
func (c *crdController) run(ctx context.Context) {
	st := c.s.stores[grCRDs]
	if st == nil {
		return
	}
	go c.watchCRDs(ctx, st)
	defer func() {
		for _, sv := range c.serving {
			sv.cancel()
		}
	}()
	c.wake()
	for {
		var retry <-chan time.Time
		select {
		case <-ctx.Done():
			return
		case <-c.poke:
		}
		pending, err := c.reconcile(ctx, st)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.s.cfg.Logger.Warn("custom resources: reconcile failed", "err", err)
			pending = true
		}
		if pending {
			// Objects still being deleted, or a failed write: look again soon.
			retry = c.s.cfg.Clock.After(200 * time.Millisecond)
			select {
			case <-ctx.Done():
				return
			case <-retry:
				c.wake()
			case <-c.poke:
				c.wake()
			}
		}
	}
}

// watchCRDs pokes the controller on every CRD event.
func (c *crdController) watchCRDs(ctx context.Context, st *registry.Store) {
	c.s.pokeOnEvents(ctx, st, func(runtime.Object) { c.wake() })
}

// pokeOnEvents calls poke(nil) each time a watch of every object of st
// starts and poke(object) on each of its events, watching again when a watch ends, until ctx
// ends (the API server's own controllers wake on their inputs this way).
func (s *Server) pokeOnEvents(ctx context.Context, st *registry.Store, poke func(runtime.Object)) {
	for ctx.Err() == nil {
		w, err := st.Watch(ctx, "", registry.ListOptions{ResourceVersion: "0"})
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-s.cfg.Clock.After(100 * time.Millisecond):
			}
			continue
		}
		poke(nil)
		for ev := range w.ResultChan() {
			poke(storage.Unwrap(ev.Object))
		}
		w.Stop()
	}
}

// reconcile brings conditions, deletions and the served snapshot in line
// with the stored CRDs. pending reports work left to look at again.
func (c *crdController) reconcile(ctx context.Context, st *registry.Store) (pending bool, err error) {
	objs, _, err := st.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return false, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(objs))
	for _, o := range objs {
		crds = append(crds, storage.Unwrap(o).(*apiextensionsv1.CustomResourceDefinition).DeepCopy())
	}
	sort.Slice(crds, func(i, j int) bool {
		a, b := crds[i].CreationTimestamp, crds[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return crds[i].Name < crds[j].Name
	})
	now := metav1.NewTime(c.s.cfg.Clock.Now().Truncate(time.Second))
	for i, crd := range crds {
		if crd.DeletionTimestamp != nil {
			continue
		}
		names, accepted, established := customresource.AcceptNames(crd, crds)
		upd := crd.DeepCopy()
		upd.Status.AcceptedNames = names
		customresource.SetCondition(upd, accepted, now)
		customresource.SetCondition(upd, established, now)
		if equalStatus(upd, crd) {
			continue
		}
		if !customresource.IsTrue(crd, apiextensionsv1.Established) && customresource.IsTrue(upd, apiextensionsv1.Established) {
			// Serve before saying Established: a client that saw the
			// condition (kubectl wait --for=condition=Established) must
			// find the resource, as upstream's handler serves an
			// Established CRD at once. A failed status write undoes it
			// below (next is built from the stored CRDs).
			if sv, err := c.serve(ctx, upd); err == nil {
				c.serving[upd.Name] = sv
				c.publish()
			}
		}
		out, err := c.updateStatus(ctx, st, upd)
		if err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				pending = true
				continue
			}
			return true, err
		}
		crds[i] = out
	}

	next := map[string]*crServing{}
	for _, crd := range crds {
		if !customresource.IsTrue(crd, apiextensionsv1.Established) {
			continue
		}
		sv, err := c.serve(ctx, crd)
		if err != nil {
			c.s.cfg.Logger.Warn("custom resources: cannot serve", "crd", crd.Name, "err", err)
			continue
		}
		next[crd.Name] = sv
	}
	changed := len(next) != len(c.serving)
	for name, sv := range c.serving {
		if n, ok := next[name]; !ok || n != sv {
			changed = true
		}
		if n, ok := next[name]; !ok || n.cacher != sv.cacher {
			sv.cancel()
		}
	}
	c.serving = next
	if changed {
		c.publish()
	}

	// Deleted CRDs: delete their objects, then let the CRD go.
	for _, crd := range crds {
		if crd.DeletionTimestamp == nil || !hasString(crd.Finalizers, customresource.CleanupFinalizer) {
			continue
		}
		done, err := c.cleanup(ctx, st, crd, next[crd.Name], now)
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return true, err
		}
		if !done || err != nil {
			pending = true
		}
	}
	return pending, nil
}

func equalStatus(a, b *apiextensionsv1.CustomResourceDefinition) bool {
	x, _ := json.Marshal(a.Status)
	y, _ := json.Marshal(b.Status)
	return string(x) == string(y)
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// updateStatus writes crd's status through the status subresource.
func (c *crdController) updateStatus(ctx context.Context, st *registry.Store, crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	status := c.s.endpoints[schema.GroupVersionResource{Group: grCRDs.Group, Version: "v1", Resource: grCRDs.Resource}].status
	if status == nil {
		status = st
	}
	out, _, err := status.Update(ctx, "", crd.Name, &objInfo{
		pre: &metav1.Preconditions{UID: &crd.UID},
		update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
			cur := old.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
			if cur.ResourceVersion != crd.ResourceVersion {
				return nil, apierrors.NewConflict(grCRDs, crd.Name, fmt.Errorf(registry.OptimisticLockErrorMsg))
			}
			cur.Status = *crd.Status.DeepCopy()
			return cur, nil
		},
	}, nil, nil, registry.UpdateOptions{NoCreate: true})
	if err != nil {
		return nil, err
	}
	return storage.Unwrap(out).(*apiextensionsv1.CustomResourceDefinition).DeepCopy(), nil
}

// cleanup deletes the objects of a deleted CRD and, once none is left,
// removes the cleanup finalizer (which deletes the CRD). It reports whether
// the CRD is done.
func (c *crdController) cleanup(ctx context.Context, st *registry.Store, crd *apiextensionsv1.CustomResourceDefinition, sv *crServing, now metav1.Time) (bool, error) {
	if sv != nil {
		upd := crd.DeepCopy()
		customresource.SetCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
		}, now)
		if !equalStatus(upd, crd) {
			out, err := c.updateStatus(ctx, st, upd)
			if err != nil {
				return false, err
			}
			crd = out
		}
		objs, _, err := sv.store.List(ctx, "", registry.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, o := range objs {
			m, err := meta.Accessor(storage.Unwrap(o))
			if err != nil || m.GetDeletionTimestamp() != nil {
				continue
			}
			if _, err := sv.store.Delete(ctx, m.GetNamespace(), m.GetName(), &metav1.DeleteOptions{}, nil); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		left, _, err := sv.store.List(ctx, "", registry.ListOptions{})
		if err != nil {
			return false, err
		}
		if len(left) > 0 {
			return false, nil
		}
		upd = crd.DeepCopy()
		customresource.SetCondition(upd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
			Reason: "InstanceDeletionCompleted", Message: "removed all instances",
		}, now)
		if !equalStatus(upd, crd) {
			out, err := c.updateStatus(ctx, st, upd)
			if err != nil {
				return false, err
			}
			crd = out
		}
	}
	_, _, err := st.Update(ctx, "", crd.Name, &objInfo{
		pre: &metav1.Preconditions{UID: &crd.UID},
		update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
			cur := old.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
			var keep []string
			for _, f := range cur.Finalizers {
				if f != customresource.CleanupFinalizer {
					keep = append(keep, f)
				}
			}
			cur.Finalizers = keep
			return cur, nil
		},
	}, nil, nil, registry.UpdateOptions{NoCreate: true})
	if err != nil {
		return false, err
	}
	return true, nil
}

// signature is what the watch cache of a CRD's objects depends on.
func signature(crd *apiextensionsv1.CustomResourceDefinition) string {
	var b strings.Builder
	b.WriteString(string(crd.Spec.Scope))
	for _, v := range crd.Spec.Versions {
		for _, f := range v.SelectableFields {
			b.WriteString("|" + f.JSONPath)
		}
	}
	return b.String()
}

// servingKey changes when what is served from a CRD changes: its spec
// (generation), accepted names, or deletion; not on other status writes.
func servingKey(crd *apiextensionsv1.CustomResourceDefinition) string {
	names, _ := json.Marshal(crd.Status.AcceptedNames)
	return fmt.Sprintf("%d|%s|%v", crd.Generation, names, crd.DeletionTimestamp != nil)
}

// serve returns the serving state of an established CRD, reusing the
// current one when the CRD has not changed.
func (c *crdController) serve(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (*crServing, error) {
	cur := c.serving[crd.Name]
	terminating := crd.DeletionTimestamp != nil
	key := servingKey(crd)
	if cur != nil && cur.uid == crd.UID && cur.crdVersion == key {
		return cur, nil
	}
	res, err := customresource.New(crd)
	if err != nil {
		return nil, err
	}
	def := res.Def
	gr := schema.GroupResource{Group: def.Group, Resource: def.Resource}
	sv := &crServing{uid: crd.UID, signature: signature(crd), crdVersion: key}
	prefix := def.StoragePrefix()
	base := &registry.Store{
		Resource: gr, Kind: schema.GroupKind{Group: def.Group, Kind: def.Kind}, Namespaced: def.Namespaced,
		Prefix: prefix, NewFunc: def.New, NewList: def.NewList, Strategy: def.Strategy, Env: c.s.env,
	}
	if cur != nil && cur.uid == crd.UID && cur.signature == sv.signature {
		sv.cacher, sv.cancel = cur.cacher, cur.cancel
	} else {
		raw := storage.NewStore(storage.StoreConfig{
			KV: c.s.cfg.KV, Codec: storage.JSONCodec{Typer: c.s.scheme}, NewFunc: def.New, Prefix: prefix,
		})
		sv.cacher = cacher.New(cacher.Config{
			Storage: raw, Prefix: prefix, NewFunc: def.New, KeyFunc: base.KeyOf, GetAttrs: base.Attrs,
			Clock: c.s.cfg.Clock, Logger: c.s.cfg.Logger,
		})
		cctx, cancel := context.WithCancel(ctx)
		sv.cancel = cancel
		go sv.cacher.Run(cctx)
	}
	base.Storage = sv.cacher
	sv.store = base
	sv.endpoints = map[schema.GroupVersionResource]*endpoint{}
	verbs := map[string]bool{}
	for _, v := range registry.AllVerbs {
		verbs[v] = true
	}
	for _, ver := range res.Versions {
		vdef := *def
		vdef.Scale = ver.Scale
		vdef.Strategy = ver.Strategy
		st := *base
		st.Strategy = ver.Strategy
		subs := map[string]*registry.Store{}
		var status *registry.Store
		if ver.Status != nil {
			ss := *base
			ss.Strategy = ver.Status
			status = &ss
			subs["status"] = status
			vdef.ValidateStatus = ver.Status.ValidateUpdate
		}
		gvr := schema.GroupVersionResource{Group: def.Group, Version: ver.Name, Resource: def.Resource}
		vd := ver.VersionDef
		sv.endpoints[gvr] = &endpoint{
			def: &vdef, gvr: gvr,
			gvk:     gvr.GroupVersion().WithKind(def.Kind),
			listGVK: gvr.GroupVersion().WithKind(def.ListKind),
			store:   &st, status: status, subs: subs, version: &vd,
			newObj: def.New, newList: def.NewList, verbs: verbs, qualified: gr,
			fieldLabels: ver.FieldLabels,
			cr:          &crEndpoint{res: res, version: ver, terminating: terminating},
		}
	}
	return sv, nil
}

// publish swaps in a snapshot of the current serving state and rebuilds
// discovery and OpenAPI.
func (c *crdController) publish() {
	c.s.publishMu.Lock()
	defer c.s.publishMu.Unlock()
	cs := &crState{endpoints: map[schema.GroupVersionResource]*endpoint{}, stores: map[schema.GroupResource]*registry.Store{},
		kinds: map[schema.GroupVersionKind]*endpoint{}}
	for _, sv := range c.serving {
		for gvr, e := range sv.endpoints {
			if c.s.endpoints[gvr] != nil {
				continue // a built-in resource of that name wins
			}
			cs.endpoints[gvr] = e
			if c.s.kinds[e.gvk] == nil {
				cs.kinds[e.gvk] = e
			}
		}
		if c.s.stores[sv.store.Resource] == nil {
			cs.stores[sv.store.Resource] = sv.store
		}
	}
	all := c.s.allEndpoints(cs)
	if err := c.s.openapi.Update(c.s.openAPIResources(all)); err != nil {
		c.s.cfg.Logger.Warn("custom resources: OpenAPI not updated", "err", err)
	}
	cs.discovery = c.s.buildDiscovery(all)
	c.s.crs.Store(cs)
	c.s.apiServices.wake()
}

// CustomResourceSchema returns the compiled structural schema of a served
// custom resource version (its kube-openapi form is Schema.Spec), for
// server-side apply and anything else that needs a CR's types. ok is false
// for kinds that are not served custom resources or have no schema.
func (s *Server) CustomResourceSchema(gvk schema.GroupVersionKind) (sch *structural.Schema, ok bool) {
	e := s.crs.Load().kinds[gvk]
	if e == nil || e.cr == nil || e.cr.version.Validator == nil {
		return nil, false
	}
	return e.cr.version.Validator.Structural(), true
}

// crMediaTypes limits a custom resource request to what upstream serves
// custom resources in: JSON and YAML (protobuf only for the meta.k8s.io
// forms, Table and PartialObjectMetadata). Protobuf clauses for the object
// itself are dropped from Accept (406 if nothing is left); a protobuf body
// is 415.
func crMediaTypes(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == mediaProtobuf {
			return &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
				Message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
			}}
		}
	}
	accept := r.Header.Get("Accept")
	if strings.TrimSpace(accept) == "" {
		return nil
	}
	var keep []string
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err == nil && mt == mediaProtobuf && params["as"] == "" {
			continue
		}
		keep = append(keep, clause)
	}
	if len(keep) == 0 {
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
			Message: "only the following media types are accepted: application/json, application/yaml",
		}}
	}
	r.Header.Set("Accept", strings.Join(keep, ","))
	return nil
}
