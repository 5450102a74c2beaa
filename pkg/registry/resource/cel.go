package resource

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
)

// DRA selector expressions are compiled (parsed and type-checked) when a
// DeviceClass, claim or claim template is written, as upstream does, so a
// syntax error or an unknown name is refused with upstream's "compilation
// failed: ..." message. skiff never evaluates them (the scheduler does),
// so the environment only declares what an expression may use: the
// `device` variable, typed as upstream's kubernetes.DRADevice (driver,
// attributes by domain and name, capacity quantities by domain and name,
// allowMultipleAllocations), and the Kubernetes CEL functions DRA
// selectors use (quantity, semver and their methods, isQuantity,
// isSemver, the regex and list helpers).

var (
	quantityType = cel.OpaqueType("kubernetes.Quantity")
	semverType   = cel.OpaqueType("kubernetes.Semver")
	deviceType   = types.NewObjectType("kubernetes.DRADevice")
)

// deviceFields are the fields of the `device` variable.
var deviceFields = map[string]*types.Type{
	"driver":                   types.StringType,
	"attributes":               types.NewMapType(types.StringType, types.NewMapType(types.StringType, types.DynType)),
	"capacity":                 types.NewMapType(types.StringType, types.NewMapType(types.StringType, quantityType)),
	"allowMultipleAllocations": types.BoolType,
}

// deviceProvider declares kubernetes.DRADevice to the type checker and
// leaves every other type to the standard provider.
type deviceProvider struct{ *types.Registry }

func (p deviceProvider) FindStructType(name string) (*types.Type, bool) {
	if name == deviceType.TypeName() {
		return types.NewTypeTypeWithParam(deviceType), true
	}
	return p.Registry.FindStructType(name)
}

func (p deviceProvider) FindStructFieldNames(name string) ([]string, bool) {
	if name == deviceType.TypeName() {
		return []string{"allowMultipleAllocations", "attributes", "capacity", "driver"}, true
	}
	return p.Registry.FindStructFieldNames(name)
}

func (p deviceProvider) FindStructFieldType(name, fieldName string) (*types.FieldType, bool) {
	if name == deviceType.TypeName() {
		t, ok := deviceFields[fieldName]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	return p.Registry.FindStructFieldType(name, fieldName)
}

var selectorEnv = func() *cel.Env {
	fn := func(name string, overloads ...cel.FunctionOpt) cel.EnvOption { return cel.Function(name, overloads...) }
	member := func(name string, recv *cel.Type, args []*cel.Type, result *cel.Type) cel.EnvOption {
		id := fmt.Sprintf("%s_%s", recv.String(), name)
		return fn(name, cel.MemberOverload(id, append([]*cel.Type{recv}, args...), result))
	}
	reg, err := types.NewRegistry()
	if err != nil {
		panic(err)
	}
	opts := []cel.EnvOption{
		cel.CustomTypeProvider(deviceProvider{reg}),
		cel.Variable("device", deviceType),
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.Lists(ext.ListsVersion(3)),
		ext.TwoVarComprehensions(),
		fn("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, quantityType)),
		fn("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType)),
		fn("semver", cel.Overload("string_to_semver", []*cel.Type{cel.StringType}, semverType),
			cel.Overload("string_bool_to_semver", []*cel.Type{cel.StringType, cel.BoolType}, semverType)),
		fn("isSemver", cel.Overload("is_semver_string", []*cel.Type{cel.StringType}, cel.BoolType),
			cel.Overload("is_semver_string_bool", []*cel.Type{cel.StringType, cel.BoolType}, cel.BoolType)),
		fn("find", cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType)),
		fn("findAll", cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType)),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType))),
	}
	for _, name := range []string{"isSorted", "sum", "min", "max"} {
		opts = append(opts, fn(name, cel.MemberOverload("list_"+name, []*cel.Type{cel.ListType(cel.DynType)}, cel.DynType)))
	}
	for _, name := range []string{"indexOf", "lastIndexOf"} {
		opts = append(opts, fn(name, cel.MemberOverload("list_"+name, []*cel.Type{cel.ListType(cel.DynType), cel.DynType}, cel.IntType)))
	}
	for _, t := range []*cel.Type{quantityType, semverType} {
		opts = append(opts,
			member("compareTo", t, []*cel.Type{t}, cel.IntType),
			member("isGreaterThan", t, []*cel.Type{t}, cel.BoolType),
			member("isLessThan", t, []*cel.Type{t}, cel.BoolType))
	}
	for _, name := range []string{"major", "minor", "patch"} {
		opts = append(opts, member(name, semverType, nil, cel.IntType))
	}
	opts = append(opts,
		member("sign", quantityType, nil, cel.IntType),
		member("isInteger", quantityType, nil, cel.BoolType),
		member("asInteger", quantityType, nil, cel.IntType),
		member("asApproximateFloat", quantityType, nil, cel.DoubleType),
		fn("add", cel.MemberOverload("quantity_add", []*cel.Type{quantityType, quantityType}, quantityType),
			cel.MemberOverload("quantity_add_int", []*cel.Type{quantityType, cel.IntType}, quantityType)),
		fn("sub", cel.MemberOverload("quantity_sub", []*cel.Type{quantityType, quantityType}, quantityType),
			cel.MemberOverload("quantity_sub_int", []*cel.Type{quantityType, cel.IntType}, quantityType)),
	)
	env, err := cel.NewEnv(opts...)
	if err != nil {
		panic(err)
	}
	return env
}()

// compileSelector compiles a selector expression as upstream's DRA
// compiler would and returns upstream's message for a failure ("" when
// it compiles to a bool or an undetermined type).
func compileSelector(expression string) string {
	ast, issues := selectorEnv.Compile(expression)
	if issues != nil && issues.Err() != nil {
		return "compilation failed: " + issues.String()
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) && !t.IsExactType(cel.AnyType) {
		return fmt.Sprintf("must evaluate to %v or the unknown type, not %v", cel.BoolType.String(), t.String())
	}
	return ""
}
