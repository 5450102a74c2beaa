package openapi

import (
	"strconv"
	"strings"
)

// Rendering of the model as OpenAPI v2 and v3 JSON values (maps, which
// encoding/json writes with sorted keys, as upstream's documents are).

const v2RefPrefix = "#/definitions/"

type version int

const (
	v2 version = iota
	v3
)

func refPrefix(v version) string {
	if v == v2 {
		return v2RefPrefix
	}
	return v3RefPrefix
}

// renderSchema renders one schema node.
func renderSchema(s *schema, v version) map[string]any {
	if s.raw != nil {
		src := s.raw
		if v == v2 && s.rawV2 != nil {
			src = s.rawV2
		}
		out, _ := deepCopyJSON(src).(map[string]any)
		if v == v2 {
			out = toV2Raw(out)
		}
		return out
	}
	out := map[string]any{}
	if s.description != "" {
		out["description"] = s.description
	}
	if s.hasDef && v == v3 {
		out["default"] = s.def
	}
	for k, e := range s.ext {
		out[k] = e
	}
	if s.ref != "" {
		ref := map[string]any{"$ref": refPrefix(v) + s.ref}
		if v == v2 {
			// v2 allows siblings of $ref (ignored by most tools).
			for k, e := range ref {
				out[k] = e
			}
			return out
		}
		if len(out) == 0 {
			return ref
		}
		out["allOf"] = []any{ref}
		return out
	}
	if v == v3 && s.oneOfTypes != nil {
		var alts []any
		for _, t := range s.oneOfTypes {
			alts = append(alts, map[string]any{"type": t})
		}
		out["oneOf"] = alts
	} else if s.typ != "" {
		out["type"] = s.typ
	}
	if s.format != "" {
		out["format"] = s.format
	}
	if len(s.enum) > 0 {
		enum := make([]any, len(s.enum))
		for i, e := range s.enum {
			enum[i] = e
		}
		out["enum"] = enum
	}
	if s.items != nil {
		out["items"] = renderSchema(s.items, v)
	}
	if s.additional != nil {
		out["additionalProperties"] = renderSchema(s.additional, v)
	}
	if s.properties != nil {
		props := make(map[string]any, len(s.properties))
		for name, p := range s.properties {
			props[name] = renderSchema(p, v)
		}
		out["properties"] = props
	}
	if len(s.required) > 0 {
		out["required"] = append([]string(nil), s.required...)
	}
	return out
}

func renderDefinition(d *definition, v version) map[string]any {
	out := renderSchema(d.schema, v)
	if len(d.gvks) > 0 {
		var gvks []any
		for _, g := range d.gvks {
			gvks = append(gvks, map[string]any{"group": g.Group, "version": g.Version, "kind": g.Kind})
		}
		out["x-kubernetes-group-version-kind"] = gvks
	}
	return out
}

// toV2Raw adapts a literal v3 schema to v2: refs point at #/definitions and
// the keywords v2 lacks are dropped, like upstream does for custom resources.
func toV2Raw(v map[string]any) map[string]any {
	out := map[string]any{}
	for k, e := range v {
		switch k {
		case "nullable", "oneOf", "anyOf", "not", "default":
			continue
		case "$ref":
			if s, ok := e.(string); ok {
				out[k] = v2RefPrefix + strings.TrimPrefix(s, v3RefPrefix)
				continue
			}
		}
		out[k] = toV2Value(e)
	}
	return out
}

func toV2Value(e any) any {
	switch x := e.(type) {
	case map[string]any:
		return toV2Raw(x)
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = toV2Value(y)
		}
		return out
	}
	return e
}

func renderParam(p param, v version) map[string]any {
	out := map[string]any{"name": p.name, "in": p.in}
	if p.description != "" {
		out["description"] = p.description
	}
	if p.required {
		out["required"] = true
	}
	if v == v2 {
		out["type"] = p.typ
		out["uniqueItems"] = true
	} else {
		out["schema"] = map[string]any{"type": p.typ, "uniqueItems": true}
	}
	return out
}

func renderParams(ps []param, v version) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, renderParam(p, v))
	}
	return out
}

func renderOperation(op *operation, v version) map[string]any {
	out := map[string]any{
		"operationId": op.id,
		"description": op.description,
		"tags":        []any{op.tag},
	}
	if op.action != "" {
		out["x-kubernetes-action"] = op.action
	}
	if op.gvk != nil {
		out["x-kubernetes-group-version-kind"] = map[string]any{"group": op.gvk.Group, "version": op.gvk.Version, "kind": op.gvk.Kind}
	}
	responses := map[string]any{}
	var params []any
	if v == v2 {
		out["consumes"] = op.consumes
		out["produces"] = op.produces
		out["schemes"] = []any{"https"}
		if op.bodyRef != "" {
			body := map[string]any{"in": "body", "name": "body", "schema": map[string]any{"$ref": v2RefPrefix + op.bodyRef}}
			if op.bodyRequired {
				body["required"] = true
			}
			params = append(params, body)
		}
		for _, r := range op.responses {
			resp := map[string]any{"description": r.description}
			if r.ref != "" {
				resp["schema"] = map[string]any{"$ref": v2RefPrefix + r.ref}
			}
			responses[strconv.Itoa(r.code)] = resp
		}
	} else {
		if op.bodyRef != "" {
			content := map[string]any{}
			for _, ct := range op.consumes {
				content[ct] = map[string]any{"schema": map[string]any{"$ref": v3RefPrefix + op.bodyRef}}
			}
			out["requestBody"] = map[string]any{"content": content}
		}
		for _, r := range op.responses {
			resp := map[string]any{"description": r.description}
			if r.ref != "" {
				content := map[string]any{}
				for _, ct := range op.produces {
					content[ct] = map[string]any{"schema": map[string]any{"$ref": v3RefPrefix + r.ref}}
				}
				resp["content"] = content
			}
			responses[strconv.Itoa(r.code)] = resp
		}
	}
	params = append(params, renderParams(op.params, v)...)
	if len(params) > 0 {
		out["parameters"] = params
	}
	out["responses"] = responses
	return out
}

func renderPathItem(pi *pathItem, v version) map[string]any {
	out := map[string]any{}
	for _, m := range []string{"get", "put", "post", "delete", "patch"} {
		if op, ok := pi.ops[m]; ok {
			out[m] = renderOperation(op, v)
		}
	}
	if len(pi.params) > 0 {
		out["parameters"] = renderParams(pi.params, v)
	}
	return out
}

// refsOfPaths returns every definition the operations of paths use, transitively.
func (m *model) refsOfPaths(paths map[string]*pathItem) map[string]bool {
	seen := map[string]bool{}
	for _, pi := range paths {
		for _, op := range pi.ops {
			if op.bodyRef != "" {
				m.collectDef(op.bodyRef, seen)
			}
			for _, r := range op.responses {
				if r.ref != "" {
					m.collectDef(r.ref, seen)
				}
			}
		}
	}
	return seen
}

func bearerScheme() map[string]any {
	return map[string]any{
		"BearerToken": map[string]any{
			"description": "Bearer Token authentication",
			"type":        "apiKey",
			"name":        "authorization",
			"in":          "header",
		},
	}
}

func renderDefinitions(m *model, names map[string]bool, v version) map[string]any {
	out := make(map[string]any, len(names))
	for name := range names {
		if d, ok := m.defs[name]; ok {
			out[name] = renderDefinition(d, v)
		}
	}
	return out
}

// v3Document renders the document of one group version.
func (st *state) v3Document(d *gvDoc) map[string]any {
	paths := map[string]any{}
	for p, pi := range d.paths {
		paths[p] = renderPathItem(pi, v3)
	}
	return map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]any{"title": st.info.Title, "version": st.info.Version},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         renderDefinitions(st.model, st.model.refsOfPaths(d.paths), v3),
			"securitySchemes": bearerScheme(),
		},
	}
}

// v2Document renders the single v2 document of all group versions.
func (st *state) v2Document() map[string]any {
	paths := map[string]any{}
	all := map[string]*pathItem{}
	for _, k := range st.keys {
		for p, pi := range st.docs[k].paths {
			paths[p] = renderPathItem(pi, v2)
			all[p] = pi
		}
	}
	return map[string]any{
		"swagger":             "2.0",
		"info":                map[string]any{"title": st.info.Title, "version": st.info.Version},
		"paths":               paths,
		"definitions":         renderDefinitions(st.model, st.model.refsOfPaths(all), v2),
		"securityDefinitions": bearerScheme(),
		"security":            []any{map[string]any{"BearerToken": []any{}}},
	}
}
