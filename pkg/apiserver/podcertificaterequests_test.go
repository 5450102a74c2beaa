package apiserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"net/http"
	"net/url"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// certificates.k8s.io/v1 podcertificaterequests over HTTP: defaulted
// maxExpirationSeconds, status reset on create, spec.nodeName field
// selector, a signer's denial through the status subresource, and a
// terminal status that no longer changes.
func TestPodCertificateRequests(t *testing.T) {
	c := start(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	ns := c.namespace("pcr")
	coll := "/apis/certificates.k8s.io/v1/namespaces/" + ns + "/podcertificaterequests"
	created := decodeObj(t, c.call(http.MethodPost, coll, jsonObj{"apiVersion": "certificates.k8s.io/v1", "kind": "PodCertificateRequest",
		"metadata": jsonObj{"name": "pcr"}, "spec": jsonObj{"signerName": "example.com/signer", "podName": "web", "podUID": "p-uid",
			"serviceAccountName": "default", "serviceAccountUID": "sa-uid", "nodeName": "node1", "nodeUID": "n-uid", "stubPKCS10Request": stub},
		"status": jsonObj{"conditions": []any{jsonObj{"type": "Issued", "status": "True", "reason": "X", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}},
		http.StatusCreated, nil))
	if jsonField(created, "spec", "maxExpirationSeconds") != float64(86400) {
		t.Errorf("maxExpirationSeconds = %v, want 86400", jsonField(created, "spec", "maxExpirationSeconds"))
	}
	if s, _ := created["status"].(jsonObj); len(s) != 0 {
		t.Errorf("status kept on create: %v", s)
	}
	for sel, want := range map[string]int{"spec.nodeName=node1": 1, "spec.nodeName=node2": 0, "spec.signerName=example.com/signer": 1} {
		list := decodeObj(t, c.call(http.MethodGet, coll+"?fieldSelector="+url.QueryEscape(sel), nil, http.StatusOK, nil))
		if items, _ := list["items"].([]any); len(items) != want {
			t.Errorf("%s: %d items, want %d", sel, len(items), want)
		}
	}
	created["status"] = jsonObj{"conditions": []any{jsonObj{"type": "Denied", "status": "True", "reason": "UnsupportedKeyType", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	denied := decodeObj(t, c.call(http.MethodPut, coll+"/pcr/status", created, http.StatusOK, nil))
	jsonField(denied, "status", "conditions", "0").(jsonObj)["message"] = "changed my mind"
	code, _, data := c.do(http.MethodPut, coll+"/pcr/status", denied, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`PodCertificateRequest.certificates.k8s.io "pcr" is invalid: status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed`)
}
