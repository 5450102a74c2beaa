package apiserver_test

import (
	"net/http"
	"net/url"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// events.k8s.io/v1 takes upstream's field selector keys (regarding.*,
// reportingController, ...), selecting on the stored core/v1 fields; the
// core-only keys (involvedObject.*, source) are refused there and still
// work on core/v1.
func TestEventsV1FieldSelectors(t *testing.T) {
	c := start(t)
	ns := c.namespace("evfields")
	coreEvents := "/api/v1/namespaces/" + ns + "/events"
	for _, e := range []struct{ name, pod, reason string }{{"e1", "web", "Started"}, {"e2", "db", "Started"}, {"e3", "web", "Killing"}} {
		c.call(http.MethodPost, coreEvents, jsonObj{"apiVersion": "v1", "kind": "Event", "metadata": jsonObj{"name": e.name},
			"involvedObject": jsonObj{"kind": "Pod", "name": e.pod, "namespace": ns}, "reason": e.reason, "type": "Normal",
			"source": jsonObj{"component": "kubelet"}, "reportingComponent": "kubelet", "reportingInstance": "node-a"},
			http.StatusCreated, nil)
	}
	names := func(path, sel string) []any {
		list := decodeObj(t, c.call(http.MethodGet, path+"?fieldSelector="+url.QueryEscape(sel), nil, http.StatusOK, nil))
		var out []any
		items, _ := list["items"].([]any)
		for _, it := range items {
			out = append(out, jsonField(it, "metadata", "name"))
		}
		return out
	}
	v1 := "/apis/events.k8s.io/v1/namespaces/" + ns + "/events"
	for _, tc := range []struct {
		path, sel string
		want      []any
	}{
		{v1, "regarding.name=web", []any{"e1", "e3"}},
		{v1, "regarding.kind=Pod,reason=Started", []any{"e1", "e2"}},
		{v1, "reportingController=kubelet,regarding.name!=web", []any{"e2"}},
		{v1, "metadata.name=e3", []any{"e3"}},
		{coreEvents, "involvedObject.name=db", []any{"e2"}},
		{coreEvents, "source=kubelet,reason=Killing", []any{"e3"}},
	} {
		if err := expectEqual(tc.path+"?"+tc.sel, names(tc.path, tc.sel), tc.want); err != nil {
			t.Error(err)
		}
	}
	for _, field := range []string{"involvedObject.name", "source"} {
		code, _, data := c.do(http.MethodGet, v1+"?fieldSelector="+url.QueryEscape(field+"=web"), nil, "", "")
		expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "field label not supported: "+field)
	}
}

// An events.k8s.io/v1 Event posted without metadata.namespace takes the
// request's namespace, as upstream (its validation requires one).
func TestEventsV1CreateTakesRequestNamespace(t *testing.T) {
	c := start(t)
	ns := c.namespace("evns")
	body := jsonObj{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": jsonObj{"name": "e1"},
		"eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
		"action": "Sync", "reason": "Synced", "type": "Normal", "regarding": jsonObj{"kind": "Pod", "name": "web", "namespace": ns}}
	got := decodeObj(t, c.call(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/"+ns+"/events", body, http.StatusCreated, nil))
	if err := expectEqual("namespace", jsonField(got, "metadata", "namespace"), ns); err != nil {
		t.Error(err)
	}
	// A mismatched namespace is still refused.
	body["metadata"] = jsonObj{"name": "e2", "namespace": "other"}
	code, _, data := c.do(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/"+ns+"/events", body, "", "")
	expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest,
		"the namespace of the provided object does not match the namespace sent on the request")
}
