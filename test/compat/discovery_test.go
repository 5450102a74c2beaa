package compat

// client-go's discovery against skiff: version, aggregated (v2) and legacy
// discovery, preferred resources, a discovery-backed RESTMapper and the
// OpenAPI v3 index.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// TestClientGoServerVersion: /version as client-go reads it.
func TestClientGoServerVersion(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	v, err := cs.Discovery().ServerVersion()
	must(t, err, "ServerVersion")
	if v.GitVersion != "v1.37.2" || v.Major != "1" || v.Minor != "37" {
		t.Errorf("ServerVersion = %+v, want v1.37.2 (1, 37)", v)
	}
	if v.Platform == "" || v.GoVersion == "" {
		t.Errorf("ServerVersion lacks platform/goVersion: %+v", v)
	}
}

// TestClientGoDiscovery: client-go uses aggregated discovery by default —
// two requests, /api and /apis — and gets the same resources as legacy
// per-group-version discovery.
func TestClientGoDiscovery(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cfg := restConfig(t, env)
	var log requestLog
	cfg.Wrap(log.wrap)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	must(t, err, "NewDiscoveryClientForConfig")

	groups, resources, err := dc.ServerGroupsAndResources()
	must(t, err, "ServerGroupsAndResources (aggregated)")
	var paths []string
	for _, r := range log.get() {
		paths = append(paths, r.Method+" "+r.Path)
		if r.Path == "/apis" || r.Path == "/api" {
			if !strings.Contains(r.Accept, discovery.AcceptV2) {
				t.Errorf("%s sent Accept %q, want aggregated discovery first", r.Path, r.Accept)
			}
			if !strings.Contains(r.RespContentType, "as=APIGroupDiscoveryList") || !strings.Contains(r.RespContentType, "v=v2") {
				t.Errorf("%s answered with Content-Type %q, want the aggregated v2 APIGroupDiscoveryList", r.Path, r.RespContentType)
			}
		}
	}
	slices.Sort(paths)
	if want := []string{"GET /api", "GET /apis"}; !slices.Equal(paths, want) {
		t.Errorf("aggregated discovery made requests %v, want %v (no per-group-version fallback)", paths, want)
	}
	checkDiscovery(t, "aggregated", groups, resources)

	log.reset()
	legacy, err := discovery.NewDiscoveryClientForConfig(cfg)
	must(t, err, "NewDiscoveryClientForConfig")
	legacy.UseLegacyDiscovery = true
	lgroups, lresources, err := legacy.ServerGroupsAndResources()
	must(t, err, "ServerGroupsAndResources (legacy)")
	if len(log.get()) <= 2 {
		t.Errorf("legacy discovery made only %d requests", len(log.get()))
	}
	checkDiscovery(t, "legacy", lgroups, lresources)
	if a, l := flattenResources(resources), flattenResources(lresources); !slices.Equal(a, l) {
		t.Errorf("aggregated and legacy discovery differ:\n  only aggregated: %v\n  only legacy:     %v", minus(a, l), minus(l, a))
	}

	// Preferred versions.
	preferred, err := dc.ServerPreferredResources()
	must(t, err, "ServerPreferredResources")
	pref := map[string]string{} // group/resource -> version
	for _, rl := range preferred {
		gv, _ := schema.ParseGroupVersion(rl.GroupVersion)
		for _, r := range rl.APIResources {
			pref[gv.Group+"/"+r.Name] = gv.Version
		}
	}
	for gr, v := range map[string]string{"/pods": "v1", "apps/deployments": "v1", "autoscaling/horizontalpodautoscalers": "v2", "coordination.k8s.io/leases": "v1"} {
		if pref[gr] != v {
			t.Errorf("preferred version of %s = %q, want %s", gr, pref[gr], v)
		}
	}

	// A discovery-backed RESTMapper with kubectl's short names.
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), dc, nil)
	m, err := mapper.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	must(t, err, "RESTMapping apps/Deployment")
	if m.Resource.Resource != "deployments" || m.Resource.Version != "v1" || m.Scope.Name() != "namespace" {
		t.Errorf("RESTMapping apps/Deployment = %+v scope %s", m.Resource, m.Scope.Name())
	}
	for short, want := range map[string]string{"po": "pods", "deploy": "deployments", "cm": "configmaps", "ns": "namespaces", "svc": "services"} {
		gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: short})
		if err != nil || gvr.Resource != want {
			t.Errorf("ResourceFor(%q) = %v, %v; want %s", short, gvr, err, want)
		}
	}
	gvk, err := mapper.KindFor(schema.GroupVersionResource{Resource: "leases"})
	if err != nil || gvk != (schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}) {
		t.Errorf("KindFor(leases) = %v, %v", gvk, err)
	}

	// OpenAPI v3 index.
	oapi, err := dc.OpenAPIV3().Paths()
	must(t, err, "OpenAPIV3().Paths()")
	for _, p := range []string{"api/v1", "apis/apps/v1"} {
		if _, ok := oapi[p]; !ok {
			t.Errorf("OpenAPI v3 paths lack %q", p)
		}
	}
	if gv, ok := oapi["apis/apps/v1"]; ok {
		data, err := gv.Schema("application/json")
		must(t, err, "OpenAPI v3 apps/v1 schema")
		if !strings.Contains(string(data), "io.k8s.api.apps.v1.Deployment") {
			t.Errorf("OpenAPI v3 apps/v1 schema does not define io.k8s.api.apps.v1.Deployment")
		}
	}
}

// checkDiscovery checks well-known groups and resources.
func checkDiscovery(t testing.TB, mode string, groups []*metav1.APIGroup, lists []*metav1.APIResourceList) {
	t.Helper()
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	for _, g := range []string{"", "apps", "batch", "coordination.k8s.io", "events.k8s.io", "rbac.authorization.k8s.io", "apiextensions.k8s.io"} {
		if !slices.Contains(names, g) {
			t.Errorf("%s: group %q missing from %v", mode, g, names)
		}
	}
	res := map[string]metav1.APIResource{}
	for _, rl := range lists {
		for _, r := range rl.APIResources {
			res[rl.GroupVersion+" "+r.Name] = r
		}
	}
	standard := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	for _, tc := range []struct {
		key, kind  string
		namespaced bool
		verbs      []string
		short      string
		group, ver string // for subresources of another group's kind
	}{
		{key: "v1 pods", kind: "Pod", namespaced: true, verbs: standard, short: "po"},
		{key: "v1 pods/status", kind: "Pod", namespaced: true, verbs: []string{"get", "patch", "update"}},
		{key: "v1 namespaces", kind: "Namespace", namespaced: false, short: "ns"},
		{key: "v1 configmaps", kind: "ConfigMap", namespaced: true, verbs: standard, short: "cm"},
		{key: "apps/v1 deployments", kind: "Deployment", namespaced: true, verbs: standard, short: "deploy"},
		{key: "apps/v1 deployments/status", kind: "Deployment", namespaced: true, verbs: []string{"get", "patch", "update"}},
		{key: "apps/v1 deployments/scale", kind: "Scale", namespaced: true, verbs: []string{"get", "patch", "update"}, group: "autoscaling", ver: "v1"},
		{key: "coordination.k8s.io/v1 leases", kind: "Lease", namespaced: true, verbs: standard},
		{key: "v1 events", kind: "Event", namespaced: true, verbs: standard, short: "ev"},
	} {
		r, ok := res[tc.key]
		if !ok {
			t.Errorf("%s: resource %s missing", mode, tc.key)
			continue
		}
		if r.Kind != tc.kind || r.Namespaced != tc.namespaced {
			t.Errorf("%s: %s kind %q namespaced %v, want %q %v", mode, tc.key, r.Kind, r.Namespaced, tc.kind, tc.namespaced)
		}
		if tc.verbs != nil {
			verbs := slices.Clone([]string(r.Verbs))
			slices.Sort(verbs)
			if !slices.Equal(verbs, tc.verbs) {
				t.Errorf("%s: %s verbs %v, want %v", mode, tc.key, verbs, tc.verbs)
			}
		}
		if tc.short != "" && !slices.Contains(r.ShortNames, tc.short) {
			t.Errorf("%s: %s short names %v lack %q", mode, tc.key, r.ShortNames, tc.short)
		}
		if tc.group != "" && (r.Group != tc.group || r.Version != tc.ver) {
			t.Errorf("%s: %s group/version %q/%q, want %s/%s", mode, tc.key, r.Group, r.Version, tc.group, tc.ver)
		}
	}
}

// flattenResources renders each resource as one comparable line.
func flattenResources(lists []*metav1.APIResourceList) []string {
	var out []string
	for _, rl := range lists {
		for _, r := range rl.APIResources {
			verbs := slices.Clone([]string(r.Verbs))
			slices.Sort(verbs)
			short := slices.Clone(r.ShortNames)
			slices.Sort(short)
			// Group, Version and SingularName are left out: client-go's
			// conversion of aggregated discovery fills them in where
			// legacy discovery leaves them empty.
			out = append(out, fmt.Sprintf("%s %s kind=%s namespaced=%v verbs=%v short=%v",
				rl.GroupVersion, r.Name, r.Kind, r.Namespaced, verbs, short))
		}
	}
	slices.Sort(out)
	return out
}

// minus is a - b for sorted string slices.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}
