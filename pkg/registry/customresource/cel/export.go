package cel

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"

	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
)

// BaseEnvOptions are upstream's base CEL environment options without
// variables (the standard library with optional types, cross-type numeric
// comparisons, the strings, sets, lists and two-variable comprehension
// extensions, and the Kubernetes function library), for the other CEL
// environments of the API server (admission policies).
func BaseEnvOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.Lists(ext.ListsVersion(3)),
		ext.TwoVarComprehensions(),
		kubernetesLibrary(),
	}
}

// SchemaTypes declares the object types of a structural schema as CRD
// rules see them (typed.go) for another environment: the option installs
// the type provider, and the type is the root's (the type to give a
// variable holding an object of the schema).
func SchemaTypes(root *structural.Node) (cel.EnvOption, *types.Type) {
	p := newSchemaTypes(root)
	t := p.byNode[root]
	if t == nil {
		t = types.DynType
	}
	return cel.CustomTypeProvider(p), t
}

// SchemaProvider is SchemaTypes for environments combining several
// schemas: the object types are named after name, and the provider is
// returned for the caller to combine.
func SchemaProvider(root *structural.Node, name string) (types.Provider, *types.Type) {
	p := newNamedSchemaTypes(root, name)
	t := p.byNode[root]
	if t == nil {
		t = types.DynType
	}
	return p, t
}
