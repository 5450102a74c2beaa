package apiserver_test

import (
	"net/http"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rvInt(t testing.TB, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("resourceVersion %q is not a positive integer", rv)
	}
	return n
}

// resourceVersion is the storage revision: every write returns a new, larger
// one; a list reports the collection's revision; a stale update conflicts.
func TestSemanticsResourceVersion(t *testing.T) {
	c := start(t)
	ns := c.namespace("rv")
	base := "/api/v1/namespaces/" + ns + "/configmaps"

	var created corev1.ConfigMap
	c.call(http.MethodPost, base, configMap("x", nil, map[string]string{"a": "1"}), http.StatusCreated, &created)
	rv1 := rvInt(t, created.ResourceVersion)

	var list corev1.ConfigMapList
	c.call(http.MethodGet, base, nil, http.StatusOK, &list)
	if got := rvInt(t, list.ResourceVersion); got < rv1 {
		t.Errorf("list resourceVersion %d is older than the create's %d", got, rv1)
	}
	found := false
	for _, it := range list.Items {
		if it.Name == "x" {
			found = true
			if it.ResourceVersion != created.ResourceVersion {
				t.Errorf("listed x at rv %s, want %s", it.ResourceVersion, created.ResourceVersion)
			}
		}
	}
	if !found {
		t.Errorf("a consistent list right after the create does not contain it")
	}

	// An update with the current RV succeeds and moves the RV forward.
	upd := created.DeepCopy()
	upd.Data["a"] = "2"
	var updated corev1.ConfigMap
	c.call(http.MethodPut, base+"/x", upd, http.StatusOK, &updated)
	rv2 := rvInt(t, updated.ResourceVersion)
	if rv2 <= rv1 {
		t.Errorf("update resourceVersion %d not after create's %d", rv2, rv1)
	}

	var got corev1.ConfigMap
	c.call(http.MethodGet, base+"/x", nil, http.StatusOK, &got)
	if got.ResourceVersion != updated.ResourceVersion {
		t.Errorf("GET resourceVersion %s, want %s", got.ResourceVersion, updated.ResourceVersion)
	}

	tests := []struct {
		name       string
		rv         string
		wantCode   int
		wantReason metav1.StatusReason
		wantMsg    string
	}{
		{
			name: "stale resourceVersion conflicts", rv: created.ResourceVersion,
			wantCode: http.StatusConflict, wantReason: metav1.StatusReasonConflict,
			wantMsg: `Operation cannot be fulfilled on configmaps "x": the object has been modified; please apply your changes to the latest version and try again`,
		},
		{name: "no resourceVersion is an unconditional update", rv: "", wantCode: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			var cur corev1.ConfigMap
			c.call(http.MethodGet, base+"/x", nil, http.StatusOK, &cur)
			body := cur.DeepCopy()
			body.ResourceVersion = tt.rv
			body.Data["a"] = tt.name
			code, _, data := c.do(http.MethodPut, base+"/x", body, "", "")
			if tt.wantCode != http.StatusOK {
				st := expectStatus(t, code, data, tt.wantCode, tt.wantReason, tt.wantMsg)
				if st.Details == nil || st.Details.Name != "x" || st.Details.Kind != "configmaps" {
					t.Errorf("details = %+v, want name x kind configmaps", st.Details)
				}
				var after corev1.ConfigMap
				c.call(http.MethodGet, base+"/x", nil, http.StatusOK, &after)
				if after.ResourceVersion != cur.ResourceVersion || after.Data["a"] != cur.Data["a"] {
					t.Errorf("a refused update changed the object: %+v", after)
				}
				return
			}
			if code != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", code, tt.wantCode, data)
			}
			m := metaOf(t, data)
			if rvInt(t, m.ResourceVersion) <= rvInt(t, cur.ResourceVersion) {
				t.Errorf("unconditional update rv %s not after %s", m.ResourceVersion, cur.ResourceVersion)
			}
		})
	}
}
