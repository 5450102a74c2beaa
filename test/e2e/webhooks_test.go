package e2e

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A validating admission webhook served by the test process: kubectl
// apply of a pod it refuses fails with the webhook's message, and the
// warnings it returns for the pods it lets through reach kubectl.
func TestAdmissionWebhookKubectl(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()
	const ns = "e2e-webhooks"

	dir, now := t.TempDir(), time.Now()
	ca, err := pki.EnsureNamedCA(dir, "webhook-ca", "webhook-ca", now)
	if err != nil {
		t.Fatal(err)
	}
	hostIP := testenv.HostIPv4()
	hosts := []string{"127.0.0.1", "hooks." + ns + ".svc"}
	if hostIP != "" {
		hosts = append(hosts, hostIP)
	}
	serving, err := pki.EnsureServing(dir, "webhook", ca, hosts, now)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key}}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
				http.Error(w, "bad review", http.StatusBadRequest)
				return
			}
			var pod struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			json.Unmarshal(review.Request.Object.Raw, &pod)
			if r.URL.Path == "/mutate" {
				patch, _ := json.Marshal([]any{map[string]any{"op": "add", "path": "/metadata/labels/mutated-by", "value": "e2e-webhook"}})
				pt := admissionv1.PatchTypeJSONPatch
				review.Response, review.Request = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true, Patch: patch, PatchType: &pt}, nil
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(review)
				return
			}
			resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true, Warnings: []string{"pod " + pod.Metadata.Name + " checked by the e2e webhook"}}
			if pod.Metadata.Labels["refuse"] == "yes" {
				resp = &admissionv1.AdmissionResponse{UID: review.Request.UID, Result: &metav1.Status{Code: 403, Message: "pods labeled refuse=yes are not admitted"}}
			}
			review.Response, review.Request = resp, nil
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(review)
		})}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })

	createNS(t, c, ns)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	config := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: e2e-pod-policy}
webhooks:
- name: pods.e2e.skiff.sh
  clientConfig:
    url: https://127.0.0.1:` + port + `/validate
    caBundle: ` + base64.StdEncoding.EncodeToString(ca.CertPEM) + `
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ` + ns + `}}
  admissionReviewVersions: [v1]
  sideEffects: None
  timeoutSeconds: 5
`
	wantLines(t, k.withStdin(config).ok(t, "apply", "-f", "-"), "validatingwebhookconfiguration.admissionregistration.k8s.io/e2e-pod-policy created")
	t.Cleanup(func() { k.run(t, "delete", "validatingwebhookconfiguration", "e2e-pod-policy") })

	pod := func(name, refuse string) string {
		return `apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, namespace: ` + ns + `, labels: {refuse: "` + refuse + `"}}
spec:
  containers: [{name: c, image: nginx:1.27}]
`
	}
	const denied = `admission webhook "pods.e2e.skiff.sh" denied the request: pods labeled refuse=yes are not admitted`
	// the configuration takes effect once the API server's cache has it
	eventually(t, 30*time.Second, "the webhook to refuse a dry-run pod", func() (bool, string) {
		_, errOut, err := k.withStdin(pod("refused", "yes")).run(t, "apply", "--dry-run=server", "-f", "-")
		return err != nil && strings.Contains(errOut, denied), errOut
	})
	wantContains(t, k.withStdin(pod("refused", "yes")).fails(t, "apply", "-f", "-"), denied)
	k.fails(t, "-n", ns, "get", "pod", "refused")

	out, errOut, err := k.withStdin(pod("admitted", "no")).run(t, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("apply: %v: %s", err, errOut)
	}
	wantLines(t, out, "pod/admitted created")
	wantContains(t, errOut, "Warning: pod admitted checked by the e2e webhook")

	// A mutating webhook behind a service: the API server dials a ready
	// endpoint of its EndpointSlice, verifying hooks.<ns>.svc.
	if hostIP == "" {
		t.Skip("no non-loopback IPv4 address for an EndpointSlice")
	}
	svc := `apiVersion: v1
kind: Service
metadata: {name: hooks, namespace: ` + ns + `}
spec:
  ports: [{name: https, port: 443, targetPort: ` + port + `}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: hooks-1, namespace: ` + ns + `, labels: {kubernetes.io/service-name: hooks}}
addressType: IPv4
endpoints: [{addresses: ["` + hostIP + `"], conditions: {ready: true}}]
ports: [{name: https, port: ` + port + `}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: e2e-pod-labels}
webhooks:
- name: labels.e2e.skiff.sh
  clientConfig:
    service: {namespace: ` + ns + `, name: hooks, path: /mutate}
    caBundle: ` + base64.StdEncoding.EncodeToString(ca.CertPEM) + `
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ` + ns + `}}
  admissionReviewVersions: [v1]
  sideEffects: None
  timeoutSeconds: 5
`
	k.withStdin(svc).ok(t, "apply", "-f", "-")
	t.Cleanup(func() { k.run(t, "delete", "mutatingwebhookconfiguration", "e2e-pod-labels") })
	eventually(t, 30*time.Second, "the mutating webhook to label a dry-run pod", func() (bool, string) {
		out, errOut, err := k.withStdin(pod("mutated", "no")).run(t, "apply", "--dry-run=server", "-f", "-", "-o", "jsonpath={.metadata.labels.mutated-by}")
		return err == nil && out == "e2e-webhook", out + errOut
	})
	k.withStdin(pod("mutated", "no")).ok(t, "apply", "-f", "-")
	if got := k.ok(t, "-n", ns, "get", "pod", "mutated", "-o", "jsonpath={.metadata.labels.mutated-by}"); got != "e2e-webhook" {
		t.Errorf("label mutated-by = %q, want the webhook's", got)
	}
}
