package admissionregistration

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CEL expressions of webhooks and admission policies are parsed when
// written, as upstream compiles them, so a syntax error is refused with
// upstream's "compilation failed: ..." message. (Webhooks' matchConditions
// are evaluated by pkg/apiserver/admission/webhook; policies' expressions
// are not evaluated yet.) This environment does not declare upstream's full typed environment (the
// typed request and namespace objects, the authorizer and the Kubernetes
// function libraries), so a type check is only used to refuse an
// expression whose result is definitely of the wrong type ("must evaluate
// to bool"); an expression this environment cannot type-check is accepted,
// never refused for what upstream's richer environment would allow.

var policyEnv = func() *cel.Env {
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("params", cel.DynType),
		cel.Variable("namespaceObject", cel.DynType),
		cel.Variable("authorizer", cel.DynType),
		cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)),
		cel.HomogeneousAggregateLiterals(),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.Lists(ext.ListsVersion(3)),
		ext.TwoVarComprehensions(),
	)
	if err != nil {
		panic(err)
	}
	return env
}()

// checkCEL parses expr and, when it type-checks here, requires its result
// to be one of want (none: any type). It returns upstream's field error.
func checkCEL(fldPath *field.Path, expr string, want ...*cel.Type) *field.Error {
	ast, iss := policyEnv.Parse(expr)
	if iss.Err() != nil {
		return field.Invalid(fldPath, expr, "compilation failed: "+iss.String())
	}
	if len(want) == 0 {
		return nil
	}
	checked, iss := policyEnv.Check(ast)
	if iss.Err() != nil {
		return nil // upstream's environment may well accept it
	}
	out := checked.OutputType()
	if out.IsExactType(cel.DynType) || out.IsExactType(cel.AnyType) {
		return nil
	}
	for _, w := range want {
		if out.IsExactType(w) {
			return nil
		}
	}
	if len(want) == 1 {
		return field.Invalid(fldPath, expr, fmt.Sprintf("must evaluate to %v", want[0].String()))
	}
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = w.String()
	}
	return field.Invalid(fldPath, expr, fmt.Sprintf("must evaluate to one of [%s]", strings.Join(names, " ")))
}

// appendCEL adds checkCEL's error, if any, to errs.
func appendCEL(errs field.ErrorList, fldPath *field.Path, expr string, want ...*cel.Type) field.ErrorList {
	if err := checkCEL(fldPath, expr, want...); err != nil {
		return append(errs, err)
	}
	return errs
}
