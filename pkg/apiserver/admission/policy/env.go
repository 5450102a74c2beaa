package policy

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	k8scel "github.com/skiff-sh/skiff/pkg/registry/customresource/cel"
)

// Upstream's limits (k8s.io/apiserver/pkg/apis/cel).
const (
	// perCallLimit is the runtime cost limit of one expression.
	perCallLimit = 1000000
	// runtimeCostBudget is the budget of one binding's evaluation.
	runtimeCostBudget = 10000000
	// maxMessageBytes is the longest messageExpression result used.
	maxMessageBytes = 5 * 1024
	// maxAuditAnnotationValueLength is the longest audit annotation value.
	maxAuditAnnotationValueLength = 10 * 1024
)

// The variable names of upstream's admission CEL environment.
const (
	varObject          = "object"
	varOldObject       = "oldObject"
	varRequest         = "request"
	varParams          = "params"
	varNamespaceObject = "namespaceObject"
	varAuthorizer      = "authorizer"
	varRequestResource = "authorizer.requestResource"
	varVariables       = "variables"
)

// envKey selects one of the environments: params is declared only when
// the policy has a paramKind (as upstream), the Object and JSONPatch types
// only for mutations.
type envKey struct {
	params, patchTypes bool
}

var envs = func() map[envKey]*cel.Env {
	out := map[envKey]*cel.Env{}
	for _, params := range []bool{false, true} {
		for _, patch := range []bool{false, true} {
			opts := append(k8scel.BaseEnvOptions(),
				cel.Variable(varObject, cel.DynType),
				cel.Variable(varOldObject, cel.DynType),
				cel.Variable(varRequest, cel.ObjectType(admissionRequestTypeName)),
				cel.Variable(varNamespaceObject, cel.ObjectType(namespaceTypeName)),
				cel.Variable(varAuthorizer, authorizerType),
				cel.Variable(varRequestResource, resourceCheckType),
				cel.Variable(varVariables, cel.MapType(cel.StringType, cel.DynType)),
				cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
				authorizerLibrary(),
			)
			if params {
				opts = append(opts, cel.Variable(varParams, cel.DynType))
			}
			opts = append(opts, cel.CustomTypeProvider(&patchTypes{Registry: types.NewEmptyRegistry(), patch: patch}))
			if patch {
				opts = append(opts, jsonPatchLibrary())
			}
			env, err := cel.NewEnv(opts...)
			if err != nil {
				panic(err)
			}
			out[envKey{params, patch}] = env
		}
	}
	return out
}()

// program is one compiled expression (or its compile error).
type program struct {
	expr string
	prog cel.Program
	err  error
}

// compile compiles expr in env k; want, if set, are the result types
// allowed (upstream's ReturnTypes, checked at compile time).
func compile(k envKey, expr string, want ...*cel.Type) program {
	p := program{expr: expr}
	env := envs[k]
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		p.err = fmt.Errorf("compilation failed: %v", iss.Err())
		return p
	}
	if len(want) > 0 {
		out := ast.OutputType()
		ok := out.IsExactType(cel.DynType) || out.IsExactType(cel.AnyType)
		for _, w := range want {
			if out.IsExactType(w) || (w.Kind() == types.ListKind && out.Kind() == types.ListKind && w.IsAssignableType(out)) {
				ok = true
			}
		}
		if !ok {
			names := make([]string, len(want))
			for i, w := range want {
				names[i] = w.String()
			}
			p.err = fmt.Errorf("must evaluate to one of %v", names)
			if len(want) == 1 {
				p.err = fmt.Errorf("must evaluate to %v", want[0].String())
			}
			return p
		}
	}
	p.prog, p.err = env.Program(ast, cel.CostLimit(perCallLimit), cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)), cel.InterruptCheckFrequency(100))
	return p
}

// patchTypes resolves upstream's request and namespace types
// (kubernetes.AdmissionRequest, kubernetes.Namespace and their parts, so
// that `request.nope` is a compile error) and, for
// mutations, upstream's mutation types: Object and Object.<path> (struct
// types with any field, built as maps) and JSONPatch (op, path, from,
// value).
type patchTypes struct {
	*types.Registry
	patch bool
}

const admissionRequestTypeName = "kubernetes.AdmissionRequest"

// requestTypes are upstream's BuildRequestType: the fields of the request
// variable (its values are JSON maps at run time).
var requestTypes = func() map[string]map[string]*types.Type {
	gvk, gvr := types.NewObjectType("kubernetes.GroupVersionKind"), types.NewObjectType("kubernetes.GroupVersionResource")
	strs := types.NewListType(types.StringType)
	return map[string]map[string]*types.Type{
		"kubernetes.GroupVersionKind":     {"group": types.StringType, "version": types.StringType, "kind": types.StringType},
		"kubernetes.GroupVersionResource": {"group": types.StringType, "version": types.StringType, "resource": types.StringType},
		"kubernetes.UserInfo": {"username": types.StringType, "uid": types.StringType, "groups": strs,
			"extra": types.NewMapType(types.StringType, strs)},
		admissionRequestTypeName: {"kind": gvk, "resource": gvr, "subResource": types.StringType, "requestKind": gvk,
			"requestResource": gvr, "requestSubResource": types.StringType, "name": types.StringType, "namespace": types.StringType,
			"operation": types.StringType, "userInfo": types.NewObjectType("kubernetes.UserInfo"), "dryRun": types.BoolType,
			"options": types.DynType},
		// upstream's BuildNamespaceType (UID as upstream spells it)
		namespaceTypeName: {"metadata": types.NewObjectType("kubernetes.NamespaceMetadata"),
			"spec": types.NewObjectType("kubernetes.NamespaceSpec"), "status": types.NewObjectType("kubernetes.NamespaceStatus")},
		"kubernetes.NamespaceSpec": {"finalizers": strs},
		"kubernetes.NamespaceStatus": {"conditions": types.NewListType(types.NewObjectType("kubernetes.NamespaceCondition")),
			"phase": types.StringType},
		"kubernetes.NamespaceCondition": {"status": types.StringType, "type": types.StringType, "lastTransitionTime": types.TimestampType,
			"message": types.StringType, "reason": types.StringType},
		"kubernetes.NamespaceMetadata": {"name": types.StringType, "generateName": types.StringType, "namespace": types.StringType,
			"labels": types.NewMapType(types.StringType, types.StringType), "annotations": types.NewMapType(types.StringType, types.StringType),
			"UID": types.StringType, "creationTimestamp": types.TimestampType, "deletionGracePeriodSeconds": types.IntType,
			"deletionTimestamp": types.TimestampType, "generation": types.IntType, "resourceVersion": types.StringType,
			"finalizers": strs},
	}
}()

const namespaceTypeName = "kubernetes.Namespace"

const jsonPatchTypeName = "JSONPatch"

func isObjectType(name string) bool { return name == "Object" || strings.HasPrefix(name, "Object.") }

func (p *patchTypes) FindStructType(name string) (*types.Type, bool) {
	if _, ok := requestTypes[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	if !p.patch {
		return p.Registry.FindStructType(name)
	}
	if isObjectType(name) || name == jsonPatchTypeName {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Registry.FindStructType(name)
}

func (p *patchTypes) FindStructFieldNames(name string) ([]string, bool) {
	if fields, ok := requestTypes[name]; ok {
		out := make([]string, 0, len(fields))
		for k := range fields {
			out = append(out, k)
		}
		return out, true
	}
	if !p.patch {
		return p.Registry.FindStructFieldNames(name)
	}
	if name == jsonPatchTypeName {
		return []string{"op", "path", "from", "value"}, true
	}
	if isObjectType(name) {
		return nil, true
	}
	return p.Registry.FindStructFieldNames(name)
}

func (p *patchTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if fields, ok := requestTypes[name]; ok {
		t, ok := fields[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	if !p.patch {
		return p.Registry.FindStructFieldType(name, field)
	}
	if name == jsonPatchTypeName {
		switch field {
		case "op", "path", "from":
			return &types.FieldType{Type: types.StringType}, true
		case "value":
			return &types.FieldType{Type: types.DynType}, true
		}
		return nil, false
	}
	if isObjectType(name) {
		return &types.FieldType{Type: types.DynType}, true
	}
	return p.Registry.FindStructFieldType(name, field)
}

func (p *patchTypes) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if !p.patch || !isObjectType(name) && name != jsonPatchTypeName {
		return p.Registry.NewValue(name, fields)
	}
	m := make(map[ref.Val]ref.Val, len(fields))
	for k, v := range fields {
		if name == jsonPatchTypeName && k != "value" {
			if _, ok := v.(types.String); !ok {
				return types.NewErr("unexpected type %T for JSONPatchType '%s' field", v.Value(), k)
			}
		}
		m[types.String(k)] = v
	}
	return &objectVal{Mapper: types.NewRefValMap(types.DefaultTypeAdapter, m), typeName: name, fields: fields}
}

// objectVal is a value of an Object or JSONPatch type: a map of its
// fields that remembers its type name.
type objectVal struct {
	traits.Mapper
	typeName string
	fields   map[string]ref.Val
}

func (o *objectVal) Type() ref.Type { return types.NewObjectType(o.typeName) }

// checkTypeNames is upstream's CheckTypeNamesMatchFieldPathNames: the
// type of a nested Object value names its field path from the root
// (Object.spec.template for the template of spec).
func checkTypeNames(v ref.Val, path []string) []error {
	var errs []error
	if o, ok := v.(*objectVal); ok {
		if want := strings.Join(path, "."); o.typeName != want {
			errs = append(errs, fmt.Errorf("unexpected type name %q, expected %q, which matches field name path from root Object type", o.typeName, want))
		}
		for k, f := range o.fields {
			errs = append(errs, checkTypeNames(f, append(append([]string(nil), path...), k))...)
		}
		return errs
	}
	switch x := v.(type) {
	case traits.Mapper:
		for it := x.Iterator(); it.HasNext() == types.True; {
			errs = append(errs, checkTypeNames(x.Get(it.Next()), path)...)
		}
	case traits.Lister:
		for it := x.Iterator(); it.HasNext() == types.True; {
			errs = append(errs, checkTypeNames(it.Next(), path)...)
		}
	}
	return errs
}

func jsonPatchLibrary() cel.EnvOption {
	return cel.Function("jsonpatch.escapeKey", cel.Overload("string_jsonpatch_escapeKey_string", []*cel.Type{cel.StringType}, cel.StringType,
		cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.String(strings.ReplaceAll(strings.ReplaceAll(string(s), "~", "~0"), "/", "~1"))
		})))
}

// toNative converts a CEL value to JSON-like Go values (maps, slices,
// strings, int64, float64, bool, nil).
func toNative(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.String:
		return string(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return int64(x), nil
	case types.Double:
		return float64(x), nil
	case types.Bool:
		return bool(x), nil
	case types.Bytes:
		return []byte(x), nil
	case *types.Err:
		return nil, x
	}
	if v.Type() == types.OptionalType {
		o := v.(*types.Optional)
		if !o.HasValue() {
			return nil, nil
		}
		return toNative(o.GetValue())
	}
	switch x := v.(type) {
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key of type %s is not a string", k.Type().TypeName())
			}
			n, err := toNative(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(ks)] = n
		}
		return out, nil
	case traits.Lister:
		var out []any
		it := x.Iterator()
		for it.HasNext() == types.True {
			n, err := toNative(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	switch nv := v.Value().(type) {
	case fmt.Stringer:
		return nv.String(), nil
	}
	n, err := v.ConvertToNative(reflect.TypeOf((*any)(nil)).Elem())
	if err != nil {
		return nil, fmt.Errorf("unsupported value of type %s", v.Type().TypeName())
	}
	return n, nil
}
