package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// Operation is what a request does to an object.
type Operation string

const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one admission decision.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupResource
	Subresource string
	Kind        schema.GroupKind
	Namespace   string
	Name        string
	// Object is the incoming object (nil for DELETE); OldObject the stored
	// one for UPDATE and DELETE.
	Object    runtime.Object
	OldObject runtime.Object
	DryRun    bool

	// RequestResource and RequestKind are the served version the request
	// used (AdmissionReview's requestResource and requestKind; a resource
	// served by two groups, events, has Resource's group only in storage).
	RequestResource schema.GroupVersionResource
	RequestKind     schema.GroupVersionKind
	// Options are the request's CreateOptions, UpdateOptions or
	// DeleteOptions (nil for in-process writes).
	Options runtime.Object
	// UserInfo is the requesting user (nil for in-process writes).
	UserInfo *authenticationv1.UserInfo
	// Versions converts Object between its storage form and the served
	// versions of the resource (webhooks receive and patch a served
	// version); for the scale subresource, whose objects are Scales, it
	// converts Scales.
	Versions Versions
	// Reinvocation is the state of upstream's reinvocation: a mutating
	// plugin that wants the mutating chain run once more sets
	// ShouldReinvoke; the second run sees IsReinvoke.
	Reinvocation Reinvocation

	annotationsMu sync.Mutex
	annotations   map[string]string
}

// Versions converts an object between its storage form and the served
// versions of its resource.
type Versions interface {
	// Equivalents lists every served version of the resource (other
	// groups included, events), the request's own among them.
	Equivalents() []schema.GroupVersionResource
	// KindFor is the kind of an equivalent resource (empty if unknown).
	KindFor(gvr schema.GroupVersionResource) schema.GroupVersionKind
	// ToVersion returns a copy of obj (storage form) in the served version
	// gvr, its apiVersion and kind set.
	ToVersion(obj runtime.Object, gvr schema.GroupVersionResource) (runtime.Object, error)
	// FromJSON decodes an object of served version gvr, defaults it as a
	// request body is defaulted and converts it to the storage form.
	FromJSON(data []byte, gvr schema.GroupVersionResource) (runtime.Object, error)
}

// Reinvocation is one request's reinvocation state (upstream's
// ReinvocationContext).
type Reinvocation struct {
	IsReinvoke     bool
	ShouldReinvoke bool
	values         map[string]any
}

// Value returns what a plugin stored under key.
func (r *Reinvocation) Value(key string) any { return r.values[key] }

// SetValue stores a plugin's reinvocation state under key.
func (r *Reinvocation) SetValue(key string, v any) {
	if r.values == nil {
		r.values = map[string]any{}
	}
	r.values[key] = v
}

// AddAnnotation records an audit annotation (safe for concurrent use:
// validating webhooks run in parallel). skiff has no audit log: the
// annotations stay on the attributes and plugins log them at debug level.
func (a *Attributes) AddAnnotation(key, value string) {
	a.annotationsMu.Lock()
	defer a.annotationsMu.Unlock()
	if a.annotations == nil {
		a.annotations = map[string]string{}
	}
	a.annotations[key] = value
}

// Annotations returns a copy of the audit annotations recorded so far.
func (a *Attributes) Annotations() map[string]string {
	a.annotationsMu.Lock()
	defer a.annotationsMu.Unlock()
	out := make(map[string]string, len(a.annotations))
	for k, v := range a.annotations {
		out[k] = v
	}
	return out
}

type warningsKey struct{}

// WithWarnings returns a context whose AddWarning calls reach add (the
// API server writes them as HTTP Warning headers; add must be safe for
// concurrent use).
func WithWarnings(ctx context.Context, add func(text string)) context.Context {
	return context.WithValue(ctx, warningsKey{}, add)
}

// AddWarning passes a warning to the client of the request ctx serves (a
// no-op outside a request).
func AddWarning(ctx context.Context, text string) {
	if add, ok := ctx.Value(warningsKey{}).(func(string)); ok && text != "" {
		add(text)
	}
}

// Getter reads stored objects (served from the watch cache).
type Getter interface {
	Get(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error)
	// GetConsistent reads from storage, never from a possibly stale cache.
	GetConsistent(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error)
	List(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error)
	// ListConsistent lists what storage holds now, never a possibly
	// stale cache.
	ListConsistent(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error)
}

// StatusWriter writes the status of stored objects (the ResourceQuota
// plugin charges quotas through it).
type StatusWriter interface {
	// UpdateStatus stores obj's status if the stored object still has
	// obj's resourceVersion, else it fails with a 409 Conflict.
	UpdateStatus(ctx context.Context, gr schema.GroupResource, obj runtime.Object) (runtime.Object, error)
}

// Deps are what plugins may use.
type Deps struct {
	Getter Getter
	// Status is nil in tests that need no writes; plugins that write
	// then do nothing.
	Status StatusWriter
	Clock  clock.Clock
	Rand   *rand.Rand
	// Authorizer decides what plugins check with the authorizer
	// (CertificateApproval, CertificateSigning); nil allows everything,
	// as the server does without one.
	Authorizer authorizer.Authorizer
	// External are plugins built outside this package, by upstream name:
	// MutatingAdmissionWebhook and ValidatingAdmissionWebhook (package
	// webhook), ValidatingAdmissionPolicy and MutatingAdmissionPolicy
	// (package policy), which depend on this one. The chain places them by
	// name like the others.
	External map[string]Plugin
	// PodTopologyLabels is upstream's alpha feature gate
	// PodTopologyLabelsAdmission (off by default in 1.34): without it the
	// PodTopologyLabels plugin does nothing.
	PodTopologyLabels bool
}

// Mutator changes objects.
type Mutator interface {
	Admit(ctx context.Context, a *Attributes) error
}

// Validator accepts or rejects objects.
type Validator interface {
	Validate(ctx context.Context, a *Attributes) error
}

// Plugin is a named admission plugin; it implements Mutator, Validator or both.
type Plugin interface {
	Name() string
	// Handles reports whether the plugin cares about this operation.
	Handles(op Operation) bool
}

// Chain runs plugins in order.
type Chain struct {
	plugins []Plugin
}

// NewChain returns a chain of the given plugins.
func NewChain(plugins ...Plugin) *Chain { return &Chain{plugins: plugins} }

// Admit runs every mutating plugin, and all of them once more when one
// asks for reinvocation (upstream's reinvoker: a webhook with
// reinvocationPolicy IfNeeded sees what later plugins changed).
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	if err := c.admit(ctx, a); err != nil {
		return err
	}
	if a.Reinvocation.ShouldReinvoke && !a.Reinvocation.IsReinvoke {
		a.Reinvocation.IsReinvoke = true
		return c.admit(ctx, a)
	}
	return nil
}

func (c *Chain) admit(ctx context.Context, a *Attributes) error {
	for _, p := range c.plugins {
		if m, ok := p.(Mutator); ok && p.Handles(a.Operation) {
			if err := m.Admit(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Validate runs every validating plugin.
func (c *Chain) Validate(ctx context.Context, a *Attributes) error {
	for _, p := range c.plugins {
		if v, ok := p.(Validator); ok && p.Handles(a.Operation) {
			if err := v.Validate(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Plugins lists the chain's plugin names in order.
func (c *Chain) Plugins() []string {
	var out []string
	for _, p := range c.plugins {
		out = append(out, p.Name())
	}
	return out
}

// forbidden is upstream's admission rejection:
// `<resource> "<name>" is forbidden: <reason>`, the resource without the
// subresource (pods "p", not pods/resize "p"), as upstream's NewForbidden.
func forbidden(a *Attributes, err error) error {
	name := a.Name
	if name == "" {
		name = "Unknown"
	}
	return apierrors.NewForbidden(a.Resource, name, err)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// NewDefaultChain is upstream's default plugin chain, in upstream order
// (the plugins skiff implements of those upstream enables by default).
func NewDefaultChain(d Deps) *Chain {
	names, _ := EnabledPlugins(nil, nil)
	c, _ := NewChainFor(names, d)
	return c
}
