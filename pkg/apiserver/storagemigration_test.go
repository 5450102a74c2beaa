package apiserver_test

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// storagemigration.k8s.io/v1 over HTTP: status reset on create and set
// through the subresource only, the spec immutable, and (as upstream) no
// update without a resourceVersion.
func TestStorageVersionMigrations(t *testing.T) {
	c := start(t)
	const coll = "/apis/storagemigration.k8s.io/v1/storageversionmigrations"
	created := decodeObj(t, c.call(http.MethodPost, coll, jsonObj{"apiVersion": "storagemigration.k8s.io/v1", "kind": "StorageVersionMigration",
		"metadata": jsonObj{"name": "svm-secrets"}, "spec": jsonObj{"resource": jsonObj{"resource": "secrets"}},
		"status": jsonObj{"resourceVersion": "7"}}, http.StatusCreated, nil))
	if s, _ := created["status"].(jsonObj); len(s) != 0 {
		t.Errorf("status kept on create: %v", s)
	}
	created["status"] = jsonObj{"resourceVersion": "12", "conditions": []any{jsonObj{"type": "Running", "status": "True", "reason": "Started",
		"lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	updated := decodeObj(t, c.call(http.MethodPut, coll+"/svm-secrets/status", created, http.StatusOK, nil))
	if jsonField(updated, "status", "resourceVersion") != "12" {
		t.Errorf("status update: %v", updated["status"])
	}
	jsonField(updated, "spec", "resource").(jsonObj)["group"] = "apps"
	code, _, data := c.do(http.MethodPut, coll+"/svm-secrets", updated, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`StorageVersionMigration.storagemigration.k8s.io "svm-secrets" is invalid: group: Invalid value: "apps": field is immutable`)
	delete(jsonField(updated, "metadata").(jsonObj), "resourceVersion")
	jsonField(updated, "spec", "resource").(jsonObj)["group"] = ""
	code, _, data = c.do(http.MethodPut, coll+"/svm-secrets", updated, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
}
