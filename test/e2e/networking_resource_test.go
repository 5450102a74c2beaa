package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// networking.k8s.io Ingress, IngressClass and NetworkPolicy and
// resource.k8s.io DeviceClass, ResourceSlice and ResourceClaim created
// with kubectl: upstream's columns (-o wide included), defaulting, the
// Ingress status subresource, the default IngressClass, a 422 with upstream's message and
// ResourceSlice field selectors.
func kubectlNetworkingAndDRA(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-netdra"
	createNS(t, c, ns)
	objs := `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: e2e-nginx
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: ` + ns + `}
spec:
  ingressClassName: e2e-nginx
  rules:
  - host: foo.example.com
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db, namespace: ` + ns + `}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress: [{ports: [{port: 5432}]}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: e2e-node-a-gpu}
spec: {driver: gpu.example.com, nodeName: e2e-node-a, pool: {name: e2e-node-a, resourceSliceCount: 1}, devices: [{name: gpu-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: e2e-node-b-gpu}
spec: {driver: gpu.example.com, nodeName: e2e-node-b, pool: {name: e2e-node-b, resourceSliceCount: 1}, devices: [{name: gpu-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: ` + ns + `}
spec:
  devices: {requests: [{name: gpu, exactly: {deviceClassName: e2e-gpu.example.com}}]}
`
	wantLines(t, k.withStdin(objs).ok(t, "apply", "-f", "-"),
		"ingressclass.networking.k8s.io/e2e-nginx created", "ingress.networking.k8s.io/web created",
		"networkpolicy.networking.k8s.io/db created", "deviceclass.resource.k8s.io/e2e-gpu.example.com created",
		"resourceslice.resource.k8s.io/e2e-node-a-gpu created", "resourceslice.resource.k8s.io/e2e-node-b-gpu created",
		"resourceclaim.resource.k8s.io/gpu created")
	t.Cleanup(func() {
		k.run(t, "delete", "ingressclass/e2e-nginx", "deviceclass/e2e-gpu.example.com", "resourceslice/e2e-node-a-gpu", "resourceslice/e2e-node-b-gpu")
	})

	// The status subresource sets the address the main resource may not.
	k.ok(t, "-n", ns, "patch", "ingress", "web", "--subresource=status", "--type=merge",
		"-p", `{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}}`)
	for _, args := range [][]string{{"get", "ingress", "web"}, {"get", "ing", "web", "-o", "wide"}} {
		wantTable(t, k.ok(t, append([]string{"-n", ns}, args...)...), []string{"NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"},
			[]string{"web", "e2e-nginx", "foo.example.com", `192\.0\.2\.10`, "80", age})
	}
	wantEqual(t, "generation after a status update", jsonpath(t, k, "{.metadata.generation}", "-n", ns, "get", "ingress", "web"), "1")
	wantTable(t, k.ok(t, "get", "ingressclass", "e2e-nginx", "-o", "wide"), []string{"NAME", "CONTROLLER", "PARAMETERS", "AGE"},
		[]string{"e2e-nginx", "k8s.io/ingress-nginx", "<none>", age})
	wantTable(t, k.ok(t, "-n", ns, "get", "netpol", "db", "-o", "wide"), []string{"NAME", "POD-SELECTOR", "AGE"},
		[]string{"db", "app=db", age})
	wantEqual(t, "defaulted policy", jsonpath(t, k, "{.spec.policyTypes} {.spec.ingress[0].ports[0].protocol}", "-n", ns, "get", "netpol", "db"),
		`["Ingress"] TCP`)
	// An Ingress naming no class gets the default one (DefaultIngressClass
	// admission); the dry run waits for the class to reach the cache.
	plain := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: ` + ns + `}
spec: {defaultBackend: {service: {name: web, port: {name: http}}}}
`
	eventually(t, 10*time.Second, "the default IngressClass to be applied", func() (bool, string) {
		out, _, err := k.withStdin(plain).run(t, "create", "--dry-run=server", "-f", "-", "-o", "jsonpath={.spec.ingressClassName}")
		return err == nil && out == "e2e-nginx", out
	})
	wantLines(t, k.withStdin(plain).ok(t, "create", "-f", "-"), "ingress.networking.k8s.io/plain created")
	wantTable(t, k.ok(t, "-n", ns, "get", "ingress", "plain"), []string{"NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"},
		[]string{"plain", "e2e-nginx", `\*`, "80", age})
	bad := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bad, namespace: ` + ns + `}
spec:
  rules: [{http: {paths: [{path: /, backend: {service: {name: web, port: {number: 80}}}}]}}]
`
	wantContains(t, k.withStdin(bad).fails(t, "apply", "-f", "-"),
		`The Ingress "bad" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified`)

	badClass := `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-bad.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver =='}}]
`
	wantContains(t, k.withStdin(badClass).fails(t, "apply", "-f", "-"),
		`The DeviceClass "e2e-bad.example.com" is invalid: spec.selectors[0].cel.expression: Invalid value: "device.driver ==": compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>'`)
	wantTable(t, k.ok(t, "get", "deviceclass", "e2e-gpu.example.com", "-o", "wide"), []string{"NAME", "AGE"},
		[]string{`e2e-gpu\.example\.com`, age})
	wantTable(t, k.ok(t, "get", "resourceslices", "--field-selector", "spec.nodeName=e2e-node-b", "-o", "wide"),
		[]string{"NAME", "NODE", "DRIVER", "POOL", "AGE"},
		[]string{"e2e-node-b-gpu", "e2e-node-b", `gpu\.example\.com`, "e2e-node-b", age})
	wantContains(t, k.fails(t, "get", "resourceslices", "--field-selector", "spec.devices=x"), "field label not supported: spec.devices")
	wantTable(t, k.ok(t, "-n", ns, "get", "resourceclaim", "gpu"), []string{"NAME", "STATE", "AGE"},
		[]string{"gpu", "pending", age})
	wantEqual(t, "defaulted request", jsonpath(t, k, "{.spec.devices.requests[0].exactly.allocationMode}/{.spec.devices.requests[0].exactly.count}",
		"-n", ns, "get", "resourceclaim", "gpu"), "ExactCount/1")
}

// storagemigration.k8s.io StorageVersionMigrations and certificates.k8s.io
// ClusterTrustBundles (both stable in 1.37) with kubectl: upstream's
// columns, the signer field selector, a 422 with upstream's message.
func kubectlMigrationsAndTrustBundles(t *testing.T, c *cluster, k kc) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e-ca"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	indented := "    " + strings.ReplaceAll(strings.TrimSpace(ca), "\n", "\n    ")
	objs := `apiVersion: storagemigration.k8s.io/v1
kind: StorageVersionMigration
metadata: {name: e2e-secrets}
spec: {resource: {resource: secrets}}
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: "e2e.example.com:signer:ca"}
spec:
  signerName: e2e.example.com/signer
  trustBundle: |
` + indented + `
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: e2e-plain}
spec:
  trustBundle: |
` + indented + `
`
	wantLines(t, k.withStdin(objs).ok(t, "apply", "-f", "-"),
		"storageversionmigration.storagemigration.k8s.io/e2e-secrets created",
		"clustertrustbundle.certificates.k8s.io/e2e.example.com:signer:ca created",
		"clustertrustbundle.certificates.k8s.io/e2e-plain created")
	t.Cleanup(func() {
		k.run(t, "delete", "storageversionmigration/e2e-secrets", "clustertrustbundle/e2e.example.com:signer:ca", "clustertrustbundle/e2e-plain")
	})
	wantTable(t, k.ok(t, "get", "storageversionmigration", "e2e-secrets"), []string{"NAME", "RESOURCE"}, []string{"e2e-secrets", "secrets"})
	wantTable(t, k.ok(t, "get", "clustertrustbundles", "--field-selector", "spec.signerName=e2e.example.com/signer", "-o", "wide"),
		[]string{"NAME", "SIGNERNAME"}, []string{`e2e\.example\.com:signer:ca`, `e2e\.example\.com/signer`})
	wantTable(t, k.ok(t, "get", "clustertrustbundle", "e2e-plain"), []string{"NAME", "SIGNERNAME"}, []string{"e2e-plain", "<none>"})
	bad := `apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: e2e-bad}
spec:
  signerName: e2e.example.com/signer
  trustBundle: |
` + indented + `
`
	wantContains(t, k.withStdin(bad).fails(t, "apply", "-f", "-"),
		`The ClusterTrustBundle "e2e-bad" is invalid: metadata.name: Invalid value: "e2e-bad": ClusterTrustBundle for signerName e2e.example.com/signer must be named with prefix e2e.example.com:signer:`)
}
