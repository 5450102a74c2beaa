package structural

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/util/json"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Node is one level of a structural schema: what pruning, defaulting,
// list-type checks and CEL need.
type Node struct {
	Props map[string]*Node
	Items *Node
	// Additional is the additionalProperties schema; AdditionalAllowed is
	// additionalProperties: true without one.
	Additional        *Node
	AdditionalAllowed bool
	Type              string
	Format            string
	Nullable          bool
	Preserve          bool // x-kubernetes-preserve-unknown-fields
	Embedded          bool // x-kubernetes-embedded-resource
	IntOrString       bool // x-kubernetes-int-or-string
	ListType          string
	ListMapKeys       []string
	MapType           string
	HasDefault        bool
	Default           any
	Source            *apiextensionsv1.JSONSchemaProps // the schema this node was built from
}

// Schema is a compiled schema of one version.
type Schema struct {
	Root *Node
	// Spec is the kube-openapi form (also what SSA and OpenAPI consume).
	Spec      *spec.Schema
	validator *validate.SchemaValidator
	// status validates .status alone (the status subresource).
	status *validate.SchemaValidator
}

// HasDefaults reports whether the schema declares any default.
func (s *Schema) HasDefaults() bool { return hasDefaults(s.Root) }

func hasDefaults(n *Node) bool {
	if n == nil {
		return false
	}
	if n.HasDefault || hasDefaults(n.Items) || hasDefaults(n.Additional) {
		return true
	}
	for _, p := range n.Props {
		if hasDefaults(p) {
			return true
		}
	}
	return false
}

// New compiles props (a valid structural schema).
func New(props *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
	if props == nil {
		props = &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}
	}
	root, err := newNode(props)
	if err != nil {
		return nil, err
	}
	sp, err := ToSpec(props)
	if err != nil {
		return nil, err
	}
	s := &Schema{Root: root, Spec: sp, validator: validate.NewSchemaValidator(sp, nil, "", strfmt.Default)}
	if st, ok := sp.Properties["status"]; ok {
		s.status = validate.NewSchemaValidator(&st, nil, "", strfmt.Default)
	}
	return s, nil
}

func ptr[T any](v T) *T { return &v }

func newNode(p *apiextensionsv1.JSONSchemaProps) (*Node, error) {
	n := &Node{Type: p.Type, Format: p.Format, Nullable: p.Nullable, Embedded: p.XEmbeddedResource,
		IntOrString: p.XIntOrString, ListMapKeys: p.XListMapKeys, Source: p}
	if p.XPreserveUnknownFields != nil {
		n.Preserve = *p.XPreserveUnknownFields
	}
	if p.XListType != nil {
		n.ListType = *p.XListType
	}
	if p.XMapType != nil {
		n.MapType = *p.XMapType
	}
	if p.Default != nil {
		var v any
		if err := kjson.Unmarshal(p.Default.Raw, &v); err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		n.HasDefault, n.Default = true, v
	}
	if len(p.Properties) > 0 {
		n.Props = make(map[string]*Node, len(p.Properties))
		for k := range p.Properties {
			sub := p.Properties[k]
			c, err := newNode(&sub)
			if err != nil {
				return nil, err
			}
			n.Props[k] = c
		}
	}
	if p.Items != nil && p.Items.Schema != nil {
		c, err := newNode(p.Items.Schema)
		if err != nil {
			return nil, err
		}
		n.Items = c
	}
	if ap := p.AdditionalProperties; ap != nil {
		if ap.Schema != nil {
			c, err := newNode(ap.Schema)
			if err != nil {
				return nil, err
			}
			n.Additional = c
		} else if ap.Allows {
			n.AdditionalAllowed = true
		}
	}
	return n, nil
}

// supportedFormats are the string formats upstream validates (others are
// dropped from the schema before validation).
var supportedFormats = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`bsonobjectid uri email hostname ipv4 ipv6 cidr mac uuid uuid3 uuid4 uuid5
		isbn isbn10 isbn13 creditcard ssn hexcolor rgbcolor byte password date duration datetime k8sshortname k8slongname`) {
		supportedFormats[f] = true
	}
}

// ToSpec converts a v1 schema to kube-openapi's form as upstream does for
// validation: x-kubernetes-int-or-string becomes type [integer, string];
// formats upstream does not support are dropped.
func ToSpec(props *apiextensionsv1.JSONSchemaProps) (*spec.Schema, error) {
	data, err := json.Marshal(props)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	fixSchema(m)
	data, err = json.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := &spec.Schema{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	return out, nil
}

func fixSchema(m map[string]any) {
	typ, _ := m["type"].(string)
	if b, _ := m["x-kubernetes-int-or-string"].(bool); b {
		m["type"] = []any{"integer", "string"}
		typ = ""
	}
	if f, ok := m["format"].(string); ok && f != "" {
		keep := false
		switch typ {
		case "", "string":
			keep = supportedFormats[strings.ReplaceAll(f, "-", "")]
		case "integer":
			keep = f == "int32" || f == "int64"
		case "number":
			keep = f == "float" || f == "double"
		}
		if !keep {
			delete(m, "format")
		}
	}
	for _, k := range []string{"properties", "patternProperties", "definitions"} {
		if ps, ok := m[k].(map[string]any); ok {
			for _, v := range ps {
				if sub, ok := v.(map[string]any); ok {
					fixSchema(sub)
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "additionalItems", "not"} {
		switch v := m[k].(type) {
		case map[string]any:
			fixSchema(v)
		case []any:
			for _, e := range v {
				if sub, ok := e.(map[string]any); ok {
					fixSchema(sub)
				}
			}
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := m[k].([]any); ok {
			for _, e := range list {
				if sub, ok := e.(map[string]any); ok {
					fixSchema(sub)
				}
			}
		}
	}
}

// Validate checks obj (a whole object) against the schema: value
// validations, embedded resources and list types. With statusOnly, the
// value validations apply to .status alone (the status subresource).
func (s *Schema) Validate(obj map[string]any, statusOnly bool) field.ErrorList {
	return append(s.ValidateValues(obj, statusOnly), s.ValidateStructure(obj)...)
}

// ValidateValues runs the OpenAPI value validations.
func (s *Schema) ValidateValues(obj map[string]any, statusOnly bool) field.ErrorList {
	if statusOnly {
		if st, ok := obj["status"]; ok && s.status != nil {
			return resultToFieldErrors(field.NewPath("status"), s.status.Validate(st))
		}
		return nil
	}
	return resultToFieldErrors(nil, s.validator.Validate(obj))
}

// ValidateStructure checks embedded resources and list types.
func (s *Schema) ValidateStructure(obj map[string]any) field.ErrorList {
	return append(validateEmbedded(nil, obj, s.Root), validateListTypes(nil, s.Root, obj)...)
}

// resultToFieldErrors maps kube-openapi's errors to field errors as
// upstream's kubeOpenAPIResultToFieldErrors does.
func resultToFieldErrors(fldPath *field.Path, result *validate.Result) field.ErrorList {
	if result == nil || result.IsValid() {
		return nil
	}
	var errs field.ErrorList
	for _, err := range result.Errors {
		verr, ok := err.(*openapierrors.Validation)
		if !ok {
			errs = append(errs, field.Invalid(fldPath, "", err.Error()))
			continue
		}
		p := fldPath
		if len(verr.Name) > 0 && verr.Name != "." {
			p = p.Child(strings.TrimPrefix(verr.Name, "."))
		}
		value := any("")
		if verr.Value != nil {
			value = verr.Value
		}
		asInt := func(v any) int {
			if i, ok := v.(int64); ok {
				return int(i)
			}
			return -1
		}
		switch verr.Code() {
		case openapierrors.RequiredFailCode:
			errs = append(errs, field.Required(p, ""))
		case openapierrors.EnumFailCode:
			values := []string{}
			for _, v := range verr.Values {
				if s, ok := v.(string); ok {
					values = append(values, s)
				} else {
					b, _ := json.Marshal(v)
					values = append(values, string(b))
				}
			}
			errs = append(errs, field.NotSupported(p, verr.Value, values))
		case openapierrors.TooLongFailCode:
			errs = append(errs, field.TooLong(p, "", asInt(verr.Valid)))
		case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
			errs = append(errs, field.TooMany(p, asInt(verr.Value), asInt(verr.Valid)))
		case openapierrors.InvalidTypeCode:
			errs = append(errs, field.TypeInvalid(p, value, verr.Error()))
		default:
			errs = append(errs, field.Invalid(p, value, verr.Error()))
		}
	}
	return errs
}

// validateEmbedded checks x-kubernetes-embedded-resource objects as
// upstream's objectmeta validation.
func validateEmbedded(pth *field.Path, x any, n *Node) field.ErrorList {
	if n == nil {
		return nil
	}
	var errs field.ErrorList
	switch x := x.(type) {
	case map[string]any:
		if n.Embedded {
			errs = append(errs, validateEmbeddedResource(pth, x)...)
		}
		for _, k := range sortedKeys(x) {
			if p, ok := n.Props[k]; ok {
				errs = append(errs, validateEmbedded(pth.Child(k), x[k], p)...)
			} else if n.Additional != nil {
				errs = append(errs, validateEmbedded(pth.Key(k), x[k], n.Additional)...)
			}
		}
	case []any:
		for i, v := range x {
			errs = append(errs, validateEmbedded(pth.Index(i), v, n.Items)...)
		}
	}
	return errs
}

func validateEmbeddedResource(pth *field.Path, x map[string]any) field.ErrorList {
	var errs field.ErrorList
	if _, ok := x["apiVersion"]; !ok {
		errs = append(errs, field.Required(pth.Child("apiVersion"), ""))
	}
	if _, ok := x["kind"]; !ok {
		errs = append(errs, field.Required(pth.Child("kind"), ""))
	}
	for _, k := range sortedKeys(x) {
		v := x[k]
		switch k {
		case "apiVersion":
			if s, ok := v.(string); !ok {
				errs = append(errs, field.Invalid(pth.Child("apiVersion"), v, "must be a string"))
			} else if s == "" {
				errs = append(errs, field.Invalid(pth.Child("apiVersion"), s, "must not be empty"))
			} else if _, err := schema.ParseGroupVersion(s); err != nil {
				errs = append(errs, field.Invalid(pth.Child("apiVersion"), s, err.Error()))
			}
		case "kind":
			if s, ok := v.(string); !ok {
				errs = append(errs, field.Invalid(pth.Child("kind"), v, "must be a string"))
			} else if s == "" {
				errs = append(errs, field.Invalid(pth.Child("kind"), s, "must not be empty"))
			} else if e := utilvalidation.IsDNS1035Label(strings.ToLower(s)); len(e) > 0 {
				errs = append(errs, field.Invalid(pth.Child("kind"), s, "may have mixed case, but should otherwise match: "+strings.Join(e, ",")))
			}
		case "metadata":
			m, ok := v.(map[string]any)
			if !ok {
				errs = append(errs, field.Invalid(pth.Child("metadata"), v, "must be an object"))
				continue
			}
			var om metav1.ObjectMeta
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &om); err != nil {
				errs = append(errs, field.Invalid(pth.Child("metadata"), v, err.Error()))
				continue
			}
			if om.Name == "" {
				om.Name = "fakename"
			}
			errs = append(errs, validation.ValidateObjectMeta(&om, om.Namespace != "", path.ValidatePathSegmentName, pth.Child("metadata"))...)
		}
	}
	return errs
}

// validateListTypes checks x-kubernetes-list-type set and map uniqueness.
func validateListTypes(pth *field.Path, n *Node, x any) field.ErrorList {
	if n == nil {
		return nil
	}
	var errs field.ErrorList
	switch x := x.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if p, ok := n.Props[k]; ok {
				errs = append(errs, validateListTypes(pth.Child(k), p, x[k])...)
			} else if n.Additional != nil {
				errs = append(errs, validateListTypes(pth.Key(k), n.Additional, x[k])...)
			}
		}
	case []any:
		switch n.ListType {
		case "set":
			for _, i := range nonUnique(x) {
				errs = append(errs, field.Duplicate(pth.Index(i), x[i]))
			}
		case "map":
			errs = append(errs, validateListMap(pth, n, x)...)
		}
		for i := range x {
			errs = append(errs, validateListTypes(pth.Index(i), n.Items, x[i])...)
		}
	}
	return errs
}

type unspecified struct{}

func validateListMap(pth *field.Path, n *Node, x []any) field.ErrorList {
	for i, e := range x {
		if _, ok := e.(map[string]any); e != nil && !ok {
			return field.ErrorList{field.Invalid(pth.Index(i), e, "must be an object for an array of list-type map")}
		}
	}
	if len(x) <= 1 {
		return nil
	}
	var errs field.ErrorList
	if len(n.ListMapKeys) == 1 {
		key := n.ListMapKeys[0]
		keys := make([]any, 0, len(x))
		for _, e := range x {
			m, _ := e.(map[string]any)
			if v, ok := m[key]; ok {
				keys = append(keys, v)
			} else {
				keys = append(keys, unspecified{})
			}
		}
		for _, i := range nonUnique(keys) {
			if keys[i] == (unspecified{}) {
				errs = append(errs, field.Duplicate(pth.Index(i), map[string]any{}))
			} else {
				errs = append(errs, field.Duplicate(pth.Index(i), map[string]any{key: keys[i]}))
			}
		}
		return errs
	}
	keys := make([]any, 0, len(x))
	for _, e := range x {
		k := map[string]any{}
		m, _ := e.(map[string]any)
		for _, f := range n.ListMapKeys {
			if v, ok := m[f]; ok {
				k[f] = v
			}
		}
		keys = append(keys, k)
	}
	for _, i := range nonUnique(keys) {
		errs = append(errs, field.Duplicate(pth.Index(i), keys[i]))
	}
	return errs
}

// nonUnique returns the index of the second occurrence of every repeated
// value (compound values compared by their JSON).
func nonUnique(x []any) []int {
	if len(x) <= 1 {
		return nil
	}
	seen := map[any]int{}
	var out []int
	for i, v := range x {
		var key any = v
		switch v.(type) {
		case map[string]any, []any:
			b, _ := json.Marshal(v)
			key = "\x00json:" + string(b)
		}
		seen[key]++
		if seen[key] == 2 {
			out = append(out, i)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var metaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// Prune drops the fields of obj (a whole object) the schema does not
// declare and returns their paths ("spec.foo"), sorted.
func (s *Schema) Prune(obj map[string]any) []string {
	var unknown []string
	root := *s.Root
	root.Embedded = true
	prune(obj, &root, "", &unknown)
	sort.Strings(unknown)
	return unknown
}

func join(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}

func prune(x any, n *Node, path string, unknown *[]string) {
	if n != nil && n.Preserve {
		skipPrune(x, n, path, unknown)
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if n != nil && n.Embedded && metaFields[k] {
				if k == "metadata" {
					for _, f := range pruneMetadata(v) {
						*unknown = append(*unknown, join(join(path, "metadata"), f))
					}
				}
				continue
			}
			if n != nil {
				if p, ok := n.Props[k]; ok {
					prune(v, p, join(path, k), unknown)
					continue
				}
				if n.Additional != nil {
					prune(v, n.Additional, join(path, k), unknown)
					continue
				}
				if n.AdditionalAllowed {
					continue
				}
			}
			*unknown = append(*unknown, join(path, k))
			delete(x, k)
		}
	case []any:
		var items *Node
		if n != nil {
			items = n.Items
		}
		for i, v := range x {
			prune(v, items, fmt.Sprintf("%s[%d]", path, i), unknown)
		}
	}
}

func skipPrune(x any, n *Node, path string, unknown *[]string) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if n.Embedded && metaFields[k] {
				if k == "metadata" {
					for _, f := range pruneMetadata(v) {
						*unknown = append(*unknown, join(join(path, "metadata"), f))
					}
				}
				continue
			}
			if p, ok := n.Props[k]; ok {
				prune(v, p, join(path, k), unknown)
			} else if n.Additional != nil {
				prune(v, n.Additional, join(path, k), unknown)
			}
		}
	case []any:
		for i, v := range x {
			if n.Items != nil {
				prune(v, n.Items, fmt.Sprintf("%s[%d]", path, i), unknown)
			}
		}
	}
}

// pruneMetadata keeps only ObjectMeta's fields in the metadata of the
// object or of an embedded resource (upstream coerces it through
// ObjectMeta) and returns the dropped field names.
func pruneMetadata(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var dropped []string
	for k := range m {
		if !objectMetaFields[k] {
			delete(m, k)
			dropped = append(dropped, k)
		}
	}
	return dropped
}

// objectMetaFields are ObjectMeta's JSON field names.
var objectMetaFields = func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(metav1.ObjectMeta{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}()

func nonNullableNull(x any, n *Node) bool { return x == nil && n != nil && !n.Nullable }

// Default applies the schema's defaults to obj, as upstream's structural
// defaulting: absent (or null and non-nullable) properties with a default
// get a copy of it, then each value is defaulted by its own schema.
func (s *Schema) Default(obj map[string]any) { applyDefaults(obj, s.Root) }

func applyDefaults(x any, n *Node) {
	if n == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, p := range n.Props {
			if !p.HasDefault {
				continue
			}
			if v, found := x[k]; !found || nonNullableNull(v, p) {
				x[k] = runtime.DeepCopyJSONValue(p.Default)
			}
		}
		for k, v := range x {
			if p, ok := n.Props[k]; ok {
				applyDefaults(v, p)
			} else if n.Additional != nil {
				if nonNullableNull(v, n.Additional) && n.Additional.HasDefault {
					x[k] = runtime.DeepCopyJSONValue(n.Additional.Default)
				}
				applyDefaults(x[k], n.Additional)
			}
		}
	case []any:
		for i := range x {
			if n.Items != nil && nonNullableNull(x[i], n.Items) && n.Items.HasDefault {
				x[i] = runtime.DeepCopyJSONValue(n.Items.Default)
			}
			applyDefaults(x[i], n.Items)
		}
	}
}

// PruneNulls removes null values of non-nullable fields without a default
// (upstream does so before storing).
func (s *Schema) PruneNulls(obj map[string]any) { pruneNulls(obj, s.Root) }

func pruneNulls(x any, n *Node) {
	if n == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			var p *Node
			if q, ok := n.Props[k]; ok {
				p = q
			} else {
				p = n.Additional
			}
			if p == nil {
				continue
			}
			if v == nil && !p.Nullable && !p.HasDefault {
				delete(x, k)
				continue
			}
			pruneNulls(v, p)
		}
	case []any:
		for _, v := range x {
			pruneNulls(v, n.Items)
		}
	}
}

// Ratchet drops the errors of an update whose value is unchanged from the
// old object (upstream's CRDValidationRatcheting, on by default): a value
// that was stored before a schema became stricter may stay. Values are
// correlated through properties, map keys and list-type map keys; errors
// inside other lists are kept.
func (s *Schema) Ratchet(errs field.ErrorList, obj, old map[string]any) field.ErrorList {
	if old == nil || len(errs) == 0 {
		return errs
	}
	var out field.ErrorList
	for _, e := range errs {
		nv, nok, ov, ook, ok := correlate(s.Root, e.Field, obj, old)
		if ok && nok == ook && (!nok || reflect.DeepEqual(nv, ov)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// correlate finds the value at a field error path in obj and the
// correlated value in old. ok is false when the path cannot be correlated.
func correlate(root *Node, path string, obj, old map[string]any) (nv any, nok bool, ov any, ook bool, ok bool) {
	steps, parsed := parseFieldPath(path)
	if !parsed || len(steps) == 0 {
		return nil, false, nil, false, false
	}
	var cur, prev any = obj, old
	curOK, prevOK := true, true
	n := root
	for _, st := range steps {
		if st.index >= 0 {
			if n == nil || n.ListType != "map" {
				return nil, false, nil, false, false
			}
			l, _ := cur.([]any)
			if st.index >= len(l) {
				return nil, false, nil, false, false
			}
			item := l[st.index]
			pl, _ := prev.([]any)
			prevItem, found := findListMapItem(pl, item, n.ListMapKeys)
			cur, prev, prevOK = item, prevItem, prevOK && found
			n = n.Items
			continue
		}
		cm, _ := cur.(map[string]any)
		pm, _ := prev.(map[string]any)
		var found bool
		cur, found = cm[st.name]
		curOK = curOK && found
		prev, found = pm[st.name]
		prevOK = prevOK && found
		if n != nil {
			if p, isProp := n.Props[st.name]; isProp {
				n = p
			} else {
				n = n.Additional
			}
		}
	}
	return cur, curOK, prev, prevOK, true
}

func findListMapItem(list []any, item any, keys []string) (any, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return nil, false
	}
	for _, o := range list {
		om, ok := o.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for _, k := range keys {
			if !reflect.DeepEqual(m[k], om[k]) {
				match = false
				break
			}
		}
		if match {
			return o, true
		}
	}
	return nil, false
}

type pathStep struct {
	name  string
	index int // -1 for a name
}

// parseFieldPath splits a field.Path string ("spec.ports[0].name",
// "spec.labels[a.b/c]") into steps.
func parseFieldPath(p string) ([]pathStep, bool) {
	if p == "" || p == "<nil>" {
		return nil, false
	}
	var out []pathStep
	for p != "" {
		switch p[0] {
		case '.':
			p = p[1:]
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return nil, false
			}
			in := p[1:end]
			if n, err := strconv.Atoi(in); err == nil {
				out = append(out, pathStep{index: n})
			} else {
				out = append(out, pathStep{name: in, index: -1})
			}
			p = p[end+1:]
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			out = append(out, pathStep{name: p[:end], index: -1})
			p = p[end:]
		}
	}
	return out, true
}
