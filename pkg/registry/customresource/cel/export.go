package cel

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
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
