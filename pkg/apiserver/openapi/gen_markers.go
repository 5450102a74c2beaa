//go:build ignore

// gen_markers reads the comment markers of the Go API types (k8s.io/api,
// k8s.io/apimachinery meta/v1 and friends, apiextensions v1) and writes
// zz_generated_markers.go: the part of the upstream OpenAPI schemas that
// reflection cannot see (+optional/+required, +listType, +listMapKey,
// +mapType, +structType, +default, +enum values, unions, and the
// descriptions of types that have no SwaggerDoc method).
//
// Run with `go generate` in this directory; it reads the module sources
// from the module cache (go list -m).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

type fieldMarkers struct {
	Required *bool           `json:"r,omitempty"`
	Skip     bool            `json:"s,omitempty"`
	Ext      map[string]any  `json:"x,omitempty"`
	Default  json.RawMessage `json:"d,omitempty"`
	Doc      string          `json:"doc,omitempty"`
}

type typeMarkers struct {
	Ext map[string]any `json:"x,omitempty"`
	Doc string         `json:"doc,omitempty"`
}

type enumMarkers struct {
	Values []string `json:"v"`
	Lines  []string `json:"l"`
}

type table struct {
	Fields map[string]map[string]*fieldMarkers `json:"fields"`
	Types  map[string]*typeMarkers             `json:"types"`
	Enums  map[string]*enumMarkers             `json:"enums"`
}

type pkg struct {
	path  string
	files []*ast.File
}

func moduleDir(mod string) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		fail("go list -m %s: %v", mod, err)
	}
	return strings.TrimSpace(string(out))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gen_markers: "+format+"\n", args...)
	os.Exit(1)
}

func parseDir(fset *token.FileSet, dir, path string) *pkg {
	entries, err := os.ReadDir(dir)
	if err != nil {
		fail("%v", err)
	}
	p := &pkg{path: path}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			fail("%v", err)
		}
		p.files = append(p.files, f)
	}
	return p
}

func packages(fset *token.FileSet) []*pkg {
	var out []*pkg
	api := moduleDir("k8s.io/api")
	groups, _ := os.ReadDir(api)
	for _, g := range groups {
		if !g.IsDir() || strings.HasPrefix(g.Name(), ".") || g.Name() == "testdata" {
			continue
		}
		versions, _ := os.ReadDir(filepath.Join(api, g.Name()))
		for _, v := range versions {
			if v.IsDir() && regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`).MatchString(v.Name()) {
				out = append(out, parseDir(fset, filepath.Join(api, g.Name(), v.Name()), "k8s.io/api/"+g.Name()+"/"+v.Name()))
			}
		}
	}
	am := moduleDir("k8s.io/apimachinery")
	for _, d := range []string{"pkg/apis/meta/v1", "pkg/runtime", "pkg/api/resource", "pkg/util/intstr"} {
		out = append(out, parseDir(fset, filepath.Join(am, d), "k8s.io/apimachinery/"+d))
	}
	ext := moduleDir("k8s.io/apiextensions-apiserver")
	out = append(out, parseDir(fset, filepath.Join(ext, "pkg/apis/apiextensions/v1"), "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"))
	return out
}

func commentLines(cg *ast.CommentGroup) []string {
	if cg == nil {
		return nil
	}
	text := strings.TrimRight(cg.Text(), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// tags extracts "+name=value" markers (value "" when absent), like gengo.
func tags(lines []string) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines {
		l = strings.Trim(l, " ")
		if !strings.HasPrefix(l, "+") {
			continue
		}
		k, v, _ := strings.Cut(l[1:], "=")
		out[k] = append(out[k], v)
	}
	return out
}

// description renders comment lines as openapi-gen does.
func description(lines []string) string {
	var b bytes.Buffer
	delPrev := func() {
		if b.Len() > 0 {
			b.Truncate(b.Len() - 1)
		}
	}
	for _, line := range lines {
		if line == "---" {
			break
		}
		line = strings.TrimRight(line, " ")
		leading := strings.TrimLeft(line, " ")
		switch {
		case len(line) == 0:
			delPrev()
			b.WriteString("\n\n")
		case strings.HasPrefix(leading, "TODO"):
		case strings.HasPrefix(leading, "+"):
		default:
			if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
				delPrev()
				line = "\n" + line + "\n"
			} else {
				line += " "
			}
			b.WriteString(line)
		}
	}
	return strings.TrimSpace(b.String())
}

var extensionTags = map[string]string{
	"listMapKey": "x-kubernetes-list-map-keys",
	"listType":   "x-kubernetes-list-type",
	"mapType":    "x-kubernetes-map-type",
	"structType": "x-kubernetes-map-type",
}

func extensions(t map[string][]string) map[string]any {
	out := map[string]any{}
	for tag, x := range extensionTags {
		vals, ok := t[tag]
		if !ok {
			continue
		}
		if tag == "listMapKey" {
			var arr []any
			for _, v := range vals {
				arr = append(arr, v)
			}
			out[x] = arr
		} else if len(vals) == 1 {
			out[x] = vals[0]
		} else {
			var arr []any
			for _, v := range vals {
				arr = append(arr, v)
			}
			out[x] = arr
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

type jsonTag struct {
	name      string
	omitEmpty bool
	present   bool
}

func fieldTag(f *ast.Field) jsonTag {
	if f.Tag == nil {
		return jsonTag{}
	}
	raw, err := strconv.Unquote(f.Tag.Value)
	if err != nil {
		return jsonTag{}
	}
	v, ok := reflect.StructTag(raw).Lookup("json")
	if !ok {
		return jsonTag{}
	}
	parts := strings.Split(v, ",")
	jt := jsonTag{name: parts[0], present: true}
	for _, o := range parts[1:] {
		if o == "omitempty" || o == "omitzero" {
			jt.omitEmpty = true
		}
	}
	return jt
}

func isInline(f *ast.Field, jt jsonTag) bool {
	return len(f.Names) == 0 && jt.present && jt.name == ""
}

type constInfo struct {
	name, typ, value string
	comment          string
}

var ws = regexp.MustCompile(`\s+`)

func main() {
	fset := token.NewFileSet()
	pkgs := packages(fset)
	tab := &table{Fields: map[string]map[string]*fieldMarkers{}, Types: map[string]*typeMarkers{}, Enums: map[string]*enumMarkers{}}

	// Pass 1: per package, types with SwaggerDoc, enum types and constants.
	type enumKey = string
	enumTypes := map[enumKey]bool{}
	consts := map[string][]constInfo{} // package path -> constants
	swagger := map[string]bool{}       // "pkg.Type" -> has SwaggerDoc()
	for _, p := range pkgs {
		for _, f := range p.files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Name.Name == "SwaggerDoc" && d.Recv != nil && len(d.Recv.List) == 1 {
						rt := d.Recv.List[0].Type
						if st, ok := rt.(*ast.StarExpr); ok {
							rt = st.X
						}
						if id, ok := rt.(*ast.Ident); ok {
							swagger[p.path+"."+id.Name] = true
						}
					}
				case *ast.GenDecl:
					switch d.Tok {
					case token.TYPE:
						for _, s := range d.Specs {
							ts := s.(*ast.TypeSpec)
							doc := ts.Doc
							if doc == nil && len(d.Specs) == 1 {
								doc = d.Doc
							}
							if id, ok := ts.Type.(*ast.Ident); ok && id.Name == "string" {
								if _, ok := tags(commentLines(doc))["enum"]; ok {
									enumTypes[p.path+"."+ts.Name.Name] = true
								}
							}
						}
					case token.CONST:
						for _, s := range d.Specs {
							vs := s.(*ast.ValueSpec)
							id, ok := vs.Type.(*ast.Ident)
							if !ok || len(vs.Values) != len(vs.Names) {
								continue
							}
							doc := vs.Doc
							if doc == nil && len(d.Specs) == 1 {
								doc = d.Doc
							}
							for i, n := range vs.Names {
								lit, ok := vs.Values[i].(*ast.BasicLit)
								if !ok || lit.Kind != token.STRING {
									continue
								}
								v, err := strconv.Unquote(lit.Value)
								if err != nil {
									continue
								}
								consts[p.path] = append(consts[p.path], constInfo{name: n.Name, typ: id.Name, value: v, comment: strings.Join(commentLines(doc), " ")})
							}
						}
					}
				}
			}
		}
	}
	// Enum values, as upstream: per value the longest comment wins.
	for _, p := range pkgs {
		for _, c := range consts[p.path] {
			key := p.path + "." + c.typ
			if !enumTypes[key] {
				continue
			}
			e := tab.Enums[key]
			if e == nil {
				e = &enumMarkers{}
				tab.Enums[key] = e
			}
			line := enumLine(c)
			replaced := false
			for i, v := range e.Values {
				if v == c.value {
					replaced = true
					old := e.Lines[i]
					if len(old) < len(line) || (len(old) == len(line) && old > line) {
						e.Lines[i] = line
					}
				}
			}
			if !replaced {
				e.Values = append(e.Values, c.value)
				e.Lines = append(e.Lines, line)
			}
		}
	}
	for _, e := range tab.Enums {
		sort.Strings(e.Lines)
		sort.Slice(e.Values, func(i, j int) bool { return strconv.Quote(e.Values[i]) < strconv.Quote(e.Values[j]) })
	}
	for k := range enumTypes {
		if tab.Enums[k] == nil {
			tab.Enums[k] = &enumMarkers{Values: []string{}, Lines: []string{}}
		}
	}

	// Pass 2: struct types and their fields.
	for _, p := range pkgs {
		constValue := func(name string) (string, bool) {
			for _, c := range consts[p.path] {
				if c.name == name {
					return c.value, true
				}
			}
			return "", false
		}
		for _, f := range p.files {
			for _, decl := range f.Decls {
				d, ok := decl.(*ast.GenDecl)
				if !ok || d.Tok != token.TYPE {
					continue
				}
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					st, ok := ts.Type.(*ast.StructType)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					key := p.path + "." + ts.Name.Name
					doc := ts.Doc
					if doc == nil && len(d.Specs) == 1 {
						doc = d.Doc
					}
					typeLines := commentLines(doc)
					tm := &typeMarkers{Ext: extensions(tags(typeLines))}
					hasDoc := swagger[key]
					if !hasDoc {
						tm.Doc = description(typeLines)
					}
					if u := unions(st, tags(typeLines)); u != nil {
						if tm.Ext == nil {
							tm.Ext = map[string]any{}
						}
						tm.Ext["x-kubernetes-unions"] = u
					}
					if tm.Ext != nil || tm.Doc != "" {
						tab.Types[key] = tm
					}
					for _, fld := range st.Fields.List {
						jt := fieldTag(fld)
						if isInline(fld, jt) || len(fld.Names) == 0 {
							continue
						}
						name := jt.name
						if name == "" {
							name = fld.Names[0].Name
						}
						if name == "-" || !fld.Names[0].IsExported() {
							continue
						}
						lines := commentLines(fld.Doc)
						t := tags(lines)
						fm := &fieldMarkers{Ext: extensions(t)}
						_, opt := t["optional"]
						_, req := t["required"]
						switch {
						case req && jt.omitEmpty:
							v := true
							fm.Required = &v
						case opt && !req && !jt.omitEmpty:
							v := false
							fm.Required = &v
						}
						for _, v := range t["k8s:openapi-gen"] {
							if v == "false" {
								fm.Skip = true
							}
						}
						if dv, ok := t["default"]; ok && len(dv) > 0 {
							fm.Default = defaultValue(dv[0], constValue)
						}
						if !hasDoc {
							fm.Doc = description(lines)
						}
						if fm.Required != nil || fm.Skip || fm.Ext != nil || fm.Default != nil || fm.Doc != "" {
							if tab.Fields[key] == nil {
								tab.Fields[key] = map[string]*fieldMarkers{}
							}
							tab.Fields[key][name] = fm
						}
					}
				}
			}
		}
	}

	data, err := json.Marshal(tab)
	if err != nil {
		fail("%v", err)
	}
	var out bytes.Buffer
	out.WriteString("// Code generated by gen_markers.go from the comment markers of k8s.io/api,\n")
	out.WriteString("// k8s.io/apimachinery and k8s.io/apiextensions-apiserver; DO NOT EDIT.\n\n")
	out.WriteString("package openapi\n\n")
	out.WriteString("// markerJSON is the JSON form of a markerTable.\n")
	out.WriteString("const markerJSON = " + strconv.Quote(string(data)) + "\n")
	if err := os.WriteFile("zz_generated_markers.go", out.Bytes(), 0o644); err != nil {
		fail("%v", err)
	}
	fmt.Printf("gen_markers: %d types, %d types with field markers, %d enums, %d bytes\n", len(tab.Types), len(tab.Fields), len(tab.Enums), len(data))
}

func enumLine(c constInfo) string {
	comment := strings.TrimSpace(c.comment)
	comment = strings.TrimPrefix(comment, c.name)
	comment = strings.TrimSpace(comment)
	comment = ws.ReplaceAllString(comment, " ")
	return strings.TrimRight(fmt.Sprintf(" - `%q` %s", c.value, comment), " ")
}

var refRE = regexp.MustCompile(`^ref\(([A-Za-z0-9_.]+)\)$`)

func defaultValue(v string, constValue func(string) (string, bool)) json.RawMessage {
	var x any
	if err := json.Unmarshal([]byte(v), &x); err == nil {
		return json.RawMessage(v)
	}
	if m := refRE.FindStringSubmatch(v); m != nil {
		name := m[1]
		if i := strings.LastIndex(name, "."); i >= 0 {
			name = name[i+1:]
		}
		if cv, ok := constValue(name); ok {
			b, _ := json.Marshal(cv)
			return b
		}
	}
	fmt.Fprintf(os.Stderr, "gen_markers: cannot resolve default %q\n", v)
	return nil
}

// unions mirrors upstream's x-kubernetes-unions: a +union struct, or
// +unionDiscriminator/+unionDeprecated members.
func unions(st *ast.StructType, typeTags map[string][]string) []any {
	var out []any
	build := func(structUnion bool) {
		disc := ""
		fields := map[string]any{}
		for _, fld := range st.Fields.List {
			jt := fieldTag(fld)
			if len(fld.Names) == 0 || jt.name == "-" {
				continue
			}
			name := jt.name
			if name == "" {
				name = fld.Names[0].Name
			}
			t := tags(commentLines(fld.Doc))
			_, isDisc := t["unionDiscriminator"]
			_, isDeprecated := t["unionDeprecated"]
			if isDisc {
				disc = name
				if structUnion {
					continue
				}
			}
			if structUnion || isDeprecated {
				fields[name] = fld.Names[0].Name
			}
		}
		if len(fields) == 0 && !structUnion {
			return
		}
		u := map[string]any{"fields-to-discriminateBy": fields}
		if disc != "" {
			u["discriminator"] = disc
		}
		out = append(out, u)
	}
	if _, ok := typeTags["union"]; ok {
		build(true)
	}
	build(false)
	if len(out) == 0 {
		return nil
	}
	return out
}
