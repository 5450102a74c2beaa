package openapi

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// build turns resources into the model behind all documents.
func build(info Info, resources []Resource) (*state, error) {
	m, err := newModel()
	if err != nil {
		return nil, err
	}
	std := standardParams()
	sets := map[string]*pathSet{}
	docs := map[string]*gvDoc{}
	type gv struct{ group, version string }
	served := map[gv]bool{}

	// Definitions every document may refer to.
	for _, v := range []any{metav1.Status{}, metav1.DeleteOptions{}, metav1.Patch{}, metav1.WatchEvent{}, metav1.APIResourceList{}} {
		if _, err := m.refFor(reflect.TypeOf(v)); err != nil {
			return nil, err
		}
	}

	for i := range resources {
		r := &resources[i]
		if err := validate(r); err != nil {
			return nil, err
		}
		key := gvKey(r.Group, r.Version)
		ps := sets[key]
		if ps == nil {
			ps = &pathSet{paths: map[string]*pathItem{}, std: std}
			sets[key] = ps
			docs[key] = &gvDoc{key: key, group: r.Group, version: r.Version, paths: ps.paths}
			served[gv{r.Group, r.Version}] = true
		}
		names, err := resourceDefinitions(m, r)
		if err != nil {
			return nil, err
		}
		subs, err := subresourceDefinitions(m, r, names)
		if err != nil {
			return nil, err
		}
		ps.addResource(r, names, subs)
	}
	for _, d := range docs {
		if dups := sets[d.key].dups; len(dups) > 0 {
			return nil, fmt.Errorf("openapi: operations declared twice: %s", strings.Join(dups, ", "))
		}
		sets[d.key].addDiscovery(d.group, d.version)
		for _, pi := range d.paths {
			pi.hoistCommonParams()
		}
	}

	// Meta kinds registered in every group version.
	var all []gv
	for g := range served {
		all = append(all, g)
	}
	for _, d := range m.defs {
		if d.allServedGVs && d.typ != nil {
			for _, g := range all {
				d.addGVK(GVK{Group: g.group, Version: g.version, Kind: d.typ.Name()})
			}
		}
		sort.Slice(d.gvks, func(i, j int) bool {
			a, b := d.gvks[i], d.gvks[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
	}

	st := &state{info: info, model: m, docs: docs}
	st.defs = &Definitions{st: st}
	for k := range docs {
		st.keys = append(st.keys, k)
	}
	sort.Strings(st.keys)
	return st, nil
}

func structType(obj any) (reflect.Type, bool) {
	t := reflect.TypeOf(obj)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, t != nil && t.Kind() == reflect.Struct
}

// resourceDefinitions registers the object and list definitions of r.
func resourceDefinitions(m *model, r *Resource) (resourceNames, error) {
	gvk := GVK{Group: r.Group, Version: r.Version, Kind: r.Kind}
	names := resourceNames{gvk: gvk}
	if r.Schema != nil {
		return customResourceDefinitions(m, r)
	}
	t, ok := structType(r.Object)
	if !ok {
		return names, errorf(r, "Object %T is not a pointer to a struct", r.Object)
	}
	var err error
	if names.object, err = m.refFor(t); err != nil {
		return names, err
	}
	m.defs[names.object].addGVK(gvk)
	needList := false
	for _, v := range r.Verbs {
		needList = needList || v == "list"
	}
	if r.List == nil {
		if needList {
			return names, errorf(r, "verb list needs List")
		}
		return names, nil
	}
	lt, ok := structType(r.List)
	if !ok {
		return names, errorf(r, "List %T is not a pointer to a struct", r.List)
	}
	if names.list, err = m.refFor(lt); err != nil {
		return names, err
	}
	m.defs[names.list].addGVK(GVK{Group: r.Group, Version: r.Version, Kind: r.Kind + "List"})
	return names, nil
}

func subresourceDefinitions(m *model, r *Resource, parent resourceNames) ([]subNames, error) {
	var out []subNames
	for i := range r.Subresources {
		s := &r.Subresources[i]
		sn := subNames{sub: s}
		switch {
		case s.Object == nil:
			// the parent's own type, as for status
			sn.object, sn.gvk = parent.object, parent.gvk
		default:
			t, ok := structType(s.Object)
			if !ok {
				return nil, errorf(r, "subresource %s: Object %T is not a pointer to a struct", s.Name, s.Object)
			}
			name, err := m.refFor(t)
			if err != nil {
				return nil, err
			}
			sn.object = name
			switch {
			case s.Kind != "":
				sn.gvk = GVK{Group: s.Group, Version: s.Version, Kind: s.Kind}
			case name == parent.object:
				sn.gvk = parent.gvk
			default:
				g, ok := gvkOf(t)
				if !ok {
					return nil, errorf(r, "subresource %s: cannot tell the kind of %v; set Group, Version and Kind", s.Name, t)
				}
				sn.gvk = g
			}
			m.defs[name].addGVK(sn.gvk)
		}
		if s.Kind != "" && s.Object == nil {
			sn.gvk = GVK{Group: s.Group, Version: s.Version, Kind: s.Kind}
		}
		out = append(out, sn)
	}
	return out, nil
}

// customResourceDefinitions registers definitions for a resource described by
// a literal OpenAPI v3 schema, the way upstream publishes custom resources.
func customResourceDefinitions(m *model, r *Resource) (resourceNames, error) {
	gvk := GVK{Group: r.Group, Version: r.Version, Kind: r.Kind}
	names := resourceNames{gvk: gvk}
	objectMeta, err := m.refFor(reflect.TypeOf(metav1.ObjectMeta{}))
	if err != nil {
		return names, err
	}
	listMeta, err := m.refFor(reflect.TypeOf(metav1.ListMeta{}))
	if err != nil {
		return names, err
	}
	typeDoc := metav1.TypeMeta{}.SwaggerDoc()

	withMeta := func(raw map[string]any) map[string]any {
		if _, ok := raw["type"]; !ok {
			raw["type"] = "object"
		}
		props, _ := raw["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			raw["properties"] = props
		}
		props["apiVersion"] = map[string]any{"type": "string", "description": typeDoc["apiVersion"]}
		props["kind"] = map[string]any{"type": "string", "description": typeDoc["kind"]}
		props["metadata"] = map[string]any{
			"allOf":       []any{map[string]any{"$ref": v3RefPrefix + objectMeta}},
			"description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		}
		return raw
	}
	user, _ := deepCopyJSON(r.Schema).(map[string]any)
	if user == nil {
		user = map[string]any{}
	}
	raw := withMeta(user)
	// OpenAPI v2 (what kubectl validates and explains with) gets upstream's
	// v2 form: a schema that preserves unknown fields at its root is just
	// an object (any property kubectl saw declared would make it refuse the
	// others), and below the root the constructs kubectl cannot handle are
	// dropped (openAPIV2Schema).
	var rawV2 map[string]any
	if pu, _ := r.Schema["x-kubernetes-preserve-unknown-fields"].(bool); pu || r.Schema == nil {
		rawV2 = map[string]any{"type": "object"}
	} else {
		v2Schema, _ := deepCopyJSON(r.Schema).(map[string]any)
		rawV2 = withMeta(openAPIV2Schema(v2Schema))
	}
	names.object = crdDefinitionName(r.Group, r.Version, r.Kind)
	if d, ok := m.defs[names.object]; ok && d.typ != nil {
		return names, errorf(r, "definition %q already exists", names.object)
	}
	obj := &definition{name: names.object, schema: &schema{raw: raw, rawV2: rawV2}}
	obj.addGVK(gvk)
	m.defs[names.object] = obj

	names.list = crdDefinitionName(r.Group, r.Version, r.Kind+"List")
	list := &definition{name: names.list, schema: &schema{
		typ:         "object",
		description: r.Kind + "List is a list of " + r.Kind,
		properties: map[string]*schema{
			"apiVersion": {typ: "string", description: typeDoc["apiVersion"]},
			"kind":       {typ: "string", description: typeDoc["kind"]},
			"metadata":   {ref: listMeta, description: "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"},
			"items": {typ: "array", description: "List of " + r.Resource + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				items: &schema{ref: names.object}},
		},
		required: []string{"items"},
	}}
	list.addGVK(GVK{Group: r.Group, Version: r.Version, Kind: r.Kind + "List"})
	m.defs[names.list] = list
	return names, nil
}

// openAPIV2Schema rewrites a custom resource's structural schema (JSON
// form, modified in place) as upstream publishes it in OpenAPI v2 for
// kubectl: no allOf/oneOf/anyOf/not; a nullable node loses its type,
// nullable, items and properties; a node preserving unknown fields loses
// its items and properties, and its type when object; an array without
// items loses its type; nullable properties are not required.
func openAPIV2Schema(s map[string]any) map[string]any {
	if s == nil {
		return nil
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf", "not"} {
		delete(s, k)
	}
	if n, _ := s["nullable"].(bool); n {
		delete(s, "type")
		delete(s, "nullable")
		delete(s, "items")
		delete(s, "properties")
	}
	pu, _ := s["x-kubernetes-preserve-unknown-fields"].(bool)
	if pu {
		delete(s, "items")
		delete(s, "properties")
	}
	if _, ok := s["items"]; !ok && s["type"] == "array" {
		delete(s, "type")
	}
	if pu && s["type"] == "object" {
		delete(s, "type")
	}
	props, _ := s["properties"].(map[string]any)
	if req, ok := s["required"].([]any); ok && props != nil {
		kept := req[:0]
		for _, r := range req {
			name, _ := r.(string)
			if p, _ := props[name].(map[string]any); p != nil {
				if n, _ := p["nullable"].(bool); n {
					continue
				}
			}
			kept = append(kept, r)
		}
		s["required"] = kept
		if len(kept) == 0 {
			delete(s, "required")
		}
	}
	if ap, _ := s["additionalProperties"].(map[string]any); ap != nil {
		if n, _ := ap["nullable"].(bool); n {
			delete(s, "required")
		}
	}
	for k, p := range props {
		if ps, ok := p.(map[string]any); ok {
			props[k] = openAPIV2Schema(ps)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		s["items"] = openAPIV2Schema(items)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		s["additionalProperties"] = openAPIV2Schema(ap)
	}
	return s
}
