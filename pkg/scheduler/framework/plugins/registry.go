package plugins

import (
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// NewInTreeRegistry returns the factories of every in-tree plugin, by
// upstream's plugin name.
func NewInTreeRegistry() framework.Registry {
	r := framework.Registry{
		// One line per plugin: names.X: x.New,
	}
	return r
}
