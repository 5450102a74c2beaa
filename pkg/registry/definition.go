package registry

import (
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Definition describes one stored resource: its names, its Go types in the
// storage version, its strategy and subresources, and the other versions it
// is served in. The API server builds storage and HTTP endpoints from it.
type Definition struct {
	Group      string
	Version    string // the storage (and preferred) version
	Resource   string // plural, lower case
	Kind       string
	ListKind   string
	Singular   string
	ShortNames []string
	Categories []string
	Namespaced bool

	New     func() runtime.Object
	NewList func() runtime.Object

	Strategy *Strategy
	// ValidateStatus validates a status subresource update; nil means the
	// resource has no status subresource.
	ValidateStatus func(obj, old runtime.Object) field.ErrorList
	// PrepareStatus, if set, adjusts a status subresource update after
	// everything but the status was copied from old (upstream's status
	// strategies' PrepareForUpdate: a ResourceClaim drops the status of
	// devices no longer allocated).
	PrepareStatus func(obj, old runtime.Object)
	// Scale gives the resource a scale subresource.
	Scale *ScaleFuncs
	// Subresources are further subresources that read the whole object
	// and update one part of it (a CertificateSigningRequest's approval).
	Subresources []UpdateSubresource
	// Actions are subresources whose behaviour is the API server's own
	// (pods/binding, pods/eviction, pods/log, serviceaccounts/token,
	// namespaces/finalize): the Definition declares them, discovery and
	// OpenAPI list them, and the API server refuses to start with one it
	// has no handler for.
	Actions []Action
	// Verbs the resource supports; nil means all.
	Verbs []string
	// Extra lists more served versions of the same stored objects.
	Extra []VersionDef
	// NewHooks, if set, builds the resource's side effects outside its own
	// objects (see Hooks) once every store exists.
	NewHooks func(env *HookEnv) (*Hooks, error)
	// Warning is sent (as an HTTP Warning header) with every request to the
	// Definition's own version: upstream's deprecation notice.
	Warning string
}

// VersionDef is another served version of a Definition's objects.
type VersionDef struct {
	// Group is the API group of this version when it differs from the
	// Definition's (events.k8s.io/v1 events are stored as core/v1 events).
	Group       string
	Version     string
	New         func() runtime.Object
	NewList     func() runtime.Object
	ToStorage   func(runtime.Object) (runtime.Object, error)
	FromStorage func(runtime.Object) (runtime.Object, error)
	// Default applies this version's defaulting before conversion.
	Default func(runtime.Object)
	// FieldLabels, if set, are this version's field selector keys, each
	// mapped to the storage version's key it selects on (events.k8s.io's
	// regarding.name is core's involvedObject.name); keys not listed are
	// refused. Nil means the storage version's keys.
	FieldLabels map[string]string
}

// UpdateSubresource is a subresource served with get, update and patch on
// the whole object, of which an update changes only one part.
type UpdateSubresource struct {
	Name string
	// Keep copies from old into obj everything the subresource may not
	// change.
	Keep func(obj, old runtime.Object)
	// ValidateUpdate checks the result.
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList
	// Stamp, if set, records server-set times (see Strategy.StampUpdate).
	Stamp func(obj, old runtime.Object, now time.Time)
}

// Action is a subresource served by a handler of the API server's.
type Action struct {
	Name string
	// Kind is the kind discovery shows for it (Binding, Eviction, ...);
	// empty means the resource's own.
	Kind schema.GroupVersionKind
	// Verbs are the verbs it answers.
	Verbs []string
}

// ScaleFuncs read and write the replica count behind a scale subresource.
type ScaleFuncs struct {
	// Get builds the Scale of obj (spec and status replicas, selector).
	Get func(obj runtime.Object) (*autoscalingv1.Scale, error)
	// SetReplicas sets obj's desired replicas.
	SetReplicas func(obj runtime.Object, replicas int32)
}

// AllVerbs are the verbs of a full read-write resource.
var AllVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// StoragePrefix is the key prefix of the resource in storage, as upstream
// lays out etcd: /registry/<resource>/ for core and most groups.
func (d *Definition) StoragePrefix() string {
	return "/registry/" + d.storageName() + "/"
}

func (d *Definition) storageName() string {
	switch d.Group {
	case "", "apps", "batch", "autoscaling", "policy", "coordination.k8s.io", "scheduling.k8s.io",
		"storage.k8s.io", "rbac.authorization.k8s.io", "discovery.k8s.io", "events.k8s.io":
		return d.Resource
	case "admissionregistration.k8s.io", "certificates.k8s.io", "flowcontrol.apiserver.k8s.io":
		return d.Resource
	}
	return d.Group + "/" + d.Resource
}

// NewDefinition fills in the names every resource derives the same way
// (ListKind, singular) and the strategy defaults upstream uses for nearly
// every resource (PUT without resourceVersion is allowed).
func NewDefinition(group, version, resource, kind string, namespaced bool, newObj, newList func() runtime.Object, s *Strategy) *Definition {
	s.AllowUnconditionalUpdate = true
	return &Definition{
		Group: group, Version: version, Resource: resource, Kind: kind, ListKind: kind + "List",
		Singular: strings.ToLower(kind), Namespaced: namespaced, New: newObj, NewList: newList, Strategy: s,
	}
}
