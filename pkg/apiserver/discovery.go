package apiserver

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"mime"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/openapi"
)

// groupOrder is the order upstream lists API groups in.
var groupOrder = []string{
	"", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io",
	"autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy", "rbac.authorization.k8s.io",
	"storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
	"coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "flowcontrol.apiserver.k8s.io",
}

// versionPriority orders versions as upstream: GA before beta before alpha,
// higher numbers first.
func versionLess(a, b string) bool {
	rank := func(v string) (int, string) {
		switch {
		case strings.Contains(v, "alpha"):
			return 2, v
		case strings.Contains(v, "beta"):
			return 1, v
		}
		return 0, v
	}
	ra, va := rank(a)
	rb, vb := rank(b)
	if ra != rb {
		return ra < rb
	}
	if len(va) != len(vb) {
		return len(va) > len(vb)
	}
	return va > vb
}

// discoveryDocs are the precomputed discovery responses.
type discoveryDocs struct {
	apiVersions  *metav1.APIVersions
	groups       *metav1.APIGroupList
	groupByName  map[string]*metav1.APIGroup
	resources    map[schema.GroupVersion]*metav1.APIResourceList
	aggregated   map[string][]byte // "api"/"apis" + version → JSON
	aggregatedEt map[string]string
}

type subresourceInfo struct {
	name  string
	kind  schema.GroupVersionKind
	verbs []string
}

// subresources lists an endpoint's subresources as discovery shows them.
func subresources(e *endpoint) []subresourceInfo {
	var out []subresourceInfo
	if e.status != nil {
		out = append(out, subresourceInfo{"status", e.gvk, []string{"get", "patch", "update"}})
	}
	for _, sub := range e.def.Subresources {
		out = append(out, subresourceInfo{sub.Name, e.gvk, []string{"get", "patch", "update"}})
	}
	if e.def.Scale != nil {
		out = append(out, subresourceInfo{"scale", schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, []string{"get", "patch", "update"}})
	}
	if e.version == nil {
		for _, a := range e.def.Actions {
			kind := a.Kind
			if kind.Kind == "" {
				kind = e.gvk
			}
			out = append(out, subresourceInfo{a.Name, kind, a.Verbs})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func sortedVerbs(e *endpoint) []string {
	var out []string
	for v := range e.verbs {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// storageVersionHash is upstream's opaque hash of the storage version.
func storageVersionHash(e *endpoint) string {
	if e.review != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%s", e.def.Group, e.def.Version, e.def.Kind)))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

func (s *Server) buildDiscovery(endpoints map[schema.GroupVersionResource]*endpoint) *discoveryDocs {
	d := &discoveryDocs{
		groupByName:  map[string]*metav1.APIGroup{},
		resources:    map[schema.GroupVersion]*metav1.APIResourceList{},
		aggregated:   map[string][]byte{},
		aggregatedEt: map[string]string{},
	}
	versions := map[string][]string{}
	for gvr := range endpoints {
		gv := gvr.GroupVersion()
		if _, ok := d.resources[gv]; !ok {
			d.resources[gv] = &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
			versions[gv.Group] = append(versions[gv.Group], gv.Version)
		}
	}
	for gv, list := range d.resources {
		list.APIResources = []metav1.APIResource{}
		for _, e := range resourceList(endpoints, gv) {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: e.gvr.Resource, SingularName: e.def.Singular, Namespaced: e.def.Namespaced,
				Kind: e.def.Kind, Verbs: sortedVerbs(e), ShortNames: e.def.ShortNames,
				Categories: e.def.Categories, StorageVersionHash: storageVersionHash(e),
			})
			for _, sub := range subresources(e) {
				list.APIResources = append(list.APIResources, metav1.APIResource{
					Name: e.gvr.Resource + "/" + sub.name, Namespaced: e.def.Namespaced,
					Group: sub.kind.Group, Version: sub.kind.Version, Kind: sub.kind.Kind, Verbs: sub.verbs,
				})
			}
		}
	}
	for g := range versions {
		sort.Slice(versions[g], func(i, j int) bool { return versionLess(versions[g][i], versions[g][j]) })
	}
	// The group/versions other servers serve (aggregator.go).
	remote := s.agg.state.Load()
	remoteVersions, priority := remote.remoteGroups()
	for g, vs := range remoteVersions {
		for _, v := range vs {
			if !slices.Contains(versions[g], v) {
				versions[g] = append(versions[g], v)
			}
		}
	}
	d.apiVersions = &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: versions[""],
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{
			ClientCIDR: "0.0.0.0/0", ServerAddress: net.JoinHostPort(s.cfg.AdvertiseAddress, fmt.Sprint(s.cfg.SecurePort)),
		}},
	}
	d.groups = &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, g := range orderedGroups(versions, priority) {
		if g == "" {
			continue
		}
		grp := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g}
		for _, v := range versions[g] {
			grp.Versions = append(grp.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v})
		}
		grp.PreferredVersion = grp.Versions[0]
		d.groups.Groups = append(d.groups.Groups, grp)
		gcopy := grp
		d.groupByName[g] = &gcopy
	}
	for _, dv := range []string{"v2", "v2beta1"} {
		for _, prefix := range []string{"api", "apis"} {
			data := s.aggregatedDiscovery(endpoints, remote, versions, priority, prefix == "api", dv)
			sum := sha256.Sum256(data)
			d.aggregated[prefix+dv] = data
			d.aggregatedEt[prefix+dv] = fmt.Sprintf("%q", fmt.Sprintf("%X", sum[:16]))
		}
	}
	return d
}

// orderedGroups lists groups in upstream's order: the built-in ones in
// groupOrder, then the others by APIService groupPriorityMinimum (priority;
// 1000, a custom resource group's, when not given), then by name.
func orderedGroups(versions map[string][]string, priority map[string]int32) []string {
	prio := func(g string) int32 {
		if p, ok := priority[g]; ok {
			return p
		}
		return 1000
	}
	rank := map[string]int{}
	for i, g := range groupOrder {
		rank[g] = i
	}
	var out []string
	for g := range versions {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		ri, oki := rank[out[i]]
		rj, okj := rank[out[j]]
		switch {
		case oki && okj:
			return ri < rj
		case oki != okj:
			return oki
		}
		if pi, pj := prio(out[i]), prio(out[j]); pi != pj {
			return pi > pj
		}
		return out[i] < out[j]
	})
	return out
}

// aggregatedDiscovery builds the apidiscovery.k8s.io document for the core
// group (/api) or all named groups (/apis).
func (s *Server) aggregatedDiscovery(endpoints map[schema.GroupVersionResource]*endpoint, remote *aggState, versions map[string][]string, priority map[string]int32, core bool, dv string) []byte {
	list := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/" + dv}}
	list.Items = []apidiscoveryv2.APIGroupDiscovery{}
	for _, g := range orderedGroups(versions, priority) {
		if (g == "") != core {
			continue
		}
		gd := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g}}
		for _, v := range versions[g] {
			if r := remote.byGV[schema.GroupVersion{Group: g, Version: v}]; r != nil {
				if vd, ok := r.versionDiscovery(); ok {
					gd.Versions = append(gd.Versions, vd)
				}
				continue
			}
			vd := apidiscoveryv2.APIVersionDiscovery{Version: v, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
			for _, e := range resourceList(endpoints, schema.GroupVersion{Group: g, Version: v}) {
				scope := apidiscoveryv2.ScopeCluster
				if e.def.Namespaced {
					scope = apidiscoveryv2.ScopeNamespace
				}
				rd := apidiscoveryv2.APIResourceDiscovery{
					Resource:         e.gvr.Resource,
					ResponseKind:     &metav1.GroupVersionKind{Group: g, Version: v, Kind: e.def.Kind},
					Scope:            scope,
					SingularResource: e.def.Singular,
					Verbs:            sortedVerbs(e),
					ShortNames:       e.def.ShortNames,
					Categories:       e.def.Categories,
				}
				for _, sub := range subresources(e) {
					k := sub.kind
					rd.Subresources = append(rd.Subresources, apidiscoveryv2.APISubresourceDiscovery{
						Subresource:  sub.name,
						ResponseKind: &metav1.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind},
						Verbs:        sub.verbs,
					})
				}
				vd.Resources = append(vd.Resources, rd)
			}
			gd.Versions = append(gd.Versions, vd)
		}
		if len(gd.Versions) > 0 {
			list.Items = append(list.Items, gd)
		}
	}
	var out any = list
	if dv == "v2beta1" {
		// The v2beta1 types are field-for-field the same.
		b, _ := jsonMarshal(list)
		var beta apidiscoveryv2beta1.APIGroupDiscoveryList
		_ = jsonUnmarshal(b, &beta)
		beta.APIVersion = "apidiscovery.k8s.io/v2beta1"
		out = &beta
	}
	data, _ := jsonMarshal(out)
	return append(data, '\n')
}

// wantsAggregated reports which aggregated discovery version the client
// accepts (kubectl 1.27+ asks for it first), or "".
func wantsAggregated(accept string) string {
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil || (mt != mediaJSON && mt != mediaProtobuf) {
			continue
		}
		if mt == mediaJSON && params["g"] == "apidiscovery.k8s.io" && params["as"] == "APIGroupDiscoveryList" {
			if params["v"] == "v2" || params["v"] == "v2beta1" {
				return params["v"]
			}
		}
		if params["g"] == "" && mt == mediaJSON {
			return ""
		}
	}
	return ""
}

func (s *Server) serveDiscoveryRoot(w http.ResponseWriter, r *http.Request) {
	docs := s.crs.Load().discovery
	prefix := strings.Trim(r.URL.Path, "/")
	if dv := wantsAggregated(r.Header.Get("Accept")); dv != "" {
		key := prefix + dv
		etag := docs.aggregatedEt[key]
		w.Header().Set("ETag", etag)
		w.Header().Set("Vary", "Accept")
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		writeRaw(w, http.StatusOK, "application/json;g=apidiscovery.k8s.io;v="+dv+";as=APIGroupDiscoveryList", docs.aggregated[key])
		return
	}
	m := mediaType{Type: mediaJSON}
	if prefix == "api" {
		s.writeObject(w, r, http.StatusOK, m, docs.apiVersions)
		return
	}
	s.writeObject(w, r, http.StatusOK, m, docs.groups)
}

// serveGroupDiscovery answers /api/v1, /apis/<group> and /apis/<group>/<version>.
func (s *Server) serveGroupDiscovery(w http.ResponseWriter, r *http.Request, info *RequestInfo) bool {
	parts := splitPath(r.URL.Path)
	m := mediaType{Type: mediaJSON}
	docs := s.crs.Load().discovery
	switch {
	case len(parts) == 2 && parts[0] == "api":
		if l, ok := docs.resources[schema.GroupVersion{Version: parts[1]}]; ok {
			s.writeObject(w, r, http.StatusOK, m, l)
			return true
		}
	case len(parts) == 2 && parts[0] == "apis":
		if g, ok := docs.groupByName[parts[1]]; ok {
			s.writeObject(w, r, http.StatusOK, m, g)
			return true
		}
	case len(parts) == 3 && parts[0] == "apis":
		if l, ok := docs.resources[schema.GroupVersion{Group: parts[1], Version: parts[2]}]; ok {
			s.writeObject(w, r, http.StatusOK, m, l)
			return true
		}
	}
	return false
}

// serveRootPaths lists the paths the server serves, as upstream's "/".
func (s *Server) serveRootPaths(w http.ResponseWriter, r *http.Request) {
	paths := []string{"/api", "/api/v1", "/apis", "/healthz", "/livez", "/metrics", "/openapi/v2", "/openapi/v3", "/readyz", "/version"}
	for _, g := range s.crs.Load().discovery.groups.Groups {
		paths = append(paths, "/apis/"+g.Name)
		for _, v := range g.Versions {
			paths = append(paths, "/apis/"+v.GroupVersion)
		}
	}
	sort.Strings(paths)
	data, _ := jsonMarshal(metav1.RootPaths{Paths: paths})
	writeRaw(w, http.StatusOK, mediaJSON, append(data, '\n'))
}

// openAPIResources describes the served endpoints for the OpenAPI builder.
func (s *Server) openAPIResources(endpoints map[schema.GroupVersionResource]*endpoint) []openapi.Resource {
	var out []openapi.Resource
	for _, e := range endpoints {
		if e.review != nil {
			continue
		}
		res := openapi.Resource{
			Group: e.gvr.Group, Version: e.gvr.Version, Resource: e.gvr.Resource, Kind: e.def.Kind,
			Namespaced: e.def.Namespaced, Verbs: sortedVerbs(e), Object: e.newObj(), List: e.newList(),
		}
		if e.cr != nil {
			res.Schema = e.cr.openAPISchema()
			for _, sub := range subresources(e) {
				var obj runtime.Object // status: the resource's own schema
				if sub.name == "scale" {
					obj = &autoscalingv1.Scale{}
				}
				res.Subresources = append(res.Subresources, openapi.Subresource{Name: sub.name, Object: obj, Verbs: sub.verbs})
			}
			out = append(out, res)
			continue
		}
		for _, sub := range subresources(e) {
			obj, err := s.scheme.New(sub.kind)
			if err != nil {
				continue
			}
			res.Subresources = append(res.Subresources, openapi.Subresource{Name: sub.name, Object: obj, Verbs: sub.verbs})
		}
		out = append(out, res)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Resource < b.Resource
	})
	return out
}
