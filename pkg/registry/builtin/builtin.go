package builtin

import (
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/admissionregistration"
	"github.com/skiff-sh/skiff/pkg/registry/apiextensions"
	"github.com/skiff-sh/skiff/pkg/registry/apiregistration"
	"github.com/skiff-sh/skiff/pkg/registry/apps"
	"github.com/skiff-sh/skiff/pkg/registry/autoscaling"
	"github.com/skiff-sh/skiff/pkg/registry/batch"
	"github.com/skiff-sh/skiff/pkg/registry/certificates"
	"github.com/skiff-sh/skiff/pkg/registry/coordination"
	"github.com/skiff-sh/skiff/pkg/registry/core"
	"github.com/skiff-sh/skiff/pkg/registry/discovery"
	"github.com/skiff-sh/skiff/pkg/registry/flowcontrol"
	"github.com/skiff-sh/skiff/pkg/registry/networking"
	"github.com/skiff-sh/skiff/pkg/registry/node"
	"github.com/skiff-sh/skiff/pkg/registry/policy"
	"github.com/skiff-sh/skiff/pkg/registry/rbac"
	"github.com/skiff-sh/skiff/pkg/registry/resource"
	"github.com/skiff-sh/skiff/pkg/registry/scheduling"
	"github.com/skiff-sh/skiff/pkg/registry/storageapi"
	"github.com/skiff-sh/skiff/pkg/registry/storagemigration"
)

// Definitions returns fresh definitions of all built-in resources.
func Definitions() []*registry.Definition {
	var out []*registry.Definition
	for _, group := range [][]*registry.Definition{
		core.Definitions(), apps.Definitions(), batch.Definitions(), autoscaling.Definitions(),
		coordination.Definitions(), discovery.Definitions(), policy.Definitions(), rbac.Definitions(),
		scheduling.Definitions(), storageapi.Definitions(), apiextensions.Definitions(),
		networking.AllocationDefinitions(), networking.Definitions(),
		node.Definitions(),
		flowcontrol.Definitions(), resource.Definitions(), storagemigration.Definitions(), certificates.Definitions(),
		admissionregistration.Definitions(), apiregistration.Definitions(),
	} {
		out = append(out, group...)
	}
	return out
}
