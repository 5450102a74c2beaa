package apiserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func names(items []corev1.ConfigMap) string {
	var out []string
	for _, it := range items {
		out = append(out, it.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// resourceVersion unset is a consistent read (sees every acknowledged
// write); "0" may be served from the watch cache; both return the
// collection RV. Invalid combinations are 422 on ListOptions.
func TestSemanticsListResourceVersion(t *testing.T) {
	c := start(t)
	ns := c.namespace("list-rv")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	for i := 0; i < 5; i++ {
		var cm corev1.ConfigMap
		c.call(http.MethodPost, base, configMap(fmt.Sprintf("c%d", i), map[string]string{"t": "x"}, nil), http.StatusCreated, &cm)
		// A consistent list right after a write includes it.
		var l corev1.ConfigMapList
		c.call(http.MethodGet, base+"?labelSelector=t%3Dx", nil, http.StatusOK, &l)
		if len(l.Items) != i+1 {
			t.Fatalf("consistent list after %d creates has %d items", i+1, len(l.Items))
		}
		if rvInt(t, l.ResourceVersion) < rvInt(t, cm.ResourceVersion) {
			t.Fatalf("list rv %s older than the write's %s", l.ResourceVersion, cm.ResourceVersion)
		}
	}
	tests := []struct{ name, query string }{
		{"unset (consistent)", ""},
		{"0 (any, from cache)", "&resourceVersion=0"},
		{"NotOlderThan a recent RV", "&resourceVersionMatch=NotOlderThan&resourceVersion=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			var l corev1.ConfigMapList
			c.call(http.MethodGet, base+"?labelSelector=t%3Dx"+tt.query, nil, http.StatusOK, &l)
			if l.Kind != "ConfigMapList" || l.APIVersion != "v1" {
				t.Errorf("list kind %s/%s", l.APIVersion, l.Kind)
			}
			rvInt(t, l.ResourceVersion)
			// The cache may lag an instant for "0"; it must catch up.
			if len(l.Items) != 5 {
				eventually(t, "list to show 5 items", func() bool {
					c.call(http.MethodGet, base+"?labelSelector=t%3Dx"+tt.query, nil, http.StatusOK, &l)
					return len(l.Items) == 5
				})
			}
		})
	}
	// Invalid combinations are 422 on ListOptions.
	code, _, data := c.do(http.MethodGet, base+"?resourceVersionMatch=Exact", nil, "", "")
	st := expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io" {
		t.Errorf("details = %+v, want ListOptions.meta.k8s.io", st.Details)
	}
}

// limit + continue pages through every item exactly once, every page
// reporting the first page's RV (a snapshot: later writes do not show up).
func TestSemanticsListPaging(t *testing.T) {
	c := start(t)
	ns := c.namespace("paging")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	for i := 0; i < 23; i++ {
		c.call(http.MethodPost, base, configMap(fmt.Sprintf("cm-%02d", i), nil, nil), http.StatusCreated, nil)
	}
	// No selector: upstream reports remainingItemCount only for unfiltered lists.
	for _, limit := range []int{1, 5, 7, 23, 50} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			c := c.on(t)
			var all corev1.ConfigMapList
			c.call(http.MethodGet, base, nil, http.StatusOK, &all)
			want := map[string]bool{}
			for _, it := range all.Items {
				want[it.Name] = true
			}
			total := len(want)
			seen := map[string]int{}
			cont, rv := "", ""
			for page := 0; ; page++ {
				q := url.Values{"limit": {fmt.Sprint(limit)}}
				if cont != "" {
					q.Set("continue", cont)
				}
				var l corev1.ConfigMapList
				c.call(http.MethodGet, base+"?"+q.Encode(), nil, http.StatusOK, &l)
				if len(l.Items) > limit {
					t.Fatalf("page %d has %d items, limit %d", page, len(l.Items), limit)
				}
				if page == 0 {
					rv = l.ResourceVersion
					// A write after the first page is not part of the snapshot.
					c.call(http.MethodPost, base, configMap(fmt.Sprintf("late-%d", limit), nil, nil), http.StatusCreated, nil)
					remaining := total - len(l.Items)
					switch {
					case remaining > 0 && (l.RemainingItemCount == nil || *l.RemainingItemCount != int64(remaining)):
						t.Errorf("first page remainingItemCount = %v, want %d", l.RemainingItemCount, remaining)
					case remaining == 0 && l.RemainingItemCount != nil:
						t.Errorf("single page has remainingItemCount %d", *l.RemainingItemCount)
					}
				} else if l.ResourceVersion != rv {
					t.Errorf("page %d rv %s, want the first page's %s", page, l.ResourceVersion, rv)
				}
				for _, it := range l.Items {
					seen[it.Name]++
				}
				cont = l.Continue
				if cont == "" {
					if l.RemainingItemCount != nil {
						t.Errorf("last page has remainingItemCount %d", *l.RemainingItemCount)
					}
					break
				}
				if page > total+1 {
					t.Fatal("paging does not end")
				}
			}
			for n := range want {
				if seen[n] != 1 {
					t.Errorf("%s seen %d times", n, seen[n])
				}
			}
			for n, k := range seen {
				if !want[n] {
					t.Errorf("%s (seen %d times) is not in the snapshot", n, k)
				}
			}
		})
	}
	// With a selector every matching item still comes exactly once.
	t.Run("labelSelector", func(t *testing.T) {
		c := c.on(t)
		for i := 0; i < 9; i++ {
			c.call(http.MethodPost, base, configMap(fmt.Sprintf("sel-%d", i), map[string]string{"page": "yes"}, nil), http.StatusCreated, nil)
		}
		seen := map[string]int{}
		cont := ""
		for page := 0; page < 20; page++ {
			q := url.Values{"limit": {"2"}, "labelSelector": {"page=yes"}}
			if cont != "" {
				q.Set("continue", cont)
			}
			var l corev1.ConfigMapList
			c.call(http.MethodGet, base+"?"+q.Encode(), nil, http.StatusOK, &l)
			for _, it := range l.Items {
				seen[it.Name]++
			}
			if page == 0 {
				// Not part of the snapshot the pages come from.
				c.call(http.MethodPost, base, configMap("sel-late", map[string]string{"page": "yes"}, nil), http.StatusCreated, nil)
			}
			if cont = l.Continue; cont == "" {
				break
			}
		}
		if len(seen) != 9 {
			t.Errorf("saw %d distinct items, want 9: %v", len(seen), seen)
		}
		for n, k := range seen {
			if k != 1 {
				t.Errorf("%s seen %d times", n, k)
			}
		}
	})
	// A garbage continue token is 400 BadRequest.
	code, _, data := c.do(http.MethodGet, base+"?limit=2&continue=bm90LWEtdG9rZW4", nil, "", "")
	expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")
}

// Label selectors: =, ==, !=, in, notin, exists, !exists.
func TestSemanticsListLabelSelectors(t *testing.T) {
	c := start(t)
	ns := c.namespace("labels")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	objs := map[string]map[string]string{
		"a": {"env": "prod", "tier": "web", "sel": "1"},
		"b": {"env": "dev", "tier": "web", "sel": "1"},
		"c": {"env": "qa", "sel": "1"},
		"d": {"sel": "1"},
	}
	for n, l := range objs {
		c.call(http.MethodPost, base, configMap(n, l, nil), http.StatusCreated, nil)
	}
	tests := []struct{ selector, want string }{
		{"env=prod", "a"},
		{"env==prod", "a"},
		{"env!=prod", "b,c,d"},
		{"env in (dev,qa)", "b,c"},
		{"env notin (dev,qa)", "a,d"},
		{"tier", "a,b"},
		{"!tier", "c,d"},
		{"env=prod,tier=web", "a"},
		{"tier=web,env!=prod", "b"},
		{"env=none", ""},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			c := c.on(t)
			for _, rv := range []string{"", "0"} {
				q := url.Values{"labelSelector": {"sel=1," + tt.selector}}
				if rv != "" {
					q.Set("resourceVersion", rv)
				}
				var l corev1.ConfigMapList
				c.call(http.MethodGet, base+"?"+q.Encode(), nil, http.StatusOK, &l)
				if got := names(l.Items); got != tt.want {
					t.Errorf("resourceVersion=%q: got [%s], want [%s]", rv, got, tt.want)
				}
			}
		})
	}
	code, _, data := c.do(http.MethodGet, base+"?labelSelector="+url.QueryEscape("env in (a"), nil, "", "")
	expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "")
}

// Field selectors: metadata.name, metadata.namespace, and per resource
// fields (pods spec.nodeName / status.phase, events involvedObject.name);
// an unsupported field is 400.
func TestSemanticsListFieldSelectors(t *testing.T) {
	c := start(t)
	ns1, ns2 := c.namespace("fields-1"), c.namespace("fields-2")
	for _, ns := range []string{ns1, ns2} {
		for _, n := range []string{"x", "y"} {
			c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap(n, map[string]string{"f": "1"}, nil), http.StatusCreated, nil)
		}
	}
	// Pods: p1 on node-a and Running, p2 unscheduled. (p1 is created with
	// spec.nodeName so that this test does not depend on pods/binding.)
	p1body := pod("p1", "nginx:1.27")
	p1body["spec"].(map[string]any)["nodeName"] = "node-a"
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns1+"/pods", p1body, http.StatusCreated, nil)
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns1+"/pods", pod("p2", "nginx:1.27"), http.StatusCreated, nil)
	var p1 corev1.Pod
	c.call(http.MethodGet, "/api/v1/namespaces/"+ns1+"/pods/p1", nil, http.StatusOK, &p1)
	p1.Status.Phase = corev1.PodRunning
	c.call(http.MethodPut, "/api/v1/namespaces/"+ns1+"/pods/p1/status", p1, http.StatusOK, nil)
	// Events about two objects.
	for i, target := range []string{"web", "db"} {
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns1+"/events", map[string]any{
			"apiVersion": "v1", "kind": "Event",
			"metadata":       map[string]any{"name": fmt.Sprintf("ev%d", i)},
			"involvedObject": map[string]any{"kind": "Pod", "name": target, "namespace": ns1},
			"reason":         "Test", "message": "m", "type": "Normal",
			"source": map[string]any{"component": "test"},
		}, http.StatusCreated, nil)
	}

	tests := []struct {
		name, path, selector string
		want                 []string // namespace/name
	}{
		{"metadata.name in a namespace", "/api/v1/namespaces/" + ns1 + "/configmaps", "metadata.name=x", []string{ns1 + "/x"}},
		{"metadata.name across namespaces", "/api/v1/configmaps", "metadata.name=y", []string{ns1 + "/y", ns2 + "/y"}},
		{"metadata.namespace", "/api/v1/configmaps", "metadata.namespace=" + ns2, []string{ns2 + "/x", ns2 + "/y"}},
		{"metadata.name!=", "/api/v1/namespaces/" + ns2 + "/configmaps", "metadata.name!=x", []string{ns2 + "/y"}},
		{"both", "/api/v1/configmaps", "metadata.namespace=" + ns2 + ",metadata.name=x", []string{ns2 + "/x"}},
		{"pods spec.nodeName", "/api/v1/pods", "spec.nodeName=node-a", []string{ns1 + "/p1"}},
		{"pods unscheduled", "/api/v1/namespaces/" + ns1 + "/pods", "spec.nodeName=", []string{ns1 + "/p2"}},
		{"pods status.phase", "/api/v1/namespaces/" + ns1 + "/pods", "status.phase=Running", []string{ns1 + "/p1"}},
		{"pods status.phase!=", "/api/v1/namespaces/" + ns1 + "/pods", "status.phase!=Running", []string{ns1 + "/p2"}},
		{"pods spec.schedulerName", "/api/v1/namespaces/" + ns1 + "/pods", "spec.schedulerName=default-scheduler,spec.nodeName=node-a", []string{ns1 + "/p1"}},
		{"events involvedObject.name", "/api/v1/namespaces/" + ns1 + "/events", "involvedObject.name=db", []string{ns1 + "/ev1"}},
		{"events involvedObject.kind", "/api/v1/namespaces/" + ns1 + "/events", "involvedObject.kind=Pod,involvedObject.name=web", []string{ns1 + "/ev0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			var l struct {
				Items []struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				} `json:"items"`
			}
			q := url.Values{"fieldSelector": {tt.selector}}
			if strings.HasSuffix(tt.path, "configmaps") {
				q.Set("labelSelector", "f=1") // leave out kube-root-ca.crt and the like
			}
			c.call(http.MethodGet, tt.path+"?"+q.Encode(), nil, http.StatusOK, &l)
			var got []string
			for _, it := range l.Items {
				got = append(got, it.Metadata.Namespace+"/"+it.Metadata.Name)
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}

	unsupported := []struct{ path, selector, field string }{
		{"/api/v1/namespaces/" + ns1 + "/configmaps", "x=y", "x"},
		{"/api/v1/namespaces/" + ns1 + "/pods", "spec.containers=a", "spec.containers"},
		{"/api/v1/namespaces/" + ns1 + "/configmaps?watch=true", "data=y", "data"},
	}
	for _, tt := range unsupported {
		t.Run("unsupported "+tt.selector, func(t *testing.T) {
			c := c.on(t)
			sep := "?"
			if strings.Contains(tt.path, "?") {
				sep = "&"
			}
			code, _, data := c.do(http.MethodGet, tt.path+sep+"fieldSelector="+url.QueryEscape(tt.selector), nil, "", "")
			expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "field label not supported: "+tt.field)
		})
	}
}
