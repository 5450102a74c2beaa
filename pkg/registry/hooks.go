package registry

import (
	"context"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	"github.com/skiff-sh/skiff/pkg/auth/rbac"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// Hooks are a resource's side effects outside its own object: a Service's
// cluster IP and node ports, for example, are allocations that must be
// made before the Service is stored and released whenever it goes away.
// The Store runs them on every path that creates, updates or removes an
// object (create, create-on-update, update, delete, deletecollection, the
// update that removes the last finalizer, the garbage collector's and the
// namespace controller's deletes, which all go through the Store), so no
// path can skip them. Every field is optional.
type Hooks struct {
	// BeforeCreate runs once the new object has its name and namespace,
	// before it is prepared and validated (as upstream's BeginCreate). It
	// returns undo, which the Store calls if the create does not happen.
	// With dryRun it checks without allocating.
	BeforeCreate func(ctx context.Context, obj runtime.Object, dryRun bool) (undo func(), err error)
	// BeforeUpdate runs on an update before it is prepared and validated;
	// undo is called if the update is not stored (or is retried).
	BeforeUpdate func(ctx context.Context, obj, old runtime.Object, dryRun bool) (undo func(), err error)
	// AfterUpdate runs once an update is stored (release what old held
	// and obj no longer does).
	AfterUpdate func(ctx context.Context, obj, old runtime.Object)
	// AfterDelete runs once an object is removed from storage.
	AfterDelete func(ctx context.Context, obj runtime.Object)
	// Repair, if set, brings what the hooks keep outside the objects back
	// in line with them (after a crash between an allocation and the write
	// that needed it). The server runs it once at start, before it takes
	// writes, and then every RepairInterval.
	Repair func(ctx context.Context) error
}

// RepairInterval is how often the server runs the hooks' Repair (upstream
// repairs Service allocations every 3 minutes).
const RepairInterval = 3 * time.Minute

// HookEnv is what a Definition's hooks may use: the other resources'
// stores, storage for state that is not a served resource, and the
// server's configuration that hooks depend on.
type HookEnv struct {
	// Store returns the store of a served resource (nil if not served).
	Store func(schema.GroupResource) *Store
	// RawStorage opens storage under prefix for objects that are not
	// served (an allocator's state), with newFunc making empty objects.
	RawStorage func(prefix string, newFunc func() runtime.Object) storage.Interface
	Clock      clock.Clock
	Rand       *rand.Rand
	// ServiceClusterIPRange and ServiceNodePortRange configure the
	// Service allocators ("10.96.0.0/12", "30000-32767").
	ServiceClusterIPRange string
	ServiceNodePortRange  string
	// Authorizer is the server's authorizer, for checks a strategy makes
	// on behalf of the requesting user (the RBAC registry's escalate and
	// bind checks); nil when authorization is off (everything allowed).
	Authorizer authorizer.Authorizer
	// RBACRules resolves users' RBAC rules and roles' rules (privilege
	// escalation prevention).
	RBACRules rbac.PolicyRuleResolver
}

// undoList collects the undo functions of hooks that ran.
type undoList []func()

func (u *undoList) add(f func()) {
	if f != nil {
		*u = append(*u, f)
	}
}

// run undoes everything, last first, and empties the list.
func (u *undoList) run() {
	for i := len(*u) - 1; i >= 0; i-- {
		(*u)[i]()
	}
	*u = nil
}

func (s *Store) beforeCreate(ctx context.Context, obj runtime.Object, dryRun bool, undo *undoList) error {
	if s.Hooks == nil || s.Hooks.BeforeCreate == nil {
		return nil
	}
	f, err := s.Hooks.BeforeCreate(ctx, obj, dryRun)
	if err != nil {
		return err
	}
	undo.add(f)
	return nil
}

func (s *Store) beforeUpdate(ctx context.Context, obj, old runtime.Object, dryRun bool, undo *undoList) error {
	if s.Hooks == nil || s.Hooks.BeforeUpdate == nil {
		return nil
	}
	f, err := s.Hooks.BeforeUpdate(ctx, obj, old, dryRun)
	if err != nil {
		return err
	}
	undo.add(f)
	return nil
}

func (s *Store) afterUpdate(ctx context.Context, obj, old runtime.Object) {
	if s.Hooks != nil && s.Hooks.AfterUpdate != nil && old != nil {
		s.Hooks.AfterUpdate(ctx, storage.Unwrap(obj), storage.Unwrap(old))
	}
}

func (s *Store) afterDelete(ctx context.Context, obj runtime.Object) {
	if s.Hooks != nil && s.Hooks.AfterDelete != nil && obj != nil {
		s.Hooks.AfterDelete(ctx, storage.Unwrap(obj))
	}
}
