package apiserver_test

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerResources is a container's resources stanza.
func containerResources(requests, limits map[string]any) map[string]any {
	r := map[string]any{}
	if requests != nil {
		r["requests"] = requests
	}
	if limits != nil {
		r["limits"] = limits
	}
	return r
}

// sizedPod is a Pod whose containers (and init containers) have the given
// resources.
func sizedPod(name string, containers []map[string]any, initContainers []map[string]any) map[string]any {
	list := func(prefix string, rs []map[string]any) []any {
		var out []any
		for i, r := range rs {
			out = append(out, map[string]any{"name": prefix + string(rune('a'+i)), "image": "nginx:1.27", "resources": r})
		}
		return out
	}
	spec := map[string]any{"containers": list("app-", containers)}
	if initContainers != nil {
		spec["initContainers"] = list("init-", initContainers)
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name}, "spec": spec}
}

// sizedClaim is a PersistentVolumeClaim requesting storage.
func sizedClaim(name, storage string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"accessModes": []string{"ReadWriteOnce"},
			"resources":   map[string]any{"requests": map[string]any{"storage": storage}},
		},
	}
}

// LimitRanger over HTTP: Container, Pod and PersistentVolumeClaim bounds
// reject with 403 Forbidden and upstream's messages (a single violation
// without brackets, several in them); objects within bounds are created.
func TestLimitRangerRejections(t *testing.T) {
	c := start(t)
	limitRange := func(ns string, item map[string]any) {
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/limitranges", map[string]any{
			"apiVersion": "v1", "kind": "LimitRange", "metadata": map[string]any{"name": "bounds"},
			"spec": map[string]any{"limits": []any{item}},
		}, http.StatusCreated, nil)
	}
	ctrNS, ratioNS, podNS, pvcNS := c.namespace("lr-container"), c.namespace("lr-ratio"), c.namespace("lr-pod"), c.namespace("lr-pvc")
	// A claim made before its namespace had bounds; updating it later is
	// checked against them.
	c.call(http.MethodPost, "/api/v1/namespaces/"+pvcNS+"/persistentvolumeclaims", sizedClaim("early", "20Gi"), http.StatusCreated, nil)

	limitRange(ctrNS, map[string]any{"type": "Container", "max": map[string]any{"cpu": "1"}, "min": map[string]any{"cpu": "100m"}})
	limitRange(ratioNS, map[string]any{"type": "Container", "maxLimitRequestRatio": map[string]any{"cpu": "2"}})
	limitRange(podNS, map[string]any{"type": "Pod", "max": map[string]any{"cpu": "1"}})
	limitRange(pvcNS, map[string]any{"type": "PersistentVolumeClaim", "min": map[string]any{"storage": "1Gi"}, "max": map[string]any{"storage": "10Gi"}})

	cpu := func(v string) map[string]any { return map[string]any{"cpu": v} }
	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		ctype   string
		wantMsg string // "" = accepted
	}{
		{
			name: "container max", method: http.MethodPost, path: "/api/v1/namespaces/" + ctrNS + "/pods",
			body:    sizedPod("big", []map[string]any{containerResources(cpu("500m"), cpu("2"))}, nil),
			wantMsg: `pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2`,
		},
		{
			name: "container min and max", method: http.MethodPost, path: "/api/v1/namespaces/" + ctrNS + "/pods",
			body:    sizedPod("lopsided", []map[string]any{containerResources(cpu("50m"), cpu("2"))}, nil),
			wantMsg: `pods "lopsided" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, maximum cpu usage per Container is 1, but limit is 2]`,
		},
		{
			name: "init container max", method: http.MethodPost, path: "/api/v1/namespaces/" + ctrNS + "/pods",
			body:    sizedPod("init", []map[string]any{containerResources(cpu("200m"), cpu("1"))}, []map[string]any{containerResources(cpu("200m"), cpu("3"))}),
			wantMsg: `pods "init" is forbidden: maximum cpu usage per Container is 1, but limit is 3`,
		},
		{
			name: "container within bounds", method: http.MethodPost, path: "/api/v1/namespaces/" + ctrNS + "/pods",
			body: sizedPod("fits", []map[string]any{containerResources(cpu("200m"), cpu("1"))}, nil),
		},
		{
			name: "container defaulted into bounds", method: http.MethodPost, path: "/api/v1/namespaces/" + ctrNS + "/pods",
			body: sizedPod("defaulted", []map[string]any{{}}, nil),
		},
		{
			name: "container ratio", method: http.MethodPost, path: "/api/v1/namespaces/" + ratioNS + "/pods",
			body:    sizedPod("bursty", []map[string]any{containerResources(cpu("250m"), cpu("1"))}, nil),
			wantMsg: `pods "bursty" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000`,
		},
		{
			name: "container ratio without a limit", method: http.MethodPost, path: "/api/v1/namespaces/" + ratioNS + "/pods",
			body:    sizedPod("unbounded", []map[string]any{containerResources(cpu("250m"), nil)}, nil),
			wantMsg: `pods "unbounded" is forbidden: cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0`,
		},
		{
			name: "pod max over the containers' sum", method: http.MethodPost, path: "/api/v1/namespaces/" + podNS + "/pods",
			body:    sizedPod("sum", []map[string]any{containerResources(nil, cpu("600m")), containerResources(nil, cpu("600m"))}, nil),
			wantMsg: `pods "sum" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m`,
		},
		{
			name: "pod max: the largest init container", method: http.MethodPost, path: "/api/v1/namespaces/" + podNS + "/pods",
			body:    sizedPod("initpeak", []map[string]any{containerResources(nil, cpu("500m"))}, []map[string]any{containerResources(nil, cpu("1500m"))}),
			wantMsg: `pods "initpeak" is forbidden: maximum cpu usage per Pod is 1, but limit is 1500m`,
		},
		{
			name: "pod max: no limit", method: http.MethodPost, path: "/api/v1/namespaces/" + podNS + "/pods",
			body:    sizedPod("nolimit", []map[string]any{{}}, nil),
			wantMsg: `pods "nolimit" is forbidden: maximum cpu usage per Pod is 1.  No limit is specified`,
		},
		{
			name: "pod within bounds", method: http.MethodPost, path: "/api/v1/namespaces/" + podNS + "/pods",
			body: sizedPod("small", []map[string]any{containerResources(nil, cpu("500m")), containerResources(nil, cpu("500m"))}, []map[string]any{containerResources(nil, cpu("1"))}),
		},
		{
			name: "claim max", method: http.MethodPost, path: "/api/v1/namespaces/" + pvcNS + "/persistentvolumeclaims",
			body:    sizedClaim("huge", "20Gi"),
			wantMsg: `persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`,
		},
		{
			name: "claim min", method: http.MethodPost, path: "/api/v1/namespaces/" + pvcNS + "/persistentvolumeclaims",
			body:    sizedClaim("wee", "500Mi"),
			wantMsg: `persistentvolumeclaims "wee" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`,
		},
		{
			name: "claim within bounds", method: http.MethodPost, path: "/api/v1/namespaces/" + pvcNS + "/persistentvolumeclaims",
			body: sizedClaim("fine", "5Gi"),
		},
		{
			name: "claim update is checked", method: http.MethodPatch, path: "/api/v1/namespaces/" + pvcNS + "/persistentvolumeclaims/early",
			body: `{"metadata":{"labels":{"touched":"yes"}}}`, ctype: "application/merge-patch+json",
			wantMsg: `persistentvolumeclaims "early" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`,
		},
	}

	// Admission reads LimitRanges from the watch cache, as a list at
	// resourceVersion 0 does: wait until every range is there.
	for _, ns := range []string{ctrNS, ratioNS, podNS, pvcNS} {
		eventually(t, "the LimitRange of "+ns+" in the watch cache", func() bool {
			var list struct {
				Items []struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				} `json:"items"`
			}
			c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/limitranges?resourceVersion=0", nil, http.StatusOK, &list)
			return len(list.Items) == 1
		})
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			code, _, data := c.do(tt.method, tt.path, tt.body, tt.ctype, "")
			if tt.wantMsg == "" {
				if code != http.StatusCreated {
					t.Fatalf("status %d, want 201: %s", code, data)
				}
				return
			}
			st := expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, tt.wantMsg)
			if st.Details == nil || st.Details.Name == "" {
				t.Errorf("details %+v, want the object's name", st.Details)
			}
		})
	}
}
