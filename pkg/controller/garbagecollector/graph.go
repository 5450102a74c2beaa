package garbagecollector

import (
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// objectReference identifies an object: its owner-reference coordinates
// plus its namespace.
type objectReference struct {
	APIVersion, Kind, Name string
	UID                    types.UID
	Namespace              string
}

func (r objectReference) String() string {
	return fmt.Sprintf("[%s/%s, namespace: %s, name: %s, uid: %s]", r.APIVersion, r.Kind, r.Namespace, r.Name, r.UID)
}

func (r objectReference) groupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

// node is one object of the graph. Its fields are guarded by the graph's
// lock, except identity, which never changes once the node is in the map
// (a virtual node replaced by an observation is a new node).
type node struct {
	identity objectReference
	// owners as the object last declared them.
	owners []metav1.OwnerReference
	// dependents: nodes whose owners include this node's UID (nil until
	// the first: most nodes are pods, which own nothing).
	dependents map[*node]struct{}
	// virtual: known only as some object's owner, not observed.
	virtual bool
	// beingDeleted: the object has a deletionTimestamp.
	beingDeleted bool
	// deletingDependents: being deleted with the foregroundDeletion
	// finalizer.
	deletingDependents bool
}

// graph is the ownership graph, safe for concurrent use.
type graph struct {
	mu    sync.RWMutex
	nodes map[types.UID]*node
}

func newGraph() *graph { return &graph{nodes: map[types.UID]*node{}} }

func (g *graph) get(uid types.UID) (*node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	return n, ok
}

// nodeState is a consistent copy of a node's mutable fields.
type nodeState struct {
	owners             []metav1.OwnerReference
	dependents         []*node
	virtual            bool
	beingDeleted       bool
	deletingDependents bool
	present            bool // still the graph's node for its UID
}

func (g *graph) state(n *node) nodeState {
	g.mu.RLock()
	defer g.mu.RUnlock()
	s := nodeState{owners: n.owners, virtual: n.virtual, beingDeleted: n.beingDeleted, deletingDependents: n.deletingDependents}
	for d := range n.dependents {
		s.dependents = append(s.dependents, d)
	}
	s.present = g.nodes[n.identity.UID] == n
	return s
}

// blockingDependents are n's dependents whose reference to n has
// blockOwnerDeletion=true.
func (g *graph) blockingDependents(n *node) []*node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*node
	for d := range n.dependents {
		for _, o := range d.owners {
			if o.UID == n.identity.UID && o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// eventType of a graph change.
type eventType int

const (
	addEvent eventType = iota
	updateEvent
	deleteEvent
)

// event is one change of the observed world (or a virtual delete: an
// object confirmed absent by a live read).
type event struct {
	typ     eventType
	virtual bool
	gvk     schema.GroupVersionKind
	obj     *metav1.PartialObjectMetadata
	old     *metav1.PartialObjectMetadata
}

func identityOf(gvk schema.GroupVersionKind, m *metav1.PartialObjectMetadata) objectReference {
	return objectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: m.Name, UID: m.UID, Namespace: m.Namespace}
}

func hasFinalizer(m metav1.Object, f string) bool {
	for _, x := range m.GetFinalizers() {
		if x == f {
			return true
		}
	}
	return false
}

func beingDeleted(m metav1.Object) bool { return m.GetDeletionTimestamp() != nil }

func deletingDependents(m metav1.Object) bool {
	return beingDeleted(m) && hasFinalizer(m, metav1.FinalizerDeleteDependents)
}

func orphaning(m metav1.Object) bool {
	return beingDeleted(m) && hasFinalizer(m, metav1.FinalizerOrphanDependents)
}

// sinks are where graph changes put work.
type sinks struct {
	attemptToDelete func(*node)
	attemptToOrphan func(*node)
	absent          func(objectReference)
	invalidRef      func(dependent objectReference, ref metav1.OwnerReference)
}

// process applies one event to the graph and queues the work it implies
// (upstream's processGraphChanges).
func (g *graph) process(ev *event, s sinks) {
	m := ev.obj
	g.mu.Lock()
	var toDelete, toOrphan []*node
	var absent []objectReference
	defer func() {
		g.mu.Unlock()
		for _, a := range absent {
			s.absent(a)
		}
		for _, n := range toOrphan {
			s.attemptToOrphan(n)
		}
		for _, n := range toDelete {
			s.attemptToDelete(n)
		}
	}()
	id := identityOf(ev.gvk, m)
	existing, found := g.nodes[m.UID]
	if found && !ev.virtual && existing.virtual {
		// A virtual node is observed: replace it by the real node,
		// keeping the dependents that referred to it.
		n := &node{identity: id, dependents: existing.dependents}
		g.nodes[m.UID] = n
		existing = n
		// Dependents referring by other coordinates, or from another
		// namespace, are re-checked.
		for d := range n.dependents {
			if !namespaceCompatible(n, d) {
				toDelete = append(toDelete, d)
				continue
			}
			for _, o := range d.owners {
				if o.UID == id.UID && (o.Kind != id.Kind || o.Name != id.Name || o.APIVersion != id.APIVersion) {
					toDelete = append(toDelete, d)
				}
			}
		}
	}
	switch {
	case (ev.typ == addEvent || ev.typ == updateEvent) && !found:
		n := &node{identity: id, owners: m.OwnerReferences,
			beingDeleted: beingDeleted(m), deletingDependents: deletingDependents(m)}
		g.nodes[m.UID] = n
		toDelete = append(toDelete, g.addDependentToOwners(n, m.OwnerReferences, s)...)
		g.transitions(ev.old, m, n, &toDelete, &toOrphan)
	case ev.typ == addEvent || ev.typ == updateEvent:
		added, removed, changed := referencesDiffs(existing.owners, m.OwnerReferences)
		if len(added)+len(removed)+len(changed) > 0 {
			// Owners waiting for this dependent may be unblocked.
			for _, ref := range append(removed, changed...) {
				if ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
					continue
				}
				if stillBlocks(ref.UID, m.OwnerReferences) {
					continue
				}
				if o, ok := g.nodes[ref.UID]; ok && o.deletingDependents {
					toDelete = append(toDelete, o)
				}
			}
			existing.owners = m.OwnerReferences
			toDelete = append(toDelete, g.addDependentToOwners(existing, added, s)...)
			for _, ref := range removed {
				if o, ok := g.nodes[ref.UID]; ok {
					delete(o.dependents, existing)
				}
			}
		}
		if beingDeleted(m) {
			existing.beingDeleted = true
		}
		g.transitions(ev.old, m, existing, &toDelete, &toOrphan)
	case ev.typ == deleteEvent:
		if !found {
			return
		}
		if ev.virtual && !existing.virtual && existing.identity != id {
			// A live read disagreed with coordinates some dependent used;
			// the real node stays, those dependents are re-checked.
			absent = append(absent, id)
			for d := range existing.dependents {
				for _, o := range d.owners {
					if o.UID == id.UID && o.Name == id.Name && o.Kind == id.Kind {
						toDelete = append(toDelete, d)
					}
				}
			}
			return
		}
		delete(g.nodes, m.UID)
		for _, ref := range existing.owners {
			if o, ok := g.nodes[ref.UID]; ok {
				delete(o.dependents, existing)
				if o.deletingDependents {
					toDelete = append(toDelete, o) // maybe its last blocking dependent
				}
			}
		}
		if len(existing.dependents) > 0 {
			absent = append(absent, id)
		}
		for d := range existing.dependents {
			toDelete = append(toDelete, d)
		}
	}
}

// stillBlocks reports whether refs still hold a blocking reference to uid.
func stillBlocks(uid types.UID, refs []metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.UID == uid && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
			return true
		}
	}
	return false
}

// addDependentToOwners links n to its owners, making virtual nodes for
// owners not in the graph (returned, to be verified).
func (g *graph) addDependentToOwners(n *node, owners []metav1.OwnerReference, s sinks) []*node {
	var virtual []*node
	suspect := false
	for _, ref := range owners {
		o, ok := g.nodes[ref.UID]
		if !ok {
			o = &node{
				identity: objectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID, Namespace: n.identity.Namespace},
				virtual:  true,
			}
			g.nodes[ref.UID] = o
			virtual = append(virtual, o)
		}
		if o.dependents == nil {
			o.dependents = map[*node]struct{}{}
		}
		o.dependents[n] = struct{}{}
		if ok && !suspect && (potentiallyInvalid(o, n, ref) || o.deletingDependents) {
			// (A dependent that joins an owner already deleting its
			// dependents is collected too, whatever order the events came
			// in.)
			suspect = true
		}
	}
	if suspect {
		// The dependent's references are verified (and it is collected
		// if every owner is confirmed absent).
		virtual = append(virtual, n)
	}
	return virtual
}

// potentiallyInvalid reports whether dependent n's reference to the known
// node o may not designate o (upstream's checks): a namespaced owner in
// another namespace, coordinates other than o's, or a virtual owner first
// seen from another namespace (it may be a namespaced kind referenced by a
// cluster-scoped dependent).
func potentiallyInvalid(o, n *node, ref metav1.OwnerReference) bool {
	ownerNamespaced := o.identity.Namespace != ""
	switch {
	case ownerNamespaced && o.identity.Namespace != n.identity.Namespace:
		return true
	case ref.APIVersion != o.identity.APIVersion || ref.Kind != o.identity.Kind || ref.Name != o.identity.Name:
		return true
	case !ownerNamespaced && o.virtual && n.identity.Namespace != "":
		return true
	}
	return false
}

// namespaceCompatible: a dependent may refer to a cluster-scoped owner or
// to one in its own namespace.
func namespaceCompatible(owner, dep *node) bool {
	return owner.identity.Namespace == "" || owner.identity.Namespace == dep.identity.Namespace
}

// transitions queues an owner that starts waiting for its dependents to be
// orphaned or deleted.
func (g *graph) transitions(old, cur *metav1.PartialObjectMetadata, n *node, toDelete, toOrphan *[]*node) {
	if orphaning(cur) && (old == nil || !orphaning(old)) {
		*toOrphan = append(*toOrphan, n)
		return
	}
	if orphaning(cur) {
		// Still waiting (e.g. an earlier attempt failed); resync retries.
		return
	}
	n.deletingDependents = deletingDependents(cur)
	if n.deletingDependents {
		start := old == nil || !deletingDependents(old)
		n.deletingDependents = true
		if start {
			for d := range n.dependents {
				*toDelete = append(*toDelete, d)
			}
		}
		*toDelete = append(*toDelete, n)
	}
}

// referencesDiffs compares owner references by UID.
func referencesDiffs(old, cur []metav1.OwnerReference) (added, removed, changed []metav1.OwnerReference) {
	oldByUID := map[types.UID]metav1.OwnerReference{}
	for _, r := range old {
		oldByUID[r.UID] = r
	}
	for _, r := range cur {
		o, ok := oldByUID[r.UID]
		if !ok {
			added = append(added, r)
			continue
		}
		if !refEqual(o, r) {
			changed = append(changed, o)
		}
		delete(oldByUID, r.UID)
	}
	for _, r := range old {
		if _, ok := oldByUID[r.UID]; ok {
			removed = append(removed, r)
		}
	}
	return added, removed, changed
}

func refEqual(a, b metav1.OwnerReference) bool {
	bo := func(p *bool) bool { return p != nil && *p }
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		bo(a.Controller) == bo(b.Controller) && bo(a.BlockOwnerDeletion) == bo(b.BlockOwnerDeletion)
}
