package discovery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func newClient(t *testing.T, host string, env *testenv.Environment) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: host, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func find(lists []*metav1.APIResourceList, gv, name string) (metav1.APIResource, bool) {
	for _, l := range lists {
		if l.GroupVersion != gv {
			continue
		}
		for _, r := range l.APIResources {
			if r.Name == name {
				return r, true
			}
		}
	}
	return metav1.APIResource{}, false
}

// legacyProxy forwards to the server but hides the aggregated document
// (as a server that predates it), counting requests.
func legacyProxy(t *testing.T, env *testenv.Environment, requests *int) string {
	u, _ := url.Parse(env.URL)
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = &http.Transport{TLSClientConfig: env.TLSConfig()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*requests++
		r.Header.Set("Accept", "application/json")
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestDiscovery(t *testing.T) {
	env := testenv.StartT(t)
	ctx := context.Background()
	var legacyRequests int
	for _, tc := range []struct {
		name           string
		host           string
		wantAggregated bool
	}{
		{"aggregated", env.URL, true},
		{"legacy", legacyProxy(t, env, &legacyRequests), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(newClient(t, tc.host, env))
			all, err := d.ServerPreferredResources(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if d.Aggregated() != tc.wantAggregated {
				t.Fatalf("aggregated = %v", d.Aggregated())
			}
			pods, ok := find(all, "v1", "pods")
			if !ok || !pods.Namespaced || pods.Kind != "Pod" || !slices.Contains(pods.Verbs, "deletecollection") || !slices.Contains(pods.Verbs, "watch") {
				t.Fatalf("pods: %v %+v", ok, pods)
			}
			if _, ok := find(all, "v1", "pods/status"); ok {
				t.Fatal("preferred resources list subresources")
			}
			ns, ok := find(all, "v1", "namespaces")
			if !ok || ns.Namespaced {
				t.Fatalf("namespaces: %+v", ns)
			}
			if _, ok := find(all, "apps/v1", "deployments"); !ok {
				t.Fatal("no deployments")
			}
			rl, err := d.ServerResourcesForGroupVersion(ctx, schema.GroupVersion{Version: "v1"})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := find([]*metav1.APIResourceList{rl}, "v1", "pods/status"); !ok {
				t.Fatal("pods/status missing from the group version's resources")
			}
			namespaced, _ := d.ServerPreferredNamespacedResources(ctx)
			if _, ok := find(namespaced, "v1", "namespaces"); ok {
				t.Fatal("namespaces listed as namespaced")
			}
			deletable := FilteredBy(SupportsAllVerbs("delete", "list", "watch"), all)
			gvrs, err := GroupVersionResources(deletable)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := gvrs[schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}]; !ok {
				t.Fatal("configmaps not deletable")
			}
			if _, ok := gvrs[schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"}]; ok {
				t.Fatal("subjectaccessreviews (create only) listed as deletable")
			}
			if d.Fetches() != 1 {
				t.Fatalf("fetches = %d, want 1 (cached)", d.Fetches())
			}
			d.Invalidate()
			if d.Fresh() {
				t.Fatal("fresh after Invalidate")
			}
			if _, err := d.ServerGroups(ctx); err != nil || d.Fetches() != 2 {
				t.Fatalf("after invalidate: %v fetches=%d", err, d.Fetches())
			}
		})
	}
	if legacyRequests < 10 {
		t.Fatalf("legacy discovery made %d requests: not one per group version", legacyRequests)
	}
}
