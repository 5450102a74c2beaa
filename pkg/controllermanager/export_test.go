package controllermanager

import (
	"context"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// SetTransformHook makes f see every object the manager's shared
// informers cache (after dropping managedFields and interning).
func SetTransformHook(m *Manager, f func(any)) { m.transformed = f }

// ControllerClientConfig is the client configuration the manager gives the
// named controller; with useSA the service account is created if missing.
func ControllerClientConfig(ctx context.Context, root *client.Client, useSA bool, clk clock.Clock, controller string) (client.Config, error) {
	ids := &identities{root: root, base: root.Config(), useSA: useSA, clock: clk}
	return ids.clientConfig(ctx, controller)
}
