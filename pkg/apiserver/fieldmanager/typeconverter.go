package fieldmanager

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// typeConverter is managedfields' TypeConverter over the OpenAPI
// definitions, with one difference: a typed Go object (a k8s.io/api type,
// never a custom resource's unstructured content) becomes a TypedValue
// without the schema validation walk. The schemas are generated from those
// same Go types, so the walk cannot fail on them; it was a tenth of the API
// server's CPU under a kubelet's status updates (every update converts the
// live and the new object). Unstructured content (custom resources, apply
// patches) is validated as upstream's converter does.
type typeConverter struct {
	types map[schema.GroupVersionKind]*typed.ParseableType
}

var _ managedfields.TypeConverter = (*typeConverter)(nil)

func newTypeConverter(schemas map[string]*spec.Schema) (managedfields.TypeConverter, error) {
	s, err := schemaconv.ToSchemaFromOpenAPI(schemas, false)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: building types from the OpenAPI definitions: %w", err)
	}
	parser := &typed.Parser{Schema: smdschema.Schema{Types: s.Types}}
	c := &typeConverter{types: map[schema.GroupVersionKind]*typed.ParseableType{}}
	for name, def := range schemas {
		for _, gvk := range gvksOf(def.Extensions) {
			pt := parser.Type(name)
			c.types[gvk] = &pt
		}
	}
	return c, nil
}

// gvksOf reads a definition's x-kubernetes-group-version-kind list.
func gvksOf(ext spec.Extensions) []schema.GroupVersionKind {
	list, _ := ext["x-kubernetes-group-version-kind"].([]any)
	var out []schema.GroupVersionKind
	for _, item := range list {
		var g, v, k any
		switch m := item.(type) {
		case map[string]any:
			g, v, k = m["group"], m["version"], m["kind"]
		case map[any]any:
			g, v, k = m["group"], m["version"], m["kind"]
		default:
			continue
		}
		group, ok1 := g.(string)
		version, ok2 := v.(string)
		kind, ok3 := k.(string)
		if ok1 && ok2 && ok3 && kind != "" {
			out = append(out, schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
		}
	}
	return out
}

func (c *typeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	t := c.types[gvk]
	if t == nil {
		// managedfields counts a not-registered error as a missing version
		// (as its own "no corresponding type" error, which only its
		// internal package can make)
		return nil, runtime.NewNotRegisteredErrForKind("skiff", gvk)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return t.FromUnstructured(u.UnstructuredContent(), opts...)
	}
	v, err := value.NewValueReflect(obj)
	if err != nil {
		return nil, fmt.Errorf("error creating struct value reflector: %w", err)
	}
	return typed.AsTypedUnvalidated(v, t.Schema, t.TypeRef), nil //nolint:staticcheck // the walk is redundant for Go types, see above
}

func (c *typeConverter) TypedToObject(tv *typed.TypedValue) (runtime.Object, error) {
	u := tv.AsValue().Unstructured()
	m, ok := u.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("failed to convert value to unstructured for type %T", u)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
