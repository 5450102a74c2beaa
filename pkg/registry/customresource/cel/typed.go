package cel

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
)

// Rules are type-checked against the schema, as upstream declares its
// types: objects with properties are object types whose fields are the
// escaped property names (an undeclared field is a compile error),
// additionalProperties maps are map(string, V), arrays list(T), strings of
// format date-time/duration/byte timestamps/durations/bytes, and
// int-or-string and schemaless preserve-unknown-fields values dyn. The
// root object also has apiVersion, kind and metadata.name/generateName.
// Values stay decoded JSON (maps) at run time.

// schemaTypes is the type provider of one schema's object types.
type schemaTypes struct {
	*types.Registry
	objects map[string]map[string]*types.Type
	byNode  map[*structural.Node]*types.Type
}

// The types are named after "selfType" (selfType.spec, ...), as upstream
// names them after a generated selfType<n>: a type named after the
// variable ("self.spec") would make the checker resolve `self.spec` in
// `self.spec.replicas` as that type, not as a field selection.
func newSchemaTypes(root *structural.Node) *schemaTypes { return newNamedSchemaTypes(root, "selfType") }

// newNamedSchemaTypes names the object types after name (name, name.spec,
// ...), so that the types of two schemas can live in one environment.
func newNamedSchemaTypes(root *structural.Node, name string) *schemaTypes {
	p := &schemaTypes{Registry: types.NewEmptyRegistry(), objects: map[string]map[string]*types.Type{}, byNode: map[*structural.Node]*types.Type{}}
	p.typeOf(root, name, true)
	return p
}

func (p *schemaTypes) typeOf(n *structural.Node, name string, root bool) *types.Type {
	if n == nil {
		return types.DynType
	}
	var t *types.Type
	switch n.Type {
	case "object":
		switch {
		case len(n.Props) > 0 || root || n.Embedded:
			fields := map[string]*types.Type{}
			for k, sub := range n.Props {
				if e, ok := escape(k); ok {
					fields[e] = p.typeOf(sub, name+"."+e, false)
				}
			}
			if root || n.Embedded {
				for _, k := range []string{"apiVersion", "kind"} {
					if _, ok := fields[k]; !ok {
						fields[k] = types.StringType
					}
				}
				if _, ok := fields["metadata"]; !ok {
					metaName := name + ".metadata"
					p.objects[metaName] = map[string]*types.Type{"name": types.StringType, "generateName": types.StringType}
					fields["metadata"] = types.NewObjectType(metaName)
				}
			}
			if n.Preserve && len(n.Props) == 0 {
				// Anything may be there: no field checks.
				t = types.DynType
				break
			}
			p.objects[name] = fields
			t = types.NewObjectType(name)
		case n.Additional != nil:
			t = types.NewMapType(types.StringType, p.typeOf(n.Additional, name+".@values", false))
		case n.Preserve || n.AdditionalAllowed:
			t = types.DynType
		default:
			p.objects[name] = map[string]*types.Type{}
			t = types.NewObjectType(name)
		}
	case "array":
		t = types.NewListType(p.typeOf(n.Items, name+".@items", false))
	case "string":
		switch n.Format {
		case "date-time":
			t = types.TimestampType
		case "duration":
			t = types.DurationType
		case "byte":
			t = types.BytesType
		default:
			t = types.StringType
		}
	case "integer":
		t = types.IntType
	case "number":
		t = types.DoubleType
	case "boolean":
		t = types.BoolType
	default:
		t = types.DynType
	}
	p.byNode[n] = t
	return t
}

func (p *schemaTypes) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.objects[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Registry.FindStructType(name)
}

func (p *schemaTypes) FindStructFieldNames(name string) ([]string, bool) {
	if fields, ok := p.objects[name]; ok {
		var out []string
		for k := range fields {
			out = append(out, k)
		}
		return out, true
	}
	return p.Registry.FindStructFieldNames(name)
}

func (p *schemaTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if fields, ok := p.objects[name]; ok {
		t, ok := fields[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	return p.Registry.FindStructFieldType(name, field)
}

// envFor returns the environment for rules of node n (self typed as n).
func (p *schemaTypes) envFor(n *structural.Node) (*cel.Env, error) {
	t := p.byNode[n]
	if t == nil {
		t = types.DynType
	}
	return libEnv.Extend(cel.CustomTypeProvider(p), cel.Variable("self", t), cel.Variable("oldSelf", t))
}
