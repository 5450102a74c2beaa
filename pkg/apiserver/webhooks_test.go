package apiserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// --- a real HTTPS admission webhook server for the tests ---------------------

// webhookCerts makes a CA and a serving certificate for dnsNames and ips,
// returning the CA (PEM, the caBundle) and the serving certificate.
func webhookCerts(t testing.TB, dnsNames []string, ips []net.IP) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), DNSNames: dnsNames, IPAddresses: ips,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	cert, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), cert
}

// hookFunc answers one AdmissionRequest.
type hookFunc func(r *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

// hookServer is an HTTPS admission webhook server: each path answers with
// its hookFunc and records the requests it got.
type hookServer struct {
	srv    *httptest.Server
	caPEM  []byte
	port   int
	mu     sync.Mutex
	hooks  map[string]hookFunc
	raw    map[string]http.HandlerFunc
	got    map[string][]*admissionv1.AdmissionReview
	stopCh chan struct{}
}

// startHookServer listens on every interface (a service's endpoint may not
// be a loopback address) with a certificate for 127.0.0.1, ip and the
// service names given.
func startHookServer(t testing.TB, ip net.IP, svcNames ...string) *hookServer {
	t.Helper()
	ips := []net.IP{net.ParseIP("127.0.0.1")}
	if ip != nil {
		ips = append(ips, ip)
	}
	caPEM, cert := webhookCerts(t, svcNames, ips)
	hs := &hookServer{caPEM: caPEM, hooks: map[string]hookFunc{}, got: map[string][]*admissionv1.AdmissionReview{}, stopCh: make(chan struct{})}
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	hs.srv = httptest.NewUnstartedServer(http.HandlerFunc(hs.serve))
	hs.srv.Listener.Close()
	hs.srv.Listener = l
	hs.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	hs.srv.StartTLS()
	hs.port = l.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() {
		close(hs.stopCh)
		hs.srv.Close()
	})
	return hs
}

// handleRaw serves path with h (answers that are no v1 AdmissionReview).
func (hs *hookServer) handleRaw(path string, h http.HandlerFunc) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.raw == nil {
		hs.raw = map[string]http.HandlerFunc{}
	}
	hs.raw[path] = h
}

func (hs *hookServer) handle(path string, f hookFunc) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.hooks[path] = f
}

// requests returns what path was sent so far.
func (hs *hookServer) requests(path string) []*admissionv1.AdmissionReview {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]*admissionv1.AdmissionReview(nil), hs.got[path]...)
}

func (hs *hookServer) serve(w http.ResponseWriter, r *http.Request) {
	hs.mu.Lock()
	raw := hs.raw[r.URL.Path]
	hs.mu.Unlock()
	if raw != nil {
		raw(w, r)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	hs.mu.Lock()
	f := hs.hooks[r.URL.Path]
	hs.got[r.URL.Path] = append(hs.got[r.URL.Path], &review)
	hs.mu.Unlock()
	if f == nil {
		http.NotFound(w, r)
		return
	}
	resp := f(r, review.Request)
	if resp == nil {
		return
	}
	resp.UID = review.Request.UID
	out := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// url is the address of path on this server, by IP.
func (hs *hookServer) url(path string) string {
	return "https://127.0.0.1:" + strconv.Itoa(hs.port) + path
}

func allow() *admissionv1.AdmissionResponse { return &admissionv1.AdmissionResponse{Allowed: true} }

func jsonPatch(ops ...map[string]any) *admissionv1.AdmissionResponse {
	data, _ := json.Marshal(ops)
	pt := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: data, PatchType: &pt}
}

// hostIP is a non-loopback address of this machine (endpoints may not be
// loopback addresses), or nil.
func hostIP() net.IP { return net.ParseIP(testenv.HostIPv4()) }

// webhookDef is one webhook of a test configuration.
type webhookDef struct {
	name          string
	clientConfig  map[string]any
	rules         []any // default: CREATE configmaps
	failurePolicy string
	sideEffects   string
	timeout       int
	nsLabels      map[string]string // namespaceSelector matchLabels
	objLabels     map[string]string // objectSelector matchLabels
	conditions    []map[string]string
	reinvoke      bool
	matchPolicy   string
}

func (d webhookDef) body(mutating bool) map[string]any {
	rules := d.rules
	if rules == nil {
		rules = []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}}
	}
	w := map[string]any{"name": d.name, "clientConfig": d.clientConfig, "rules": rules,
		"admissionReviewVersions": []string{"v1"}, "sideEffects": "None"}
	if d.failurePolicy != "" {
		w["failurePolicy"] = d.failurePolicy
	}
	if d.sideEffects != "" {
		w["sideEffects"] = d.sideEffects
	}
	if d.timeout != 0 {
		w["timeoutSeconds"] = d.timeout
	}
	if d.nsLabels != nil {
		w["namespaceSelector"] = map[string]any{"matchLabels": d.nsLabels}
	}
	if d.objLabels != nil {
		w["objectSelector"] = map[string]any{"matchLabels": d.objLabels}
	}
	if d.conditions != nil {
		w["matchConditions"] = d.conditions
	}
	if d.matchPolicy != "" {
		w["matchPolicy"] = d.matchPolicy
	}
	if mutating && d.reinvoke {
		w["reinvocationPolicy"] = "IfNeeded"
	}
	return w
}

// webhookConfig creates a Mutating- or ValidatingWebhookConfiguration and
// waits until the watch cache serves it (admission reads it there).
func (c *client) webhookConfig(mutating bool, name string, hooks ...webhookDef) {
	c.t.Helper()
	kind, res := "ValidatingWebhookConfiguration", "validatingwebhookconfigurations"
	if mutating {
		kind, res = "MutatingWebhookConfiguration", "mutatingwebhookconfigurations"
	}
	var ws []any
	for _, h := range hooks {
		ws = append(ws, h.body(mutating))
	}
	path := "/apis/admissionregistration.k8s.io/v1/" + res
	c.call(http.MethodPost, path, map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name}, "webhooks": ws}, http.StatusCreated, nil)
	c.t.Cleanup(func() { c.do(http.MethodDelete, path+"/"+name, nil, "", "") })
	eventually(c.t, kind+" "+name+" in the watch cache", func() bool {
		_, _, data := c.do(http.MethodGet, path+"?resourceVersion=0&fieldSelector=metadata.name%3D"+name, nil, "", "")
		return strings.Contains(string(data), `"name":"`+name+`"`)
	})
}

// labeledNamespace creates a namespace with labels.
func (c *client) labeledNamespace(name string, labels map[string]string) string {
	c.t.Helper()
	c.call(http.MethodPost, "/api/v1/namespaces", map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": labels},
	}, http.StatusCreated, nil)
	return name
}

// nsOnly selects the test's own namespace.
func nsOnly(ns string) map[string]string { return map[string]string{"kubernetes.io/metadata.name": ns} }

func urlConfig(hs *hookServer, path string) map[string]any {
	return map[string]any{"url": hs.url(path), "caBundle": hs.caPEM}
}

func TestAdmissionWebhooks(t *testing.T) {
	c := start(t)
	hs := startHookServer(t, hostIP())

	t.Run("mutating patch applied", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-mutate")
		hs.handle("/add", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return jsonPatch(map[string]any{"op": "add", "path": "/data/added", "value": "by-webhook"})
		})
		c.webhookConfig(true, "mutate-add", webhookDef{name: "add.example.com", clientConfig: urlConfig(hs, "/add"), nsLabels: nsOnly(ns)})
		var cm struct {
			Data map[string]string `json:"data"`
		}
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("one", nil, map[string]string{"a": "b"}), http.StatusCreated, &cm)
		if cm.Data["added"] != "by-webhook" || cm.Data["a"] != "b" {
			t.Errorf("created data = %v, want the webhook's key added", cm.Data)
		}
		c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/one", nil, http.StatusOK, &cm)
		if cm.Data["added"] != "by-webhook" {
			t.Errorf("stored data = %v, want the webhook's key", cm.Data)
		}
		got := hs.requests("/add")
		if len(got) != 1 {
			t.Fatalf("webhook called %d times, want 1", len(got))
		}
		r := got[0].Request
		if got[0].APIVersion != "admission.k8s.io/v1" || got[0].Kind != "AdmissionReview" {
			t.Errorf("review type %s %s", got[0].APIVersion, got[0].Kind)
		}
		if r.Kind != (metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) || r.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}) ||
			r.RequestKind == nil || *r.RequestKind != r.Kind || r.Operation != admissionv1.Create || r.Namespace != ns || r.Name != "one" {
			t.Errorf("request = %+v", r)
		}
		if r.UserInfo.Username == "" || r.DryRun == nil || *r.DryRun {
			t.Errorf("userInfo %+v dryRun %v", r.UserInfo, r.DryRun)
		}
		if !strings.Contains(string(r.Options.Raw), `"kind":"CreateOptions"`) || !strings.Contains(string(r.Object.Raw), `"name":"one"`) {
			t.Errorf("options %s object %s", r.Options.Raw, r.Object.Raw)
		}
	})

	t.Run("mutating patch on update", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-mutate-update")
		hs.handle("/stamp", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var old struct {
				Data map[string]string `json:"data"`
			}
			json.Unmarshal(req.OldObject.Raw, &old)
			return jsonPatch(map[string]any{"op": "add", "path": "/data/previous", "value": old.Data["v"]})
		})
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("cm", nil, map[string]string{"v": "1"}), http.StatusCreated, nil)
		c.webhookConfig(true, "stamp", webhookDef{name: "stamp.example.com", clientConfig: urlConfig(hs, "/stamp"), nsLabels: nsOnly(ns),
			rules: []any{map[string]any{"operations": []string{"UPDATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}}})
		code, data := c.patch("/api/v1/namespaces/"+ns+"/configmaps/cm", "application/merge-patch+json", map[string]any{"data": map[string]string{"v": "2"}})
		if code != http.StatusOK {
			t.Fatalf("patch: %d %s", code, data)
		}
		var cm struct {
			Data map[string]string `json:"data"`
		}
		c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/cm", nil, http.StatusOK, &cm)
		if cm.Data["v"] != "2" || cm.Data["previous"] != "1" {
			t.Errorf("data = %v, want v=2 and the webhook's previous=1", cm.Data)
		}
		got := hs.requests("/stamp")
		if len(got) != 1 || got[0].Request.Operation != admissionv1.Update || !strings.Contains(string(got[0].Request.Options.Raw), `"kind":"UpdateOptions"`) {
			t.Errorf("requests = %d", len(got))
		}
	})

	t.Run("invalid managedFields restored", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-managedfields")
		hs.handle("/break-managed-fields", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return jsonPatch(map[string]any{"op": "replace", "path": "/metadata/managedFields/0/operation", "value": "Bogus"},
				map[string]any{"op": "add", "path": "/data/patched", "value": "yes"})
		})
		c.webhookConfig(true, "break-managed-fields", webhookDef{name: "mf.example.com", clientConfig: urlConfig(hs, "/break-managed-fields"), nsLabels: nsOnly(ns)})
		code, hdr, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps?fieldManager=tester", configMap("x", nil, map[string]string{"k": "v"}), "", "")
		if code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, data)
		}
		var cm struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Data     map[string]string `json:"data"`
		}
		json.Unmarshal(data, &cm)
		if cm.Data["patched"] != "yes" || len(cm.Metadata.ManagedFields) != 1 || cm.Metadata.ManagedFields[0].Operation != metav1.ManagedFieldsOperationUpdate ||
			cm.Metadata.ManagedFields[0].Manager != "tester" {
			t.Errorf("data %v managedFields %+v, want the patch applied and the managedFields restored", cm.Data, cm.Metadata.ManagedFields)
		}
		want := `299 - ".metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: operation must be ` + "`Apply` or `Update`" + `"`
		if got := hdr.Values("Warning"); len(got) != 1 || got[0] != want {
			t.Errorf("Warning = %q, want %q", got, want)
		}
	})

	t.Run("validating denial", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-deny")
		hs.handle("/deny", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Code: 403, Message: "configmaps are not welcome here"}}
		})
		c.webhookConfig(false, "deny", webhookDef{name: "deny.example.com", clientConfig: urlConfig(hs, "/deny"), nsLabels: nsOnly(ns)})
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("x", nil, nil), "", "")
		expectStatus(t, code, data, http.StatusForbidden, "", `admission webhook "deny.example.com" denied the request: configmaps are not welcome here`)
		// without a code or message: 400 "without explanation"
		hs.handle("/deny", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: false}
		})
		code, _, data = c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("x", nil, nil), "", "")
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "deny.example.com" denied the request without explanation`)
	})

	t.Run("timeout", func(t *testing.T) {
		c := c.on(t)
		hs.handle("/slow", func(r *http.Request, _ *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			// answer (an empty 200) only after the caller gave up: the
			// request ends when the client's close_notify arrives, and the
			// transport may still hand this answer over; an answer after
			// the deadline must count as none
			select {
			case <-r.Context().Done():
			case <-hs.stopCh:
			}
			return nil
		})
		nsFail := c.namespace("wh-timeout-fail")
		nsIgnore := c.namespace("wh-timeout-ignore")
		c.webhookConfig(false, "slow", webhookDef{name: "slow-fail.example.com", clientConfig: urlConfig(hs, "/slow"), nsLabels: nsOnly(nsFail), timeout: 1, failurePolicy: "Fail"},
			webhookDef{name: "slow-ignore.example.com", clientConfig: urlConfig(hs, "/slow"), nsLabels: nsOnly(nsIgnore), timeout: 1, failurePolicy: "Ignore"})
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+nsFail+"/configmaps", configMap("x", nil, nil), "", "")
		expectStatus(t, code, data, http.StatusInternalServerError, metav1.StatusReasonInternalError,
			fmt.Sprintf(`Internal error occurred: failed calling webhook "slow-fail.example.com": failed to call webhook: Post "%s?timeout=1s": context deadline exceeded`, hs.url("/slow")))
		c.call(http.MethodPost, "/api/v1/namespaces/"+nsIgnore+"/configmaps", configMap("x", nil, nil), http.StatusCreated, nil)
	})

	t.Run("unreachable service", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-unreachable")
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "gone"}, "spec": map[string]any{"ports": []any{map[string]any{"port": 443, "targetPort": 8443}}}}, http.StatusCreated, nil)
		eventually(t, "the service in the watch cache", func() bool {
			_, _, data := c.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/services?resourceVersion=0", nil, "", "")
			return strings.Contains(string(data), `"name":"gone"`)
		})
		svc := func(name string) map[string]any {
			return map[string]any{"service": map[string]any{"namespace": ns, "name": name, "path": "/x"}, "caBundle": hs.caPEM}
		}
		c.webhookConfig(false, "unreachable", webhookDef{name: "noendpoints.example.com", clientConfig: svc("gone"), nsLabels: nsOnly(ns), failurePolicy: "Fail"},
			webhookDef{name: "noservice.example.com", clientConfig: svc("missing"), nsLabels: nsOnly(ns), failurePolicy: "Ignore",
				rules: []any{map[string]any{"operations": []string{"UPDATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}}})
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("x", nil, nil), "", "")
		expectStatus(t, code, data, http.StatusInternalServerError, metav1.StatusReasonInternalError,
			fmt.Sprintf(`Internal error occurred: failed calling webhook "noendpoints.example.com": failed to call webhook: Post "https://gone.%s.svc:443/x?timeout=10s": no endpoints available for service "gone"`, ns))
	})

	t.Run("service reference resolved through endpoints", func(t *testing.T) {
		ip := hostIP()
		if ip == nil {
			t.Skip("no non-loopback address for an endpoint")
		}
		for _, kind := range []string{"Endpoints", "EndpointSlice"} {
			t.Run(kind, func(t *testing.T) {
				c := c.on(t)
				ns := c.namespace("wh-svc-" + strings.ToLower(kind))
				shs := startHookServer(t, ip, "hooks."+ns+".svc")
				shs.handle("/svc", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
					return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "via the service"}}
				})
				c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", map[string]any{"apiVersion": "v1", "kind": "Service",
					"metadata": map[string]any{"name": "hooks"}, "spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": 8443, "targetPort": shs.port}}}}, http.StatusCreated, nil)
				if kind == "Endpoints" {
					c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/endpoints", map[string]any{"apiVersion": "v1", "kind": "Endpoints",
						"metadata": map[string]any{"name": "hooks"}, "subsets": []any{map[string]any{
							"addresses": []any{map[string]any{"ip": ip.String()}}, "ports": []any{map[string]any{"name": "https", "port": shs.port}}}}}, http.StatusCreated, nil)
				} else {
					c.call(http.MethodPost, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices", map[string]any{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
						"metadata": map[string]any{"name": "hooks-abc", "labels": map[string]string{"kubernetes.io/service-name": "hooks"}}, "addressType": "IPv4",
						"endpoints": []any{map[string]any{"addresses": []string{ip.String()}, "conditions": map[string]any{"ready": true}}},
						"ports":     []any{map[string]any{"name": "https", "port": shs.port}}}, http.StatusCreated, nil)
				}
				// the endpoint routing reads the watch cache
				listPath := "/api/v1/namespaces/" + ns + "/endpoints?resourceVersion=0"
				if kind == "EndpointSlice" {
					listPath = "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices?resourceVersion=0"
				}
				eventually(t, kind+" in the watch cache", func() bool {
					_, _, data := c.do(http.MethodGet, listPath, nil, "", "")
					return strings.Contains(string(data), ip.String())
				})
				c.webhookConfig(false, "svc-"+strings.ToLower(kind), webhookDef{name: "svc.example.com", nsLabels: nsOnly(ns),
					clientConfig: map[string]any{"service": map[string]any{"namespace": ns, "name": "hooks", "port": 8443, "path": "/svc"}, "caBundle": shs.caPEM}})
				code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("x", nil, nil), "", "")
				expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "svc.example.com" denied the request: via the service`)
			})
		}
	})

	t.Run("dry run", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-dryrun")
		hs.handle("/dry", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return allow()
		})
		c.webhookConfig(false, "dry", webhookDef{name: "dry.example.com", clientConfig: urlConfig(hs, "/dry"), nsLabels: nsOnly(ns), sideEffects: "NoneOnDryRun"})
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps?dryRun=All", configMap("x", nil, nil), http.StatusCreated, nil)
		got := hs.requests("/dry")
		if len(got) != 1 || got[0].Request.DryRun == nil || !*got[0].Request.DryRun {
			t.Fatalf("want one call with dryRun=true, got %d", len(got))
		}
		c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/x", nil, http.StatusNotFound, nil)
	})

	t.Run("reinvocation", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-reinvoke")
		// "first" (IfNeeded) records whether "second"'s key is there yet;
		// "second" adds its key: first is called again and sees it.
		hs.handle("/first", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var cm struct {
				Data map[string]string `json:"data"`
			}
			json.Unmarshal(req.Object.Raw, &cm)
			_, seen := cm.Data["second"]
			return jsonPatch(map[string]any{"op": "add", "path": "/data/first-saw-second", "value": strconv.FormatBool(seen)})
		})
		hs.handle("/second", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return jsonPatch(map[string]any{"op": "add", "path": "/data/second", "value": "yes"})
		})
		c.webhookConfig(true, "reinvoke-a", webhookDef{name: "first.example.com", clientConfig: urlConfig(hs, "/first"), nsLabels: nsOnly(ns), reinvoke: true})
		c.webhookConfig(true, "reinvoke-b", webhookDef{name: "second.example.com", clientConfig: urlConfig(hs, "/second"), nsLabels: nsOnly(ns)})
		var cm struct {
			Data map[string]string `json:"data"`
		}
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("x", nil, map[string]string{"k": "v"}), http.StatusCreated, &cm)
		if cm.Data["first-saw-second"] != "true" || cm.Data["second"] != "yes" {
			t.Errorf("data = %v, want first reinvoked after second", cm.Data)
		}
		if n, m := len(hs.requests("/first")), len(hs.requests("/second")); n != 2 || m != 1 {
			t.Errorf("first called %d times (want 2), second %d (want 1)", n, m)
		}
	})

	t.Run("selectors", func(t *testing.T) {
		c := c.on(t)
		prod := c.labeledNamespace("wh-sel-prod", map[string]string{"env": "prod"})
		dev := c.labeledNamespace("wh-sel-dev", map[string]string{"env": "dev"})
		hs.handle("/sel", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "selected"}}
		})
		c.webhookConfig(false, "sel", webhookDef{name: "sel.example.com", clientConfig: urlConfig(hs, "/sel"),
			nsLabels: map[string]string{"env": "prod"}, objLabels: map[string]string{"check": "yes"}})
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+prod+"/configmaps", configMap("a", map[string]string{"check": "yes"}, nil), "", "")
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "sel.example.com" denied the request: selected`)
		c.call(http.MethodPost, "/api/v1/namespaces/"+prod+"/configmaps", configMap("b", map[string]string{"check": "no"}, nil), http.StatusCreated, nil)
		c.call(http.MethodPost, "/api/v1/namespaces/"+dev+"/configmaps", configMap("c", map[string]string{"check": "yes"}, nil), http.StatusCreated, nil)
	})

	t.Run("match conditions", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-conditions")
		nsErr := c.namespace("wh-conditions-err")
		hs.handle("/cond", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "bad name"}}
		})
		c.webhookConfig(false, "cond", webhookDef{name: "cond.example.com", clientConfig: urlConfig(hs, "/cond"), nsLabels: nsOnly(ns),
			conditions: []map[string]string{{"name": "bad-only", "expression": "object.metadata.name.startsWith('bad') && request.userInfo.username != ''"},
				{"name": "authorized", "expression": "authorizer.requestResource.check('create').allowed() && authorizer.group('').resource('secrets').namespace('" + ns + "').check('get').allowed()"}}},
			webhookDef{name: "cond-error.example.com", clientConfig: urlConfig(hs, "/cond"), nsLabels: nsOnly(nsErr), failurePolicy: "Fail",
				conditions: []map[string]string{{"name": "missing", "expression": "object.data.missing == 'x'"}}})
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("bad-one", nil, nil), "", "")
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "cond.example.com" denied the request: bad name`)
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("good-one", nil, nil), http.StatusCreated, nil)
		code, _, data = c.do(http.MethodPost, "/api/v1/namespaces/"+nsErr+"/configmaps", configMap("x", nil, map[string]string{"k": "v"}), "", "")
		st := expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, "")
		if !strings.HasPrefix(st.Message, `configmaps "x" is forbidden: expression 'object.data.missing == 'x'' resulted in error: `) {
			t.Errorf("message = %q", st.Message)
		}
	})

	t.Run("warnings", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-warn")
		hs.handle("/warn", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"configmaps are deprecated here"},
				AuditAnnotations: map[string]string{"checked": "yes"}}
		})
		c.webhookConfig(false, "warn", webhookDef{name: "warn.example.com", clientConfig: urlConfig(hs, "/warn"), nsLabels: nsOnly(ns)},
			webhookDef{name: "warn-again.example.com", clientConfig: urlConfig(hs, "/warn"), nsLabels: nsOnly(ns)})
		code, hdr, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("x", nil, nil), "", "")
		if code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, data)
		}
		if got := hdr.Values("Warning"); len(got) != 1 || got[0] != `299 - "configmaps are deprecated here"` {
			t.Errorf("Warning headers = %q", got)
		}
	})

	t.Run("match policy", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-matchpolicy")
		hs.handle("/events", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: req.Kind.Group + "/" + req.Kind.Version + " " + req.Kind.Kind}}
		})
		eventsRule := []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{"events.k8s.io"}, "apiVersions": []string{"v1"}, "resources": []string{"events"}}}
		c.webhookConfig(false, "events", webhookDef{name: "exact.example.com", clientConfig: urlConfig(hs, "/events"), nsLabels: nsOnly(ns),
			rules: eventsRule, matchPolicy: "Exact", objLabels: map[string]string{"policy": "exact"}},
			webhookDef{name: "equivalent.example.com", clientConfig: urlConfig(hs, "/events"), nsLabels: nsOnly(ns),
				rules: eventsRule, matchPolicy: "Equivalent", objLabels: map[string]string{"policy": "equivalent"}})
		event := func(name, policy string) map[string]any {
			return map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": name, "labels": map[string]string{"policy": policy}},
				"involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": ns}, "reason": "Test", "message": "m", "type": "Normal",
				"firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z", "count": 1, "source": map[string]any{"component": "test"}}
		}
		// a core/v1 request matches an events.k8s.io/v1 rule only with
		// Equivalent, and the webhook gets the event in the version it asked
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/events", event("exact", "exact"), http.StatusCreated, nil)
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/events", event("equivalent", "equivalent"), "", "")
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "equivalent.example.com" denied the request: events.k8s.io/v1 Event`)
		got := hs.requests("/events")
		if len(got) != 1 {
			t.Fatalf("webhook called %d times, want 1", len(got))
		}
		r := got[0].Request
		if r.RequestKind == nil || *r.RequestKind != (metav1.GroupVersionKind{Version: "v1", Kind: "Event"}) ||
			r.Resource != (metav1.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}) ||
			!strings.Contains(string(r.Object.Raw), `"apiVersion":"events.k8s.io/v1"`) || !strings.Contains(string(r.Object.Raw), `"note":"m"`) {
			t.Errorf("request kind %v requestKind %v resource %v object %s", r.Kind, r.RequestKind, r.Resource, r.Object.Raw)
		}
	})

	t.Run("v1beta1 review and caBundle", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-v1beta1")
		// A v1beta1 answer: no uid check, a patch without patchType is a
		// JSON patch.
		hs.handleRaw("/v1beta1", func(w http.ResponseWriter, r *http.Request) {
			var review map[string]any
			json.NewDecoder(r.Body).Decode(&review)
			hs.mu.Lock()
			hs.got[r.URL.Path] = append(hs.got[r.URL.Path], &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: review["apiVersion"].(string)}})
			hs.mu.Unlock()
			patch, _ := json.Marshal([]any{map[string]any{"op": "add", "path": "/data/beta", "value": "yes"}})
			json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
				"response": map[string]any{"allowed": true, "patch": patch}})
		})
		beta := webhookDef{name: "beta.example.com", clientConfig: urlConfig(hs, "/v1beta1"), nsLabels: nsOnly(ns),
			objLabels: map[string]string{"hook": "beta"}}
		// without caBundle the system roots are used: the test CA is not
		// among them
		noCA := webhookDef{name: "noca.example.com", clientConfig: map[string]any{"url": hs.url("/noca")}, nsLabels: nsOnly(ns),
			objLabels: map[string]string{"hook": "noca"}}
		betaBody := beta.body(true)
		betaBody["admissionReviewVersions"] = []string{"v1beta1", "v1"}
		path := "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
		c.call(http.MethodPost, path, map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
			"metadata": map[string]any{"name": "beta"}, "webhooks": []any{betaBody, noCA.body(true)}}, http.StatusCreated, nil)
		t.Cleanup(func() { c.do(http.MethodDelete, path+"/beta", nil, "", "") })
		eventually(t, "the configuration in the watch cache", func() bool {
			_, _, data := c.do(http.MethodGet, path+"?resourceVersion=0", nil, "", "")
			return strings.Contains(string(data), `"name":"beta"`)
		})
		var cm struct {
			Data map[string]string `json:"data"`
		}
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("beta", map[string]string{"hook": "beta"}, map[string]string{"k": "v"}), http.StatusCreated, &cm)
		if cm.Data["beta"] != "yes" {
			t.Errorf("data = %v, want the v1beta1 patch applied", cm.Data)
		}
		if got := hs.requests("/v1beta1"); len(got) != 1 || got[0].APIVersion != "admission.k8s.io/v1beta1" {
			t.Errorf("v1beta1 webhook got %v", got)
		}
		code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("noca", map[string]string{"hook": "noca"}, nil), "", "")
		st := expectStatus(t, code, data, http.StatusInternalServerError, metav1.StatusReasonInternalError, "")
		if !strings.Contains(st.Message, `failed calling webhook "noca.example.com": failed to call webhook: Post "`+hs.url("/noca")+`?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`) {
			t.Errorf("message = %q", st.Message)
		}
	})

	t.Run("scale subresource", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-scale")
		scaleRule := func(op string) []any {
			return []any{map[string]any{"operations": []string{op}, "apiGroups": []string{"apps"}, "apiVersions": []string{"v1"}, "resources": []string{"deployments/scale"}}}
		}
		replicasOf := func(req *admissionv1.AdmissionRequest) int32 {
			var sc struct {
				Spec struct{ Replicas int32 } `json:"spec"`
			}
			json.Unmarshal(req.Object.Raw, &sc)
			return sc.Spec.Replicas
		}
		hs.handle("/scale-mutate", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if req.Kind != (metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}) || req.SubResource != "scale" ||
				req.Resource != (metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}) {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: fmt.Sprintf("kind %v resource %v", req.Kind, req.Resource)}}
			}
			if replicasOf(req) == 2 {
				return jsonPatch(map[string]any{"op": "replace", "path": "/spec/replicas", "value": 5})
			}
			return allow()
		})
		hs.handle("/scale-validate", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if n := replicasOf(req); n == 7 {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "7 replicas are unlucky"}}
			}
			return allow()
		})
		c.webhookConfig(true, "scale", webhookDef{name: "scale-mutate.example.com", clientConfig: urlConfig(hs, "/scale-mutate"), nsLabels: nsOnly(ns), rules: scaleRule("UPDATE")})
		c.webhookConfig(false, "scale", webhookDef{name: "scale-validate.example.com", clientConfig: urlConfig(hs, "/scale-validate"), nsLabels: nsOnly(ns), rules: scaleRule("UPDATE")})
		c.call(http.MethodPost, "/apis/apps/v1/namespaces/"+ns+"/deployments", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "d"}, "spec": map[string]any{"replicas": 1, "selector": map[string]any{"matchLabels": map[string]string{"app": "d"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]string{"app": "d"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}},
			http.StatusCreated, nil)
		scalePath := "/apis/apps/v1/namespaces/" + ns + "/deployments/d/scale"
		code, data := c.patch(scalePath, "application/merge-patch+json", map[string]any{"spec": map[string]any{"replicas": 2}})
		if code != http.StatusOK || !strings.Contains(string(data), `"replicas":5`) {
			t.Fatalf("scale to 2: %d %s, want the webhook's 5", code, data)
		}
		var d struct {
			Spec struct{ Replicas int32 } `json:"spec"`
		}
		c.call(http.MethodGet, "/apis/apps/v1/namespaces/"+ns+"/deployments/d", nil, http.StatusOK, &d)
		if d.Spec.Replicas != 5 {
			t.Errorf("deployment replicas = %d, want 5", d.Spec.Replicas)
		}
		code, data = c.patch(scalePath, "application/merge-patch+json", map[string]any{"spec": map[string]any{"replicas": 7}})
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "scale-validate.example.com" denied the request: 7 replicas are unlucky`)
	})

	t.Run("eviction subresource", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-evict")
		rule := []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"pods/eviction"}}}
		hs.handle("/evict-mutate", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if req.Name == "dry" {
				return jsonPatch(map[string]any{"op": "add", "path": "/deleteOptions", "value": map[string]any{"dryRun": []string{"All"}}})
			}
			return allow()
		})
		hs.handle("/evict-validate", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var ev struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			json.Unmarshal(req.Object.Raw, &ev)
			if req.Kind != (metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}) || req.SubResource != "eviction" ||
				req.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "pods"}) || req.Operation != admissionv1.Create || ev.Metadata.Name != req.Name {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: fmt.Sprintf("kind %v resource %v/%s operation %s object %s", req.Kind, req.Resource, req.SubResource, req.Operation, req.Object.Raw)}}
			}
			if req.Name == "keep" {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "keep stays"}}
			}
			return allow()
		})
		c.webhookConfig(true, "evict", webhookDef{name: "evict-mutate.example.com", clientConfig: urlConfig(hs, "/evict-mutate"), nsLabels: nsOnly(ns), rules: rule})
		c.webhookConfig(false, "evict", webhookDef{name: "evict-validate.example.com", clientConfig: urlConfig(hs, "/evict-validate"), nsLabels: nsOnly(ns), rules: rule})
		pods := "/api/v1/namespaces/" + ns + "/pods"
		evict := func(name string) (int, []byte) {
			code, _, data := c.do(http.MethodPost, pods+"/"+name+"/eviction",
				map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": name, "namespace": ns}}, "", "")
			return code, data
		}
		for _, name := range []string{"keep", "go", "dry"} {
			c.call(http.MethodPost, pods, pod(name, "nginx"), http.StatusCreated, nil)
		}
		code, data := evict("keep")
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "evict-validate.example.com" denied the request: keep stays`)
		c.call(http.MethodGet, pods+"/keep", nil, http.StatusOK, nil)
		if code, data := evict("go"); code != http.StatusCreated {
			t.Fatalf("evicting go: %d %s", code, data)
		}
		c.call(http.MethodGet, pods+"/go", nil, http.StatusNotFound, nil)
		// The mutating webhook's patch (deleteOptions.dryRun) is what the eviction does.
		if code, data := evict("dry"); code != http.StatusCreated {
			t.Fatalf("evicting dry: %d %s", code, data)
		}
		c.call(http.MethodGet, pods+"/dry", nil, http.StatusOK, nil)
	})

	t.Run("binding subresource", func(t *testing.T) {
		// pods/binding and core/v1 bindings go through admission as
		// upstream's: a create whose object is the Binding, the mutating
		// webhook's patch reaching the pod, the validating one refusing.
		c := c.on(t)
		ns := c.namespace("wh-bind")
		rule := []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"pods/binding", "bindings"}}}
		hs.handle("/bind-mutate", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return jsonPatch(map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]string{"bound-by": req.Resource.Resource + "/" + req.SubResource}})
		})
		hs.handle("/bind-validate", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var b corev1.Binding
			json.Unmarshal(req.Object.Raw, &b)
			wantRes, wantSub := "pods", "binding"
			if req.Name == "legacy" {
				wantRes, wantSub = "bindings", ""
			}
			if req.Kind != (metav1.GroupVersionKind{Version: "v1", Kind: "Binding"}) || req.SubResource != wantSub ||
				req.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: wantRes}) || req.Operation != admissionv1.Create ||
				b.Kind != "Binding" || b.Name != req.Name || b.Annotations["bound-by"] != wantRes+"/"+wantSub {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: fmt.Sprintf("kind %v resource %v/%s operation %s object %s", req.Kind, req.Resource, req.SubResource, req.Operation, req.Object.Raw)}}
			}
			if b.Target.Name == "forbidden-node" {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "not on " + b.Target.Name}}
			}
			return allow()
		})
		c.webhookConfig(true, "bind", webhookDef{name: "bind-mutate.example.com", clientConfig: urlConfig(hs, "/bind-mutate"), nsLabels: nsOnly(ns), rules: rule})
		c.webhookConfig(false, "bind", webhookDef{name: "bind-validate.example.com", clientConfig: urlConfig(hs, "/bind-validate"), nsLabels: nsOnly(ns), rules: rule})
		pods := "/api/v1/namespaces/" + ns + "/pods"
		binding := func(name, node string) map[string]any {
			return map[string]any{"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": name},
				"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}}
		}
		for _, name := range []string{"p", "legacy"} {
			c.call(http.MethodPost, pods, pod(name, "nginx"), http.StatusCreated, nil)
		}
		code, _, data := c.do(http.MethodPost, pods+"/p/binding", binding("p", "forbidden-node"), "", "")
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "bind-validate.example.com" denied the request: not on forbidden-node`)
		var p corev1.Pod
		c.call(http.MethodGet, pods+"/p", nil, http.StatusOK, &p)
		if p.Spec.NodeName != "" {
			t.Fatalf("refused binding bound the pod to %q", p.Spec.NodeName)
		}
		c.call(http.MethodPost, pods+"/p/binding", binding("p", "node-1"), http.StatusCreated, nil)
		c.call(http.MethodGet, pods+"/p", nil, http.StatusOK, &p)
		if p.Spec.NodeName != "node-1" || p.Annotations["bound-by"] != "pods/binding" {
			t.Errorf("bound pod: node %q annotations %v, want node-1 and the mutating webhook's annotation", p.Spec.NodeName, p.Annotations)
		}
		code, _, data = c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/bindings", binding("legacy", "forbidden-node"), "", "")
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "bind-validate.example.com" denied the request: not on forbidden-node`)
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/bindings", binding("legacy", "node-1"), http.StatusCreated, nil)
		c.call(http.MethodGet, pods+"/legacy", nil, http.StatusOK, &p)
		if p.Spec.NodeName != "node-1" || p.Annotations["bound-by"] != "bindings/" {
			t.Errorf("bound pod: node %q annotations %v, want node-1 and the mutating webhook's annotation", p.Spec.NodeName, p.Annotations)
		}
	})

	t.Run("connect", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-connect")
		hs.handle("/connect", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if req.Operation != admissionv1.Connect || req.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "pods"}) || req.Name != "p" {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: fmt.Sprintf("operation %s resource %v name %s", req.Operation, req.Resource, req.Name)}}
			}
			switch req.SubResource {
			case "exec":
				var o corev1.PodExecOptions
				json.Unmarshal(req.Object.Raw, &o)
				if req.Kind.Kind != "PodExecOptions" || o.Kind != "PodExecOptions" || !o.Stdout || o.Stdin || o.Container != "app" {
					return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: fmt.Sprintf("kind %v object %s", req.Kind, req.Object.Raw)}}
				}
				if slices.Contains(o.Command, "rm") {
					return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "no rm in " + strings.Join(o.Command, " ")}}
				}
			case "portforward":
				var o corev1.PodPortForwardOptions
				json.Unmarshal(req.Object.Raw, &o)
				if req.Kind.Kind != "PodPortForwardOptions" || !slices.Equal(o.Ports, []int32{8080}) {
					return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: fmt.Sprintf("ports %v", o.Ports)}}
				}
			}
			return allow()
		})
		c.webhookConfig(false, "connect", webhookDef{name: "connect.example.com", clientConfig: urlConfig(hs, "/connect"), nsLabels: nsOnly(ns),
			rules: []any{map[string]any{"operations": []string{"CONNECT"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"pods/exec", "pods/portforward"}}}})
		base := "/api/v1/namespaces/" + ns + "/pods/p"
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod("p", "nginx"), http.StatusCreated, nil)
		code, _, data := c.do(http.MethodPost, base+"/exec?container=app&stdout=true&command=rm&command=-rf&command=/", nil, "", "")
		expectStatus(t, code, data, http.StatusBadRequest, "", `admission webhook "connect.example.com" denied the request: no rm in rm -rf /`)
		// Admitted: the request goes on to the pod, which has no node.
		code, _, data = c.do(http.MethodPost, base+"/exec?container=app&stdout=1&stdin=false&command=ls", nil, "", "")
		expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "pod p does not have a host assigned")
		code, _, data = c.do(http.MethodPost, base+"/portforward?ports=8080", nil, "", "")
		expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "pod p does not have a host assigned")
		if n := len(hs.requests("/connect")); n != 3 {
			t.Errorf("%d webhook calls, want 3", n)
		}
	})

	t.Run("custom resource in another version", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-cr")
		base := "/apis/webhooks.example.com/v1/namespaces/" + ns + "/crontabs"
		c.createCRD(crontabCRD("webhooks.example.com"), base)
		hs.handle("/cr", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if !strings.Contains(string(req.Object.Raw), `"apiVersion":"webhooks.example.com/v2"`) {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "not v2: " + string(req.Object.Raw)}}
			}
			return jsonPatch(map[string]any{"op": "add", "path": "/spec/image", "value": "patched"},
				map[string]any{"op": "add", "path": "/spec/notInSchema", "value": "x"},
				map[string]any{"op": "remove", "path": "/spec/replicas"})
		})
		c.webhookConfig(true, "cr", webhookDef{name: "cr.example.com", clientConfig: urlConfig(hs, "/cr"), nsLabels: nsOnly(ns),
			rules: []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{"webhooks.example.com"}, "apiVersions": []string{"v2"}, "resources": []string{"crontabs"}}}})
		var ct struct {
			Spec map[string]any `json:"spec"`
		}
		c.call(http.MethodPost, base, crontab("one", "webhooks.example.com/v1", map[string]any{"cronSpec": "* * * * *", "replicas": 3}, nil), http.StatusCreated, &ct)
		// patched in v2, pruned and defaulted as a request body is
		if ct.Spec["image"] != "patched" || ct.Spec["notInSchema"] != nil || ct.Spec["replicas"] != float64(1) {
			t.Errorf("spec = %v, want image patched, notInSchema pruned, replicas defaulted to 1", ct.Spec)
		}
	})

	t.Run("patch on delete", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("wh-delete")
		hs.handle("/delete", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if req.Operation != admissionv1.Delete || len(req.OldObject.Raw) == 0 || !strings.Contains(string(req.Options.Raw), `"kind":"DeleteOptions"`) {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "unexpected request"}}
			}
			return jsonPatch(map[string]any{"op": "add", "path": "/data/x", "value": "y"})
		})
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("x", nil, nil), http.StatusCreated, nil)
		c.webhookConfig(true, "delete", webhookDef{name: "delete.example.com", clientConfig: urlConfig(hs, "/delete"), nsLabels: nsOnly(ns),
			rules: []any{map[string]any{"operations": []string{"DELETE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}}})
		code, _, data := c.do(http.MethodDelete, "/api/v1/namespaces/"+ns+"/configmaps/x", nil, "", "")
		expectStatus(t, code, data, http.StatusInternalServerError, metav1.StatusReasonInternalError,
			`Internal error occurred: admission webhook "delete.example.com" attempted to modify the object, which is not supported for this operation`)
		c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/x", nil, http.StatusOK, nil)
	})
}

// matchConditions' authorizer answers with the request's user: a webhook
// whose condition needs "get secrets" is called for an admin, not for a
// user who may only create configmaps.
func TestAdmissionWebhookConditionAuthorizer(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	hs := startHookServer(t, nil)
	ns := c.namespace("wh-authz")
	c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/roles", map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": map[string]any{"name": "cm"},
		"rules": []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"configmaps"}, "verbs": []string{"create"}}},
	}, http.StatusCreated, nil)
	c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings", map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": map[string]any{"name": "alice-cm"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}},
	}, http.StatusCreated, nil)
	hs.handle("/secrets-readers", func(_ *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "called for " + req.UserInfo.Username}}
	})
	c.webhookConfig(false, "authz", webhookDef{name: "authz.example.com", clientConfig: urlConfig(hs, "/secrets-readers"), nsLabels: nsOnly(ns),
		conditions: []map[string]string{{"name": "reads-secrets", "expression": "authorizer.requestResource.check('create').allowed() && " +
			"authorizer.group('').resource('secrets').namespace('" + ns + "').check('get').allowed()"}}})
	code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("admin", nil, nil), "", "")
	st := expectStatus(t, code, data, http.StatusBadRequest, "", "")
	if !strings.HasPrefix(st.Message, `admission webhook "authz.example.com" denied the request: called for `) {
		t.Errorf("message = %q", st.Message)
	}
	alice := c.as("alice")
	eventually(t, "alice's role binding to apply", func() bool {
		code, _, _ := alice.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps?dryRun=All", configMap("alice", nil, nil), "", "")
		return code != http.StatusForbidden
	})
	alice.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("alice", nil, nil), http.StatusCreated, nil)
	if got := hs.requests("/secrets-readers"); len(got) != 1 {
		t.Errorf("webhook called %d times, want once (for the admin)", len(got))
	}
}
