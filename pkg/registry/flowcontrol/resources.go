package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Group is the API group of the package's resources.
const Group = "flowcontrol.apiserver.k8s.io"

// Definitions are the flowcontrol.apiserver.k8s.io/v1 resources.
func Definitions() []*registry.Definition {
	fs := registry.NewDefinition(Group, "v1", "flowschemas", "FlowSchema", false,
		func() runtime.Object { return &flowcontrolv1.FlowSchema{} }, func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
		&registry.Strategy{Default: registry.Default(DefaultFlowSchema), Validate: registry.Validate(ValidateFlowSchema),
			ValidateUpdate: registry.ValidateUpdate(ValidateFlowSchemaUpdate), HasStatus: true, Generation: true})
	fs.ValidateStatus = registry.ValidateUpdate(ValidateFlowSchemaStatusUpdate)
	pl := registry.NewDefinition(Group, "v1", "prioritylevelconfigurations", "PriorityLevelConfiguration", false,
		func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
		func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} },
		&registry.Strategy{Default: registry.Default(DefaultPriorityLevelConfiguration), Validate: registry.Validate(ValidatePriorityLevelConfiguration),
			ValidateUpdate: registry.ValidateUpdate(ValidatePriorityLevelConfigurationUpdate), HasStatus: true, Generation: true})
	pl.ValidateStatus = registry.ValidateUpdate(ValidatePriorityLevelConfigurationStatusUpdate)
	return []*registry.Definition{fs, pl}
}
