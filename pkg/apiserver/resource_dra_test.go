package apiserver_test

import (
	"net/http"
	"net/url"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resource.k8s.io/v1 over HTTP: defaulting on create, alpha fields dropped, 422 with upstream's
// message, ResourceSlice field selectors (spec.nodeName, spec.driver,
// spec.pool.name; others refused), the ResourceClaim status subresource
// (the main resource ignores status; status ignores spec), and a spec
// update of an immutable claim refused.
func TestDynamicResourceAllocationResources(t *testing.T) {
	c := start(t)
	const base = "/apis/resource.k8s.io/v1"

	class := jsonObj{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": jsonObj{"name": "dra-gpu.example.com"},
		"spec": jsonObj{"selectors": []any{jsonObj{"cel": jsonObj{"expression": `device.driver == "gpu.example.com"`}}}}}
	created := decodeObj(t, c.call(http.MethodPost, base+"/deviceclasses", class, http.StatusCreated, nil))
	if g := jsonField(created, "metadata", "generation"); g != float64(1) {
		t.Errorf("deviceclass generation %v, want 1", g)
	}

	for _, s := range []struct{ name, node, driver string }{
		{"dra-a", "node-a", "gpu.example.com"}, {"dra-b", "node-b", "gpu.example.com"}, {"dra-c", "node-a", "nic.example.com"},
	} {
		c.call(http.MethodPost, base+"/resourceslices", jsonObj{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
			"metadata": jsonObj{"name": s.name}, "spec": jsonObj{"driver": s.driver, "nodeName": s.node, "skipNodeOperations": []any{"*"},
				"pool":    jsonObj{"name": s.node, "resourceSliceCount": 1},
				"devices": []any{jsonObj{"name": "dev-0", "taints": []any{jsonObj{"key": "example.com/t", "effect": "None"}}}}}},
			http.StatusCreated, nil)
	}
	names := func(sel string) []any {
		list := decodeObj(t, c.call(http.MethodGet, base+"/resourceslices?fieldSelector="+url.QueryEscape(sel), nil, http.StatusOK, nil))
		var out []any
		items, _ := list["items"].([]any)
		for _, it := range items {
			out = append(out, jsonField(it, "metadata", "name"))
		}
		return out
	}
	for sel, want := range map[string][]any{
		"spec.nodeName=node-a":                              {"dra-a", "dra-c"},
		"spec.driver=gpu.example.com":                       {"dra-a", "dra-b"},
		"spec.pool.name=node-b":                             {"dra-b"},
		"spec.nodeName=node-a,spec.driver!=gpu.example.com": {"dra-c"},
	} {
		if err := expectEqual(sel, names(sel), want); err != nil {
			t.Error(err)
		}
	}
	code, _, data := c.do(http.MethodGet, base+"/resourceslices?fieldSelector=spec.devices=x", nil, "", "")
	expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "field label not supported: spec.devices")
	slice := decodeObj(t, c.call(http.MethodGet, base+"/resourceslices/dra-a", nil, http.StatusOK, nil))
	if v := jsonField(slice, "spec", "skipNodeOperations"); v != nil {
		t.Errorf("alpha field spec.skipNodeOperations stored: %v", v)
	}
	if jsonField(slice, "spec", "devices", "0", "taints", "0", "timeAdded") == nil {
		t.Errorf("device taint without timeAdded: %v", jsonField(slice, "spec", "devices"))
	}

	// 422 with upstream's message.
	code, _, data = c.do(http.MethodPost, base+"/resourceslices", jsonObj{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
		"metadata": jsonObj{"name": "dra-bad"}, "spec": jsonObj{"driver": "gpu.example.com", "pool": jsonObj{"name": "p", "resourceSliceCount": 1}}}, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		"ResourceSlice.resource.k8s.io \"dra-bad\" is invalid: spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")

	// A claim: defaulted, status reset on create, spec immutable, status
	// through the subresource only.
	ns := c.namespace("dra")
	claims := "/apis/resource.k8s.io/v1/namespaces/" + ns + "/resourceclaims"
	claim := jsonObj{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": jsonObj{"name": "claim"},
		"spec":   jsonObj{"devices": jsonObj{"requests": []any{jsonObj{"name": "gpu", "exactly": jsonObj{"deviceClassName": "dra-gpu.example.com"}}}}},
		"status": jsonObj{"reservedFor": []any{jsonObj{"resource": "pods", "name": "p", "uid": "u1"}}}}
	got := decodeObj(t, c.call(http.MethodPost, claims, claim, http.StatusCreated, nil))
	if err := expectEqual("defaulted request", jsonField(got, "spec", "devices", "requests", "0", "exactly"),
		map[string]any{"deviceClassName": "dra-gpu.example.com", "allocationMode": "ExactCount", "count": float64(1)}); err != nil {
		t.Error(err)
	}
	if s := got["status"]; s != nil && len(s.(jsonObj)) != 0 {
		t.Errorf("status kept on create: %v", s)
	}
	jsonField(got, "spec", "devices", "requests", "0", "exactly").(jsonObj)["deviceClassName"] = "other"
	code, _, data = c.do(http.MethodPut, claims+"/claim", got, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")

	got = decodeObj(t, c.call(http.MethodGet, claims+"/claim", nil, http.StatusOK, nil))
	got["status"] = jsonObj{"allocation": jsonObj{"devices": jsonObj{"results": []any{
		jsonObj{"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "dev-0"}}}},
		"reservedFor": []any{jsonObj{"resource": "pods", "name": "p", "uid": "u1"}}}
	updated := decodeObj(t, c.call(http.MethodPut, claims+"/claim/status", got, http.StatusOK, nil))
	if jsonField(updated, "status", "allocation", "devices", "results", "0", "device") != "dev-0" {
		t.Errorf("status update lost the allocation: %v", updated["status"])
	}
	// Admin access needs the namespace's admin label, as upstream.
	admin := jsonObj{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": jsonObj{"name": "admin"},
		"spec": jsonObj{"devices": jsonObj{"requests": []any{
			jsonObj{"name": "gpu", "exactly": jsonObj{"deviceClassName": "dra-gpu.example.com", "adminAccess": true}}}}}}
	code, _, data = c.do(http.MethodPost, claims, admin, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		"ResourceClaim.resource.k8s.io \"admin\" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace")
	code, _, data = c.do(http.MethodPost, "/apis/resource.k8s.io/v1/namespaces/"+ns+"/resourceclaimtemplates", jsonObj{
		"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": jsonObj{"name": "admin"}, "spec": jsonObj{"spec": admin["spec"]}}, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		"ResourceClaimTemplate.resource.k8s.io \"admin\" is invalid: spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace")
	code, data = c.patch("/api/v1/namespaces/"+ns, "application/merge-patch+json", `{"metadata":{"labels":{"resource.kubernetes.io/admin-access":"true"}}}`)
	if code != http.StatusOK {
		t.Fatalf("labelling the namespace: %d %s", code, data)
	}
	c.call(http.MethodPost, claims, admin, http.StatusCreated, nil)

	// A consumer without an allocation is refused.
	stale := decodeObj(t, c.call(http.MethodGet, claims+"/claim", nil, http.StatusOK, nil))
	stale["status"] = jsonObj{"reservedFor": []any{jsonObj{"resource": "pods", "name": "p", "uid": "u1"}}}
	code, _, data = c.do(http.MethodPut, claims+"/claim/status", stale, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")

	// A driver reports its device; deallocating drops that report, as
	// upstream (the controller that deallocates leaves status.devices).
	withDevice := jsonField(updated, "status").(jsonObj)
	withDevice["devices"] = []any{jsonObj{"driver": "gpu.example.com", "pool": "node-a", "device": "dev-0",
		"conditions": []any{jsonObj{"type": "Ready", "status": "True", "reason": "Prepared", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}}
	updated = decodeObj(t, c.call(http.MethodPut, claims+"/claim/status", updated, http.StatusOK, nil))
	if jsonField(updated, "status", "devices", "0", "device") != "dev-0" {
		t.Fatalf("device status not stored: %v", updated["status"])
	}
	updated["status"] = jsonObj{"devices": jsonField(updated, "status", "devices")}
	deallocated := decodeObj(t, c.call(http.MethodPut, claims+"/claim/status", updated, http.StatusOK, nil))
	if s, _ := deallocated["status"].(jsonObj); len(s) != 0 {
		t.Errorf("status after deallocation: %v", s)
	}
}
