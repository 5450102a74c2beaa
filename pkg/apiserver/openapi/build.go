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

	raw, _ := deepCopyJSON(r.Schema).(map[string]any)
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
	names.object = crdDefinitionName(r.Group, r.Version, r.Kind)
	if d, ok := m.defs[names.object]; ok && d.typ != nil {
		return names, errorf(r, "definition %q already exists", names.object)
	}
	obj := &definition{name: names.object, schema: &schema{raw: raw}}
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
