package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The control-plane APIs: upstream's flowcontrol bootstrap objects and the
// local APIServices exist; a CertificateSigningRequest created with
// kubectl records its requester and is approved with `kubectl
// certificate approve`; an admission policy is stored and listed.
func kubectlControlPlaneAPIs(t *testing.T, c *cluster, k kc) {
	out := k.ok(t, "get", "flowschemas,prioritylevelconfigurations,apiservices")
	wantContains(t, out,
		"flowschema.flowcontrol.apiserver.k8s.io/exempt", "flowschema.flowcontrol.apiserver.k8s.io/global-default",
		"flowschema.flowcontrol.apiserver.k8s.io/system-leader-election",
		"prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/catch-all", "prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/workload-high",
		"apiservice.apiregistration.k8s.io/v1.apps", "apiservice.apiregistration.k8s.io/v1.flowcontrol.apiserver.k8s.io")
	wantTable(t, k.ok(t, "get", "prioritylevelconfiguration", "exempt", "workload-low"),
		[]string{"NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"},
		[]string{"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", `\S+`},
		[]string{"workload-low", "Limited", "100", "128", "6", "50", `\S+`})
	wantTable(t, k.ok(t, "get", "flowschema", "kube-scheduler"),
		[]string{"NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"},
		[]string{"kube-scheduler", "workload-high", "800", "ByNamespace", `\S+`, "False"})
	wantTable(t, k.ok(t, "get", "apiservice", "v1.apps"),
		[]string{"NAME", "SERVICE", "AVAILABLE", "AGE"}, []string{"v1.apps", "Local", "True", `\S+`})

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "e2e-user"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	request := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	csr := `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: e2e-user}
spec:
  request: ` + request + `
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages: [client auth]
  username: someone-else
`
	wantLines(t, k.withStdin(csr).ok(t, "create", "-f", "-"), "certificatesigningrequest.certificates.k8s.io/e2e-user created")
	me := strings.TrimSpace(k.ok(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"))
	wantEqual(t, "the CSR's requester", jsonpath(t, k, "{.spec.username}", "get", "csr", "e2e-user"), me)
	wantTable(t, k.ok(t, "get", "csr", "e2e-user"),
		[]string{"NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"},
		[]string{"e2e-user", `\S+`, "kubernetes.io/kube-apiserver-client", me, "24h", "Pending"})
	wantMatch(t, k.ok(t, "describe", "csr", "e2e-user"), `Requesting User:\s+`+me, `Signer:\s+kubernetes.io/kube-apiserver-client`,
		`Common Name:\s+e2e-user`, `Status:\s+Pending`)
	wantLines(t, k.ok(t, "certificate", "approve", "e2e-user"), "certificatesigningrequest.certificates.k8s.io/e2e-user approved")
	wantTable(t, k.ok(t, "get", "csr", "e2e-user"),
		[]string{"NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"},
		[]string{"e2e-user", `\S+`, "kubernetes.io/kube-apiserver-client", me, "24h", "Approved(,Issued)?"})
	// The signing controller of `skiff up` issues it with the cluster CA,
	// for the requested 24h (backdated by 5 minutes: valid now-5m to now+24h-5m).
	eventually(t, 30*time.Second, "the CSR issued", func() (bool, string) {
		out, _, _ := k.run(t, "get", "csr", "e2e-user")
		return strings.Contains(out, "Approved,Issued"), out
	})
	issued, err := base64.StdEncoding.DecodeString(jsonpath(t, k, "{.status.certificate}", "get", "csr", "e2e-user"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(issued)
	if block == nil {
		t.Fatalf("status.certificate is not PEM: %q", issued)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(c.dataDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	caBlock, _ := pem.Decode(caPEM)
	ca, err := x509.ParseCertificate(caBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Errorf("the issued certificate is not signed by the cluster CA: %v", err)
	}
	if cert.Subject.CommonName != "e2e-user" || len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth {
		t.Errorf("issued certificate: subject %v, ext key usages %v", cert.Subject, cert.ExtKeyUsage)
	}
	if d := cert.NotAfter.Sub(cert.NotBefore); d != 24*time.Hour {
		t.Errorf("issued for %v, want 24h (from now-5m to now+24h-5m)", d)
	}
	// CertificateSubjectRestriction: no client certificates for system:masters.
	der, err = x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "e2e-admin", Organization: []string{"system:masters"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	masters := strings.Replace(strings.Replace(csr, "e2e-user}", "e2e-masters}", 1), request,
		base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), 1)
	wantContains(t, k.withStdin(masters).fails(t, "create", "-f", "-"),
		`certificatesigningrequests.certificates.k8s.io "e2e-masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`)
	short := strings.Replace(strings.Replace(csr, "e2e-user}", "e2e-short}", 1), "86400", "60", 1)
	wantContains(t, k.withStdin(short).fails(t, "create", "-f", "-"),
		"spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)")

	policy := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: e2e-replicas}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= 5"}]
`
	wantLines(t, k.withStdin(policy).ok(t, "apply", "-f", "-"), "validatingadmissionpolicy.admissionregistration.k8s.io/e2e-replicas created")
	wantTable(t, k.ok(t, "get", "validatingadmissionpolicy", "e2e-replicas"),
		[]string{"NAME", "VALIDATIONS", "PARAMKIND", "AGE"}, []string{"e2e-replicas", "1", "<unset>", `\S+`})
	broken := strings.Replace(strings.Replace(policy, "e2e-replicas}", "e2e-broken}", 1), "object.spec.replicas <= 5", "object.spec.replicas <=", 1)
	wantContains(t, k.withStdin(broken).fails(t, "apply", "-f", "-"),
		`spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:1:24: Syntax error`)
	hook := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: e2e-hook}
webhooks:
- name: check.e2e.example.com
  clientConfig: {url: "https://hook.example.com/validate"}
  admissionReviewVersions: [v1]
`
	wantContains(t, k.withStdin(hook).fails(t, "apply", "-f", "-"), "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun")
}
