package policy

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"

	k8scel "github.com/skiff-sh/skiff/pkg/registry/customresource/cel"
	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
)

// maxTypesToCheck is upstream's limit of kinds a policy is checked
// against.
const maxTypesToCheck = 10

// TypeChecker is upstream's ValidatingAdmissionPolicy type checking: each
// validation's expression and messageExpression is compiled with object
// and oldObject typed from the schema of every kind the policy's
// resourceRules name explicitly (no wildcards; at most 10 kinds), and
// what does not compile becomes a status.typeChecking.expressionWarnings
// entry ("<group/version, Kind=kind>: compilation failed: ERROR: ...
// undefined field 'x'"). Kinds without a schema are not checked. params
// are typed from the paramKind's schema (dyn without one) and variables
// from their expressions, as upstream.
type TypeChecker struct {
	// Resources maps the rules' resources to kinds.
	Resources interface {
		KindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool)
	}
	// Schemas returns the server's OpenAPI v3 definitions (built-in kinds
	// and custom resources), with refs #/components/schemas/<name>.
	Schemas func() (map[string]*spec.Schema, error)

	mu    sync.Mutex
	defs  uintptr
	index map[schema.GroupVersionKind]string
	nodes map[schema.GroupVersionKind]*structural.Node
}

// Check returns the policy's expression warnings (nil when there are
// none).
func (c *TypeChecker) Check(p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	if c == nil {
		return nil
	}
	gvks := c.typesToCheck(p)
	if len(gvks) == 0 {
		return nil
	}
	var params *structural.Node
	hasParams := p.Spec.ParamKind != nil
	if hasParams {
		if gv, err := schema.ParseGroupVersion(p.Spec.ParamKind.APIVersion); err == nil {
			params = c.schemaFor(gv.WithKind(p.Spec.ParamKind.Kind))
		}
	}
	type typed struct {
		gvk schema.GroupVersionKind
		env *cel.Env
	}
	var envs []typed
	for _, gvk := range gvks {
		n := c.schemaFor(gvk)
		if n == nil {
			continue
		}
		env, err := typedEnv(n, hasParams, params, p.Spec.Variables)
		if err != nil {
			continue
		}
		envs = append(envs, typed{gvk, env})
	}
	var warnings []admissionregistrationv1.ExpressionWarning
	check := func(ref *field.Path, expr string) {
		var msgs []string
		for _, t := range envs {
			if _, iss := t.env.Compile(expr); iss.Err() != nil {
				msgs = append(msgs, fmt.Sprintf("%v: %s\n", t.gvk, "compilation failed: "+iss.String()))
			}
		}
		if len(msgs) > 0 {
			warnings = append(warnings, admissionregistrationv1.ExpressionWarning{FieldRef: ref.String(), Warning: strings.Join(msgs, "\n")})
		}
	}
	path := field.NewPath("spec", "validations")
	for i, v := range p.Spec.Validations {
		check(path.Index(i).Child("expression"), v.Expression)
		if v.MessageExpression != "" {
			check(path.Index(i).Child("messageExpression"), v.MessageExpression)
		}
	}
	return warnings
}

// variablesTypeName is the type of the variables object when type
// checking (upstream's composition type).
const variablesTypeName = "kubernetes.variables"

// typedEnv is the environment of one kind: object and oldObject typed
// from its schema, params from the paramKind's (dyn without one), and
// variables an object whose fields have the types of the variables'
// expressions (each compiled seeing the variables before it).
func typedEnv(n *structural.Node, hasParams bool, params *structural.Node, vars []admissionregistrationv1.Variable) (*cel.Env, error) {
	objP, objT := k8scel.SchemaProvider(n, "kubernetes.policy.object")
	ct := &combinedTypes{Registry: types.NewEmptyRegistry(), parts: []types.Provider{objP, &patchTypes{Registry: types.NewEmptyRegistry()}}, vars: map[string]*types.Type{}}
	paramsT := cel.DynType
	if params != nil {
		pp, pt := k8scel.SchemaProvider(params, "kubernetes.policy.params")
		ct.parts = append(ct.parts, pp)
		paramsT = pt
	}
	opts := append(k8scel.BaseEnvOptions(),
		cel.CustomTypeProvider(ct),
		cel.Variable(varObject, objT),
		cel.Variable(varOldObject, objT),
		cel.Variable(varRequest, cel.ObjectType(admissionRequestTypeName)),
		cel.Variable(varNamespaceObject, cel.ObjectType(namespaceTypeName)),
		cel.Variable(varAuthorizer, authorizerType),
		cel.Variable(varRequestResource, resourceCheckType),
		cel.Variable(varVariables, cel.ObjectType(variablesTypeName)),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
		authorizerLibrary(),
	)
	if hasParams {
		opts = append(opts, cel.Variable(varParams, paramsT))
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, err
	}
	for _, v := range vars {
		t := cel.DynType
		if ast, iss := env.Compile(v.Expression); iss.Err() == nil {
			t = ast.OutputType()
		}
		ct.vars[v.Name] = t
	}
	return env, nil
}

// combinedTypes resolves the object types of several schemas and the
// variables object.
type combinedTypes struct {
	*types.Registry
	parts []types.Provider
	vars  map[string]*types.Type
}

func (c *combinedTypes) FindStructType(name string) (*types.Type, bool) {
	if name == variablesTypeName {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	for _, p := range c.parts {
		if t, ok := p.FindStructType(name); ok {
			return t, true
		}
	}
	return c.Registry.FindStructType(name)
}

func (c *combinedTypes) FindStructFieldNames(name string) ([]string, bool) {
	if name == variablesTypeName {
		out := make([]string, 0, len(c.vars))
		for k := range c.vars {
			out = append(out, k)
		}
		return out, true
	}
	for _, p := range c.parts {
		if f, ok := p.FindStructFieldNames(name); ok {
			return f, true
		}
	}
	return c.Registry.FindStructFieldNames(name)
}

func (c *combinedTypes) FindStructFieldType(name, fieldName string) (*types.FieldType, bool) {
	if name == variablesTypeName {
		t, ok := c.vars[fieldName]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	for _, p := range c.parts {
		if _, ok := p.FindStructType(name); ok {
			return p.FindStructFieldType(name, fieldName)
		}
	}
	return c.Registry.FindStructFieldType(name, fieldName)
}

// typesToCheck is upstream's: the kinds of the resources the resource
// rules name without wildcards, sorted, at most maxTypesToCheck.
func (c *TypeChecker) typesToCheck(p *admissionregistrationv1.ValidatingAdmissionPolicy) []schema.GroupVersionKind {
	if p.Spec.MatchConstraints == nil || c.Resources == nil {
		return nil
	}
	noWildcard := func(items []string) []string {
		out := append([]string(nil), items...)
		for _, s := range out {
			if strings.Contains(s, "*") {
				return nil
			}
		}
		sort.Strings(out)
		return out
	}
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, r := range p.Spec.MatchConstraints.ResourceRules {
		groups, versions, resources := noWildcard(r.APIGroups), noWildcard(r.APIVersions), noWildcard(r.Resources)
		for _, g := range groups {
			for _, v := range versions {
				for _, res := range resources {
					if strings.Contains(res, "/") {
						continue
					}
					gvk, ok := c.Resources.KindFor(schema.GroupVersionResource{Group: g, Version: v, Resource: res})
					if !ok || seen[gvk] {
						continue
					}
					seen[gvk] = true
					out = append(out, gvk)
					if len(out) == maxTypesToCheck {
						return sortGVKs(out)
					}
				}
			}
		}
	}
	return sortGVKs(out)
}

func sortGVKs(l []schema.GroupVersionKind) []schema.GroupVersionKind {
	sort.Slice(l, func(i, j int) bool { return l[i].String() < l[j].String() })
	return l
}

// schemaFor returns the structural form of gvk's OpenAPI schema (nil if
// the server has none), cached per generation of the definitions.
func (c *TypeChecker) schemaFor(gvk schema.GroupVersionKind) *structural.Node {
	if c.Schemas == nil {
		return nil
	}
	defs, err := c.Schemas()
	if err != nil || defs == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id := reflect.ValueOf(defs).Pointer(); id != c.defs {
		c.defs = id
		c.index = map[schema.GroupVersionKind]string{}
		c.nodes = map[schema.GroupVersionKind]*structural.Node{}
		for name, s := range defs {
			gvks, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
			for _, x := range gvks {
				m, _ := x.(map[string]any)
				g, _ := m["group"].(string)
				v, _ := m["version"].(string)
				k, _ := m["kind"].(string)
				c.index[schema.GroupVersionKind{Group: g, Version: v, Kind: k}] = name
			}
		}
	}
	if n, ok := c.nodes[gvk]; ok {
		return n
	}
	name, ok := c.index[gvk]
	var n *structural.Node
	if ok {
		n = toNode(defs[name], defs, map[string]bool{name: true})
	}
	c.nodes[gvk] = n
	return n
}

// toNode converts an OpenAPI schema (refs resolved in defs; a recursive
// reference becomes an untyped node) to the structural form CEL typing
// uses.
func toNode(s *spec.Schema, defs map[string]*spec.Schema, visiting map[string]bool) *structural.Node {
	if s == nil {
		return &structural.Node{}
	}
	if ref := refName(s); ref != "" {
		target, ok := defs[ref]
		if !ok || visiting[ref] {
			return &structural.Node{}
		}
		visiting[ref] = true
		defer delete(visiting, ref)
		return toNode(target, defs, visiting)
	}
	n := &structural.Node{Format: s.Format, Nullable: s.Nullable}
	if len(s.Type) > 0 {
		n.Type = s.Type[0]
	}
	if b, ok := s.Extensions["x-kubernetes-preserve-unknown-fields"].(bool); ok && b {
		n.Preserve = true
	}
	if b, ok := s.Extensions["x-kubernetes-embedded-resource"].(bool); ok && b {
		n.Embedded = true
	}
	if b, ok := s.Extensions["x-kubernetes-int-or-string"].(bool); ok && b {
		n.IntOrString = true
		n.Type = ""
	}
	if len(s.Properties) > 0 {
		n.Props = make(map[string]*structural.Node, len(s.Properties))
		for k, p := range s.Properties {
			p := p
			n.Props[k] = toNode(&p, defs, visiting)
		}
		if n.Type == "" {
			n.Type = "object"
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		n.Items = toNode(s.Items.Schema, defs, visiting)
	}
	if ap := s.AdditionalProperties; ap != nil {
		if ap.Schema != nil {
			n.Additional = toNode(ap.Schema, defs, visiting)
		} else if ap.Allows {
			n.AdditionalAllowed = true
		}
	}
	return n
}

// refName is the definition a schema refers to: $ref, or the one-element
// allOf upstream's v3 documents use to attach a description.
func refName(s *spec.Schema) string {
	r := s.Ref.String()
	if r == "" && len(s.AllOf) == 1 && len(s.Properties) == 0 {
		r = s.AllOf[0].Ref.String()
	}
	for _, prefix := range []string{"#/components/schemas/", "#/definitions/"} {
		if strings.HasPrefix(r, prefix) {
			return strings.TrimPrefix(r, prefix)
		}
	}
	return ""
}
