package policy

import (
	"context"
	"log/slog"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// Resources maps kinds to resources and converts stored objects to
// served versions (the API server's endpoints).
type Resources interface {
	// ResourceFor returns the served resource of a kind and whether it is
	// namespaced (ok false for a kind the server does not serve).
	ResourceFor(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, namespaced, ok bool)
	// ToVersion returns a copy of obj (storage form of gvr's resource) in
	// the served version gvr, apiVersion and kind set.
	ToVersion(obj runtime.Object, gvr schema.GroupVersionResource) (runtime.Object, error)
}

// Config configures the plugins.
type Config struct {
	// Getter reads policies, bindings, params and namespaces (the watch
	// cache).
	Getter admission.Getter
	// Resources resolves paramKinds and converts params.
	Resources Resources
	// Authorizer answers the CEL authorizer variable; nil allows
	// everything (as the API server without authorization).
	Authorizer authorizer.Authorizer
	// TypeConverter returns the structured-merge-diff types of a served
	// kind, for ApplyConfiguration mutations (nil: such mutations fail).
	TypeConverter func(gvk schema.GroupVersionKind) (managedfields.TypeConverter, error)
	Logger        *slog.Logger
}

func (c *Config) authz() authorizer.Authorizer {
	if c.Authorizer == nil {
		return authorizer.AlwaysAllow{}
	}
	return c.Authorizer
}

func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// excluded are the resources admission policies never apply to
// (upstream's admissionResources: a broken policy can always be removed).
var excluded = map[schema.GroupResource]bool{
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}:       true,
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: true,
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}:         true,
	{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}:   true,
}

// compileCache keeps each policy's compiled form for its resourceVersion.
type compileCache[T any] struct {
	mu sync.Mutex
	m  map[k8stypes.UID]cacheEntry[T]
}

type cacheEntry[T any] struct {
	rv  string
	val T
}

// get returns the compiled form of the policy (uid, rv), compiling it on
// a miss; seen prunes entries of policies no longer listed.
func (c *compileCache[T]) get(uid k8stypes.UID, rv string, build func() T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[uid]; ok && e.rv == rv {
		return e.val
	}
	if c.m == nil {
		c.m = map[k8stypes.UID]cacheEntry[T]{}
	}
	v := build()
	c.m[uid] = cacheEntry[T]{rv: rv, val: v}
	return v
}

func (c *compileCache[T]) prune(live map[k8stypes.UID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) <= len(live) {
		return
	}
	for uid := range c.m {
		if !live[uid] {
			delete(c.m, uid)
		}
	}
}

// listSorted lists a resource from the watch cache, sorted by name.
func listSorted[T runtime.Object](ctx context.Context, g admission.Getter, gr schema.GroupResource, name func(T) string) ([]T, error) {
	objs, err := g.List(ctx, gr, "")
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return name(out[i]) < name(out[j]) })
	return out, nil
}
