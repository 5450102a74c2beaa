package openapi

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// param is a non-body operation parameter.
type param struct {
	name, in, description, typ string
	required                   bool
}

// operation is one HTTP operation, independent of the OpenAPI version.
type operation struct {
	id, description, action string
	gvk                     *GVK
	params                  []param
	bodyRef                 string // request body definition, "" for none
	bodyRequired            bool
	consumes                []string
	produces                []string
	responses               []response
	tag                     string
}

type response struct {
	code        int
	description string
	ref         string // "" for a response without a body
}

// pathItem holds the operations of one path, keyed by lower-case HTTP method.
type pathItem struct {
	ops    map[string]*operation
	params []param // parameters common to all operations
}

// gvDoc is everything served under one group version.
type gvDoc struct {
	key            string // "api/v1" or "apis/<group>/<version>"
	group, version string
	paths          map[string]*pathItem
}

const (
	mimeJSON            = "application/json"
	mimeYAML            = "application/yaml"
	mimeProtobuf        = "application/vnd.kubernetes.protobuf"
	mimeJSONWatch       = "application/json;stream=watch"
	mimeProtobufWatch   = "application/vnd.kubernetes.protobuf;stream=watch"
	mimeJSONPatch       = "application/json-patch+json"
	mimeMergePatch      = "application/merge-patch+json"
	mimeStrategicPatch  = "application/strategic-merge-patch+json"
	mimeApplyPatch      = "application/apply-patch+yaml"
	namespaceParamDescr = "object name and auth scope, such as for teams and projects"
	prettyParamDescr    = "If 'true', then the output is pretty printed."
)

func gvKey(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

// camelGroup is the group as used in operation ids: "" -> "Core",
// "rbac.authorization.k8s.io" -> "RbacAuthorization", "stable.example.com" ->
// "StableExampleCom".
func camelGroup(group string) string {
	if group == "" {
		return "Core"
	}
	group = strings.TrimSuffix(group, ".k8s.io")
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// article returns " a ", " an " or " " (plural nouns) as upstream's API
// installer does for operation descriptions.
func article(noun string) string {
	if !strings.HasSuffix(noun, "ss") && strings.HasSuffix(noun, "s") {
		return " "
	}
	if noun != "" && strings.ContainsRune("AEIOUaeiou", rune(noun[0])) {
		return " an "
	}
	return " a "
}

// optionParams turns the fields of an options struct (metav1.ListOptions, ...)
// into query parameters with upstream's descriptions.
func optionParams(v any, skip ...string) []param {
	t := reflect.TypeOf(v)
	doc := swaggerDoc(t)
	var out []param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jt := parseJSONTag(f)
		if f.Anonymous || jt.name == "" || jt.name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		typ := "string"
		switch ft.Kind() {
		case reflect.Struct:
			continue // e.g. DeleteOptions.preconditions is body-only
		case reflect.Bool:
			typ = "boolean"
		case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
			typ = "integer"
		}
		skipped := false
		for _, s := range skip {
			skipped = skipped || s == jt.name
		}
		if skipped {
			continue
		}
		out = append(out, param{name: jt.name, in: "query", description: doc[jt.name], typ: typ})
	}
	return out
}

func mergeParams(lists ...[]param) []param {
	seen := map[string]bool{}
	var out []param
	for _, l := range lists {
		for _, p := range l {
			if !seen[p.in+"/"+p.name] {
				seen[p.in+"/"+p.name] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// opParams are the parameter sets of the standard verbs.
type opParams struct {
	list, deleteCollection, create, update, patch, del []param
	pretty                                             param
}

func standardParams() opParams {
	return opParams{
		// shardSelector is not served.
		list: optionParams(metav1.ListOptions{}, "shardSelector"),
		deleteCollection: mergeParams(
			optionParams(metav1.ListOptions{}, "watch", "allowWatchBookmarks", "shardSelector"),
			optionParams(metav1.DeleteOptions{}),
		),
		create: optionParams(metav1.CreateOptions{}),
		update: optionParams(metav1.UpdateOptions{}),
		patch:  optionParams(metav1.PatchOptions{}),
		del:    optionParams(metav1.DeleteOptions{}),
		pretty: param{name: "pretty", in: "query", description: prettyParamDescr, typ: "string"},
	}
}

// resourceNames are the names of a resource's definitions.
type resourceNames struct {
	object, list string
	gvk          GVK
}

func (ps *pathSet) add(path, method string, op *operation) {
	pi := ps.paths[path]
	if pi == nil {
		pi = &pathItem{ops: map[string]*operation{}}
		ps.paths[path] = pi
	}
	if _, dup := pi.ops[method]; dup {
		ps.dups = append(ps.dups, strings.ToUpper(method)+" "+path)
	}
	pi.ops[method] = op
}

type pathSet struct {
	paths map[string]*pathItem
	std   opParams
	dups  []string // operations declared twice
}

func withPretty(std opParams, ps ...[]param) []param {
	return mergeParams(append(ps, []param{std.pretty})...)
}

func nameParam(kind string) param {
	return param{name: "name", in: "path", description: "name of the " + kind, typ: "string", required: true}
}

func namespaceParam() param {
	return param{name: "namespace", in: "path", description: namespaceParamDescr, typ: "string", required: true}
}

func okResponses(ref string, codes ...int) []response {
	var out []response
	for _, c := range codes {
		d := map[int]string{200: "OK", 201: "Created", 202: "Accepted"}[c]
		out = append(out, response{code: c, description: d, ref: ref})
	}
	return append(out, response{code: 401, description: "Unauthorized"})
}

// addResource adds the operations of r (whose definitions are names) to ps.
func (ps *pathSet) addResource(r *Resource, names resourceNames, subs []subNames) {
	std := ps.std
	prefix := "/" + gvKey(r.Group, r.Version)
	gv := camelGroup(r.Group) + upperFirst(r.Version)
	tag := lowerFirst(camelGroup(r.Group)) + "_" + r.Version
	kind := r.Kind
	gvk := names.gvk
	ns, nsID := "", ""
	var scope []param
	if r.Namespaced {
		ns, nsID = "/namespaces/{namespace}", "Namespaced"
		scope = []param{namespaceParam()}
	}
	collection := prefix + ns + "/" + r.Resource
	item := collection + "/{name}"
	itemParams := append([]param{nameParam(kind)}, scope...)

	normal := []string{mimeJSON, mimeYAML, mimeProtobuf}
	watch := []string{mimeJSON, mimeYAML, mimeProtobuf, mimeJSONWatch, mimeProtobufWatch}
	patchTypes := []string{mimeJSONPatch, mimeMergePatch, mimeStrategicPatch, mimeApplyPatch}
	if r.Schema != nil { // custom resources: no protobuf, no strategic merge patch
		normal = []string{mimeJSON, mimeYAML}
		watch = []string{mimeJSON, mimeYAML, mimeJSONWatch}
		patchTypes = []string{mimeJSONPatch, mimeMergePatch, mimeApplyPatch}
	}
	any := []string{"*/*"}
	newOp := func(id, descr, action string, g GVK) *operation {
		return &operation{id: id, description: descr, action: action, gvk: &g, tag: tag, consumes: any}
	}
	has := map[string]bool{}
	for _, v := range r.Verbs {
		has[v] = true
	}
	deleteRef := metaName("Status")
	if r.DeleteReturnsObject {
		deleteRef = names.object
	}

	if has["list"] {
		op := newOp("list"+gv+nsID+kind, "list or watch objects of kind "+kind, "list", gvk)
		op.params = withPretty(std, scope, std.list)
		op.produces = watch
		op.responses = okResponses(names.list, 200)
		ps.add(collection, "get", op)
		if r.Namespaced {
			op := newOp("list"+gv+kind+"ForAllNamespaces", "list or watch objects of kind "+kind, "list", gvk)
			op.params = withPretty(std, std.list)
			op.produces = watch
			op.responses = okResponses(names.list, 200)
			ps.add(prefix+"/"+r.Resource, "get", op)
		}
	}
	if has["create"] {
		op := newOp("create"+gv+nsID+kind, "create"+article(kind)+kind, "post", gvk)
		op.params = withPretty(std, scope, std.create)
		op.bodyRef, op.bodyRequired = names.object, true
		op.produces = normal
		op.responses = okResponses(names.object, 200, 201, 202)
		ps.add(collection, "post", op)
	}
	if has["deletecollection"] {
		op := newOp("delete"+gv+"Collection"+nsID+kind, "delete collection of "+kind, "deletecollection", gvk)
		op.params = withPretty(std, scope, std.deleteCollection)
		op.bodyRef = metaName("DeleteOptions")
		op.produces = normal
		op.responses = okResponses(metaName("Status"), 200)
		ps.add(collection, "delete", op)
	}
	if has["get"] {
		op := newOp("read"+gv+nsID+kind, "read the specified "+kind, "get", gvk)
		op.params = withPretty(std, itemParams)
		op.produces = normal
		op.responses = okResponses(names.object, 200)
		ps.add(item, "get", op)
	}
	if has["update"] {
		op := newOp("replace"+gv+nsID+kind, "replace the specified "+kind, "put", gvk)
		op.params = withPretty(std, itemParams, std.update)
		op.bodyRef, op.bodyRequired = names.object, true
		op.produces = normal
		op.responses = okResponses(names.object, 200, 201)
		ps.add(item, "put", op)
	}
	if has["patch"] {
		op := newOp("patch"+gv+nsID+kind, "partially update the specified "+kind, "patch", gvk)
		op.params = withPretty(std, itemParams, std.patch)
		op.bodyRef, op.bodyRequired = metaName("Patch"), true
		op.consumes = patchTypes
		op.produces = normal
		op.responses = okResponses(names.object, 200, 201)
		ps.add(item, "patch", op)
	}
	if has["delete"] {
		op := newOp("delete"+gv+nsID+kind, "delete"+article(kind)+kind, "delete", gvk)
		op.params = withPretty(std, itemParams, std.del)
		op.bodyRef = metaName("DeleteOptions")
		op.produces = normal
		op.responses = okResponses(deleteRef, 200, 202)
		ps.add(item, "delete", op)
	}
	if has["watch"] {
		watchEvent := metaName("WatchEvent")
		op := newOp("watch"+gv+nsID+kind+"List", "watch individual changes to a list of "+kind+". deprecated: use the 'watch' parameter with a list operation instead.", "watchlist", gvk)
		op.params = withPretty(std, scope, std.list)
		op.produces = watch
		op.responses = okResponses(watchEvent, 200)
		ps.add(prefix+"/watch"+ns+"/"+r.Resource, "get", op)

		op = newOp("watch"+gv+nsID+kind, "watch changes to an object of kind "+kind+". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.", "watch", gvk)
		op.params = withPretty(std, itemParams, std.list)
		op.produces = watch
		op.responses = okResponses(watchEvent, 200)
		ps.add(prefix+"/watch"+ns+"/"+r.Resource+"/{name}", "get", op)

		if r.Namespaced {
			op := newOp("watch"+gv+kind+"ListForAllNamespaces", "watch individual changes to a list of "+kind+". deprecated: use the 'watch' parameter with a list operation instead.", "watchlist", gvk)
			op.params = withPretty(std, std.list)
			op.produces = watch
			op.responses = okResponses(watchEvent, 200)
			ps.add(prefix+"/watch/"+r.Resource, "get", op)
		}
	}

	for _, sn := range subs {
		s := sn.sub
		path := item + "/" + s.Name
		subID := upperFirst(s.Name)
		sp := append([]param{nameParam(sn.gvk.Kind)}, scope...)
		for _, v := range s.Verbs {
			switch v {
			case "get":
				op := newOp("read"+gv+nsID+kind+subID, "read "+s.Name+" of the specified "+kind, "get", sn.gvk)
				op.params = withPretty(std, sp)
				op.produces = normal
				op.responses = okResponses(sn.object, 200)
				ps.add(path, "get", op)
			case "update":
				op := newOp("replace"+gv+nsID+kind+subID, "replace "+s.Name+" of the specified "+kind, "put", sn.gvk)
				op.params = withPretty(std, sp, std.update)
				op.bodyRef, op.bodyRequired = sn.object, true
				op.produces = normal
				op.responses = okResponses(sn.object, 200, 201)
				ps.add(path, "put", op)
			case "patch":
				op := newOp("patch"+gv+nsID+kind+subID, "partially update "+s.Name+" of the specified "+kind, "patch", sn.gvk)
				op.params = withPretty(std, sp, std.patch)
				op.bodyRef, op.bodyRequired = metaName("Patch"), true
				op.consumes = patchTypes
				op.produces = normal
				op.responses = okResponses(sn.object, 200, 201)
				ps.add(path, "patch", op)
			case "create":
				op := newOp("create"+gv+nsID+kind+subID, "create "+s.Name+" of"+article(kind)+kind, "post", sn.gvk)
				op.params = withPretty(std, sp, std.create)
				op.bodyRef, op.bodyRequired = sn.object, true
				op.produces = normal
				op.responses = okResponses(sn.object, 200, 201, 202)
				ps.add(path, "post", op)
			case "delete":
				op := newOp("delete"+gv+nsID+kind+subID, "delete "+s.Name+" of"+article(kind)+kind, "delete", sn.gvk)
				op.params = withPretty(std, sp, std.del)
				op.bodyRef = metaName("DeleteOptions")
				op.produces = normal
				op.responses = okResponses(metaName("Status"), 200, 202)
				ps.add(path, "delete", op)
			}
		}
	}
}

// addDiscovery adds the group version's resource list operation
// ("/api/v1/", getCoreV1APIResources).
func (ps *pathSet) addDiscovery(group, version string) {
	gv := camelGroup(group) + upperFirst(version)
	types := []string{mimeJSON, mimeYAML, mimeProtobuf}
	op := &operation{
		id:          "get" + gv + "APIResources",
		description: "get available resources",
		tag:         lowerFirst(camelGroup(group)) + "_" + version,
		consumes:    types,
		produces:    types,
		responses:   okResponses(metaName("APIResourceList"), 200),
	}
	ps.add("/"+gvKey(group, version)+"/", "get", op)
}

func metaName(kind string) string { return "io.k8s.apimachinery.pkg.apis.meta.v1." + kind }

type subNames struct {
	sub    *Subresource
	object string
	gvk    GVK
}

// hoistCommonParams moves the parameters shared by all operations of a path to
// the path, as upstream does, and sorts parameters by name.
func (pi *pathItem) hoistCommonParams() {
	key := func(p param) string { return p.in + "\x00" + p.name + "\x00" + p.description + "\x00" + p.typ }
	count := map[string]int{}
	byKey := map[string]param{}
	for _, op := range pi.ops {
		for _, p := range op.params {
			count[key(p)]++
			byKey[key(p)] = p
		}
	}
	// kubectl's query parameter verifier only looks at the PATCH operation's
	// own parameters, so never hoist from a lone PATCH.
	_, onlyPatch := pi.ops["patch"]
	onlyPatch = onlyPatch && len(pi.ops) == 1
	common := map[string]bool{}
	for k, n := range count {
		p := byKey[k]
		if n == len(pi.ops) && (!onlyPatch || p.in == "path" || p.name == "pretty") {
			common[k] = true
			pi.params = append(pi.params, p)
		}
	}
	sortParams(pi.params)
	for _, op := range pi.ops {
		kept := op.params[:0:0]
		for _, p := range op.params {
			if !common[key(p)] {
				kept = append(kept, p)
			}
		}
		op.params = kept
		sortParams(op.params)
	}
}

func sortParams(ps []param) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].name != ps[j].name {
			return ps[i].name < ps[j].name
		}
		return ps[i].in < ps[j].in
	})
}

// crdDefinitionName is upstream's name for a custom resource's schema:
// the reversed group, the version and the kind ("com.example.stable.v1.CronTab").
func crdDefinitionName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + version + "." + kind
}

func errorf(r *Resource, format string, args ...any) error {
	return fmt.Errorf("openapi: resource %s (%s/%s): %s", r.Resource, r.Group, r.Version, fmt.Sprintf(format, args...))
}
