package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// This file turns Go API types into a version-neutral schema model by
// reflection. The rules follow what upstream's openapi-gen does with the
// same types:
//
//   - a struct type becomes a named definition and is referenced, never inlined
//     (except embedded members tagged `json:",inline"`, whose fields are merged);
//   - named scalar types (e.g. corev1.RestartPolicy) collapse to their kind;
//   - types that declare OpenAPISchemaType/OpenAPISchemaFormat (Quantity,
//     IntOrString, metav1.Time, ...) are opaque definitions with that type;
//   - a member is required when its json tag has no omitempty, unless a
//     +optional/+required marker says otherwise;
//   - a non-pointer struct member gets `default: {}` and a non-omitempty scalar
//     member its zero value (v3 only; upstream prunes defaults from v2), unless
//     the type unmarshals itself (custom UnmarshalJSON); +default markers win;
//   - descriptions come from the types' SwaggerDoc() maps, or from the doc
//     comments for types without one;
//   - patch strategy and merge key come from the struct tags.
//
// What only the comment markers of the upstream types say (+optional,
// +listType, +listMapKey, +mapType, +structType, +default, +enum, unions,
// doc comments) comes from the table gen_markers.go generates
// (zz_generated_markers.go). Go types outside that table (e.g. a test's own
// types) get only what reflection can see.

// schema is one node of a JSON schema, independent of the OpenAPI version.
type schema struct {
	ref         string // name of the referenced definition; other fields then only annotate the use
	typ         string
	format      string
	description string
	def         any
	hasDef      bool
	items       *schema
	additional  *schema
	properties  map[string]*schema
	required    []string
	oneOfTypes  []string // v3 only: alternatives replacing typ (Quantity, IntOrString)
	enum        []string
	ext         map[string]any
	// raw, when set, is a literal (JSON-decoded) OpenAPI v3 schema used as is,
	// e.g. for a custom resource; refs inside it use the v3 form and are
	// rewritten for v2.
	raw map[string]any
	// rawV2, when set with raw, is what OpenAPI v2 shows instead of raw
	// (a custom resource's schema made digestible for kubectl, as
	// upstream publishes it).
	rawV2 map[string]any
}

func (s *schema) setExt(k string, v any) {
	if s.ext == nil {
		s.ext = map[string]any{}
	}
	s.ext[k] = v
}

// GVK identifies a kind; it is the value of x-kubernetes-group-version-kind.
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type definition struct {
	name   string
	typ    reflect.Type // nil for definitions not built from a Go type
	schema *schema
	gvks   []GVK
	// allServedGVs marks meta kinds (DeleteOptions, WatchEvent) that are
	// registered in every served group version.
	allServedGVs bool
}

func (d *definition) addGVK(g GVK) {
	for _, x := range d.gvks {
		if x == g {
			return
		}
	}
	d.gvks = append(d.gvks, g)
}

// model holds every definition reachable from the served resources.
type model struct {
	defs    map[string]*definition
	names   map[reflect.Type]string
	markers *markerTable
}

func newModel() (*model, error) {
	mt, err := loadMarkers()
	if err != nil {
		return nil, err
	}
	return &model{defs: map[string]*definition{}, names: map[reflect.Type]string{}, markers: mt}, nil
}

type swaggerDocer interface{ SwaggerDoc() map[string]string }

type modelNamer interface{ OpenAPIModelName() string }

// fieldExtensioner is implemented by API types outside the generated
// marker table (skiff's own, e.g. apiregistration/v1) to give their fields
// the extensions upstream's comment markers would (x-kubernetes-list-type,
// -list-map-keys, ...), keyed by JSON field name.
type fieldExtensioner interface {
	OpenAPIFieldExtensions() map[string]map[string]any
}

type schemaTyper interface{ OpenAPISchemaType() []string }

type schemaFormatter interface{ OpenAPISchemaFormat() string }

type v3OneOfTyper interface{ OpenAPIV3OneOfTypes() []string }

// asInterface returns a pointer to a zero value of t as an interface, so that
// both value and pointer receiver methods are visible.
func asInterface(t reflect.Type) any { return reflect.New(t).Interface() }

func swaggerDoc(t reflect.Type) map[string]string {
	if d, ok := asInterface(t).(swaggerDocer); ok {
		return d.SwaggerDoc()
	}
	return nil
}

// definitionName returns the upstream name of the definition of the struct
// type t: its OpenAPIModelName() when it has one, else the Go package path
// with the domain reversed ("k8s.io/api/core/v1" -> "io.k8s.api.core.v1")
// followed by the type name.
func definitionName(t reflect.Type) string {
	if n, ok := asInterface(t).(modelNamer); ok {
		if name := n.OpenAPIModelName(); name != "" {
			return name
		}
	}
	return canonicalPackage(t.PkgPath()) + "." + t.Name()
}

func canonicalPackage(pkg string) string {
	parts := strings.Split(pkg, "/")
	dom := strings.Split(parts[0], ".")
	for i, j := 0, len(dom)-1; i < j; i, j = i+1, j-1 {
		dom[i], dom[j] = dom[j], dom[i]
	}
	parts[0] = strings.Join(dom, ".")
	return strings.Join(parts, ".")
}

func isOpaque(t reflect.Type) bool {
	_, ok := asInterface(t).(schemaTyper)
	return ok
}

func hasCustomUnmarshal(t reflect.Type) bool {
	_, ok := reflect.PointerTo(t).MethodByName("UnmarshalJSON")
	return ok
}

// refFor registers (building it on first use) the definition of struct type t
// and returns its name.
func (m *model) refFor(t reflect.Type) (string, error) {
	if name, ok := m.names[t]; ok {
		return name, nil
	}
	name := definitionName(t)
	if d, ok := m.defs[name]; ok {
		if d.typ != t {
			return "", fmt.Errorf("openapi: types %v and %v both map to definition %q", d.typ, t, name)
		}
		return name, nil
	}
	d := &definition{name: name, typ: t}
	m.defs[name] = d
	m.names[t] = name
	s, err := m.definitionSchema(t)
	if err != nil {
		return "", err
	}
	d.schema = s
	if g, ok := builtinGVK(t); ok {
		d.addGVK(g)
	}
	if t.PkgPath() == metaV1Pkg && (t.Name() == "DeleteOptions" || t.Name() == "WatchEvent") {
		d.allServedGVs = true
	}
	return name, nil
}

const metaV1Pkg = "k8s.io/apimachinery/pkg/apis/meta/v1"

func (m *model) definitionSchema(t reflect.Type) (*schema, error) {
	doc := swaggerDoc(t)
	tm := m.markers.Types[typeKey(t)]
	if doc[""] == "" && tm.Doc != "" {
		doc = map[string]string{"": tm.Doc}
	}
	s, err := m.definitionSchemaWithDoc(t, doc[""])
	if err != nil {
		return nil, err
	}
	for k, v := range tm.Ext {
		s.setExt(k, v)
	}
	return s, nil
}

func (m *model) definitionSchemaWithDoc(t reflect.Type, description string) (*schema, error) {
	if typer, ok := asInterface(t).(schemaTyper); ok {
		s := &schema{description: description}
		if types := typer.OpenAPISchemaType(); len(types) == 1 {
			s.typ = types[0]
		}
		if f, ok := asInterface(t).(schemaFormatter); ok {
			s.format = f.OpenAPISchemaFormat()
		}
		if o, ok := asInterface(t).(v3OneOfTyper); ok {
			s.oneOfTypes = o.OpenAPIV3OneOfTypes()
		}
		return s, nil
	}
	s := &schema{typ: "object", description: description, properties: map[string]*schema{}}
	if err := m.addMembers(t, s); err != nil {
		return nil, err
	}
	if len(s.properties) == 0 {
		s.properties = nil
	}
	return s, nil
}

type jsonTag struct {
	name      string
	omitEmpty bool
	asString  bool
	present   bool
}

func parseJSONTag(f reflect.StructField) jsonTag {
	tag, ok := f.Tag.Lookup("json")
	if !ok {
		return jsonTag{}
	}
	parts := strings.Split(tag, ",")
	jt := jsonTag{name: parts[0], present: true}
	for _, o := range parts[1:] {
		switch o {
		case "omitempty", "omitzero":
			jt.omitEmpty = true
		case "string":
			jt.asString = true
		}
	}
	return jt
}

// addMembers adds the json-visible fields of struct type t to s, merging
// inline embedded structs.
func (m *model) addMembers(t reflect.Type, s *schema) error {
	doc := swaggerDoc(t)
	fms := m.markers.Fields[typeKey(t)]
	var exts map[string]map[string]any
	if fe, ok := asInterface(t).(fieldExtensioner); ok {
		exts = fe.OpenAPIFieldExtensions()
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jt := parseJSONTag(f)
		if jt.name == "-" && jt.present && !strings.HasPrefix(f.Tag.Get("json"), "-,") {
			continue
		}
		if f.Anonymous && jt.name == "" {
			et := f.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if err := m.addMembers(et, s); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name := jt.name
		if name == "" {
			name = f.Name
		}
		fm := fms[name]
		if fm.Skip {
			continue
		}
		var p *schema
		if jt.asString {
			p = &schema{typ: "string"}
		} else {
			var err error
			p, err = m.valueSchema(f.Type)
			if err != nil {
				return fmt.Errorf("%v.%s: %w", t, f.Name, err)
			}
			if d, ok := enforcedDefault(f.Type, jt.omitEmpty); ok {
				p.def, p.hasDef = d, true
			}
			if fm.Default != nil {
				var d any
				if err := json.Unmarshal(fm.Default, &d); err == nil {
					p.def, p.hasDef = d, true
				}
			}
		}
		p.description = doc[name]
		if p.description == "" {
			p.description = fm.Doc
		}
		if e, ok := m.enumOf(f.Type); ok && !jt.asString {
			p.enum = e.Values
			if len(e.Lines) > 0 {
				lines := "Possible enum values:\n" + strings.Join(e.Lines, "\n")
				if p.description == "" {
					p.description = lines
				} else {
					p.description += "\n\n" + lines
				}
			}
		}
		if ps := f.Tag.Get("patchStrategy"); ps != "" {
			p.setExt("x-kubernetes-patch-strategy", ps)
		}
		if pk := f.Tag.Get("patchMergeKey"); pk != "" {
			p.setExt("x-kubernetes-patch-merge-key", pk)
		}
		for k, v := range fm.Ext {
			p.setExt(k, v)
		}
		for k, v := range exts[name] {
			p.setExt(k, v)
		}
		required := !jt.omitEmpty
		if fm.Required != nil {
			required = *fm.Required
		}
		if _, dup := s.properties[name]; !dup && required {
			s.required = append(s.required, name)
		}
		s.properties[name] = p
	}
	return nil
}

// enumOf returns the enum values of t (or *t) when it is an upstream +enum type.
func (m *model) enumOf(t reflect.Type) (enumMarkers, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" || t.Kind() != reflect.String {
		return enumMarkers{}, false
	}
	e, ok := m.markers.Enums[typeKey(t)]
	return e, ok
}

func typeKey(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

// valueSchema describes a value of type t (pointers are transparent).
func (m *model) valueSchema(t reflect.Type) (*schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(time.Time{}) {
		return &schema{typ: "string", format: "date-time"}, nil
	}
	if t.Kind() == reflect.Struct || (t.Name() != "" && isOpaque(t)) {
		name, err := m.refFor(t)
		if err != nil {
			return nil, err
		}
		return &schema{ref: name}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return &schema{typ: "string"}, nil
	case reflect.Bool:
		return &schema{typ: "boolean"}, nil
	case reflect.Int, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint16:
		return &schema{typ: "integer", format: "int32"}, nil
	case reflect.Int64, reflect.Uint32, reflect.Uint64:
		return &schema{typ: "integer", format: "int64"}, nil
	case reflect.Int8, reflect.Uint8:
		return &schema{typ: "integer", format: "byte"}, nil
	case reflect.Float32:
		return &schema{typ: "number", format: "float"}, nil
	case reflect.Float64:
		return &schema{typ: "number", format: "double"}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &schema{typ: "string", format: "byte"}, nil
		}
		items, err := m.elemSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &schema{typ: "array", items: items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key type %v is not a string", t.Key())
		}
		add, err := m.elemSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &schema{typ: "object", additional: add}, nil
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return &schema{typ: "object"}, nil
		}
		return &schema{}, nil
	}
	return nil, fmt.Errorf("unsupported type %v", t)
}

func (m *model) elemSchema(t reflect.Type) (*schema, error) {
	s, err := m.valueSchema(t)
	if err != nil {
		return nil, err
	}
	if d, ok := enforcedDefault(t, false); ok {
		s.def, s.hasDef = d, true
	}
	if e, ok := m.enumOf(t); ok {
		s.enum = e.Values
	}
	return s, nil
}

// enforcedDefault is the default upstream attaches to a use of type t: {} for
// value structs, the zero value for non-omitempty scalars.
func enforcedDefault(t reflect.Type, omitEmpty bool) (any, bool) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Array, reflect.Interface:
		return nil, false
	case reflect.Struct:
		if hasCustomUnmarshal(t) {
			return nil, false
		}
		if t.NumField() == 1 && t.Field(0).Anonymous {
			return enforcedDefault(t.Field(0).Type, omitEmpty)
		}
		return map[string]any{}, true
	}
	if omitEmpty {
		return nil, false
	}
	switch t.Kind() {
	case reflect.String:
		return "", true
	case reflect.Bool:
		return false, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return 0, true
	}
	return nil, false
}

// builtinGVK returns the kind a type of k8s.io/api (or meta/v1) is registered
// as: top-level types there embed TypeMeta.
func builtinGVK(t reflect.Type) (GVK, bool) {
	if !embedsTypeMeta(t) {
		return GVK{}, false
	}
	pkg := t.PkgPath()
	if pkg == metaV1Pkg {
		return GVK{Group: "", Version: "v1", Kind: t.Name()}, true
	}
	group, version, ok := builtinGroupVersion(pkg)
	if !ok {
		return GVK{}, false
	}
	return GVK{Group: group, Version: version, Kind: t.Name()}, true
}

func embedsTypeMeta(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Name() == "TypeMeta" && f.Type.PkgPath() == metaV1Pkg {
			return true
		}
	}
	return false
}

// builtinGroupVersion maps a package of k8s.io/api (or the apiextensions
// types) to its API group and version.
func builtinGroupVersion(pkg string) (group, version string, ok bool) {
	const apiPrefix = "k8s.io/api/"
	const extPrefix = "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/"
	if rest, found := strings.CutPrefix(pkg, extPrefix); found && !strings.Contains(rest, "/") {
		return "apiextensions.k8s.io", rest, true
	}
	rest, found := strings.CutPrefix(pkg, apiPrefix)
	if !found {
		return "", "", false
	}
	dir, version, found := strings.Cut(rest, "/")
	if !found || strings.Contains(version, "/") {
		return "", "", false
	}
	switch dir {
	case "core":
		return "", version, true
	case "apps", "autoscaling", "batch", "policy", "extensions":
		return dir, version, true
	case "rbac":
		return "rbac.authorization.k8s.io", version, true
	case "apiserverinternal":
		return "internal.apiserver.k8s.io", version, true
	case "flowcontrol":
		return "flowcontrol.apiserver.k8s.io", version, true
	}
	return dir + ".k8s.io", version, true
}

// gvkOf returns the kind an object type is served as when the caller did not
// say: a k8s.io/api type's registered kind.
func gvkOf(t reflect.Type) (GVK, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return builtinGVK(t)
}

// collectRefs adds to seen the names of all definitions s refers to,
// transitively.
func (m *model) collectRefs(s *schema, seen map[string]bool) {
	if s == nil {
		return
	}
	if s.ref != "" {
		m.collectDef(s.ref, seen)
	}
	m.collectRefs(s.items, seen)
	m.collectRefs(s.additional, seen)
	for _, p := range s.properties {
		m.collectRefs(p, seen)
	}
	if s.raw != nil {
		collectRawRefs(s.raw, func(name string) { m.collectDef(name, seen) })
	}
}

func (m *model) collectDef(name string, seen map[string]bool) {
	if seen[name] {
		return
	}
	seen[name] = true
	if d, ok := m.defs[name]; ok {
		m.collectRefs(d.schema, seen)
	}
}

const v3RefPrefix = "#/components/schemas/"

func collectRawRefs(v any, found func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "$ref" {
				if s, ok := e.(string); ok {
					found(strings.TrimPrefix(s, v3RefPrefix))
				}
				continue
			}
			collectRawRefs(e, found)
		}
	case []any:
		for _, e := range x {
			collectRawRefs(e, found)
		}
	}
}

// deepCopyJSON copies a JSON-decoded value.
func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyJSON(e)
		}
		return out
	case json.Number:
		return x
	}
	return v
}
