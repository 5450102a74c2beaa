package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// Deps are what plugins may use.
type Deps struct {
	Getter Getter
	Clock  clock.Clock
	Rand   *rand.Rand
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

// Admit runs every mutating plugin.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
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
// `<resource> "<name>" is forbidden: <reason>`.
func forbidden(a *Attributes, err error) error {
	name := a.Name
	if name == "" {
		name = "Unknown"
	}
	gr := a.Resource
	if a.Subresource != "" {
		gr.Resource += "/" + a.Subresource
	}
	return apierrors.NewForbidden(gr, name, err)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// NewDefaultChain is upstream's default plugin chain, in upstream order.
func NewDefaultChain(d Deps) *Chain {
	return NewChain(
		&namespaceLifecycle{d: d, deleted: map[string]time.Time{}},
		&limitRanger{d: d},
		&serviceAccount{d: d},
		&taintNodesByCondition{},
		&priority{d: d},
		&defaultTolerationSeconds{},
		&defaultStorageClass{d: d},
		&certificateSubjectRestriction{},
		&defaultIngressClass{d: d},
	)
}
