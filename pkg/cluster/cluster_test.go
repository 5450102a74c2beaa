package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/kubeconfig"
	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/storage/etcd3"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitReady polls /readyz until it answers 200 or the deadline passes.
func waitReady(t *testing.T, c *http.Client, url string, errc <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-errc:
			t.Fatalf("server exited: %v", err)
		default:
		}
		if resp, err := c.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("server not ready within 30s")
}

// adminClient builds an HTTP client from the kubeconfig Up wrote.
func adminClient(t *testing.T, path string) (*http.Client, string) {
	t.Helper()
	kc, err := kubeconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(kc.Clusters[0].Cluster.CertificateAuthorityData)
	cert, err := tls.X509KeyPair(kc.Users[0].User.ClientCertificateData, kc.Users[0].User.ClientKeyData)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}}}, kc.Clusters[0].Cluster.Server
}

// runUp runs up (its data dir is dir) until the test stops it with
// cancel, after which errc has Run's result; it returns once the API
// server is ready.
func runUp(t *testing.T, up *Up, dir string) (c *http.Client, url string, errc chan error, cancel context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc = make(chan error, 1)
	go func() { errc <- up.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(KubeconfigPath(dir)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("no kubeconfig")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c, url = adminClient(t, KubeconfigPath(dir))
	waitReady(t, c, url, errc)
	return c, url, errc, cancel
}

func startUp(t *testing.T, dir, storage string, port int) (*http.Client, string, func()) {
	t.Helper()
	var out bytes.Buffer
	up, err := NewUp(UpConfig{DataDir: dir, Storage: storage, SecurePort: port, Out: &out, ContainerRuntime: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- up.Run(ctx) }()
	// The kubeconfig is written before serving starts.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(KubeconfigPath(dir)); err == nil {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("up exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no kubeconfig")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c, url := adminClient(t, KubeconfigPath(dir))
	waitReady(t, c, url, errc)
	return c, url, func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("up returned %v", err)
		}
	}
}

func TestUpKeepsObjectsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	c, url, stop := startUp(t, dir, "etcd", port)
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"keep","namespace":"default"},"data":{"a":"b"}}`
	resp, err := c.Post(url+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created map[string]any
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %v", resp.StatusCode, created)
	}
	stop()
	// The metrics-server's port is kept for the next start (it runs only
	// with a non-loopback address).
	metricsPort := func() string {
		if hostIP("") == "" {
			return ""
		}
		b, err := os.ReadFile(MetricsServerPortPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	msPort := metricsPort()

	c, url, stop = startUp(t, dir, "etcd", port)
	defer stop()
	if p := metricsPort(); p != msPort {
		t.Errorf("metrics-server port %q after restart, want the kept %q", p, msPort)
	}
	resp, err = c.Get(url + "/api/v1/namespaces/default/configmaps/keep")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	uid := func(m map[string]any) any { return m["metadata"].(map[string]any)["uid"] }
	if resp.StatusCode != 200 || uid(got) != uid(created) {
		t.Fatalf("after restart: %d %v (want uid %v)", resp.StatusCode, got, uid(created))
	}
	// The certificates were reused, not regenerated.
	if _, err := os.Stat(filepath.Join(dir, "pki", "ca.crt")); err != nil {
		t.Fatal(err)
	}
}

func TestUpMemory(t *testing.T) {
	c, url, stop := startUp(t, t.TempDir(), "memory", freePort(t))
	defer stop()
	resp, err := c.Get(url + "/api/v1/namespaces/kube-system")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("kube-system: %d", resp.StatusCode)
	}
}

// TestUpControllerManager: skiff up runs the controller manager
// in-process: a new namespace gets its default service account and
// kube-root-ca.crt (the cluster CA), and its /healthz is served when asked.
func TestUpControllerManager(t *testing.T) {
	dir := t.TempDir()
	cmPort := freePort(t)
	var out bytes.Buffer
	up, err := NewUp(UpConfig{DataDir: dir, Storage: "memory", SecurePort: freePort(t), Out: &out, ControllerManagerSecurePort: cmPort, ContainerRuntime: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- up.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("up returned %v", err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(KubeconfigPath(dir)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no kubeconfig")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c, url := adminClient(t, KubeconfigPath(dir))
	waitReady(t, c, url, errc)
	resp, err := c.Post(url+"/api/v1/namespaces", "application/json", strings.NewReader(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get := func(path string) (int, []byte) {
		resp, err := c.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		saCode, _ := get("/api/v1/namespaces/team/serviceaccounts/default")
		cmCode, b := get("/api/v1/namespaces/team/configmaps/kube-root-ca.crt")
		var cm struct {
			Data map[string]string `json:"data"`
		}
		_ = json.Unmarshal(b, &cm)
		if saCode == 200 && cmCode == 200 && cm.Data["ca.crt"] == string(caPEM) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("team: service account %d, kube-root-ca.crt %d %s", saCode, cmCode, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The controllers act as system:kube-controller-manager.
	_, b := get("/api/v1/namespaces/team/configmaps/kube-root-ca.crt")
	if !strings.Contains(string(b), `"manager":"kube-controller-manager"`) {
		t.Errorf("kube-root-ca.crt not written by kube-controller-manager: %s", b)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	resp, err = hc.Get("https://127.0.0.1:" + itoa(cmPort) + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(hb) != "ok" {
		t.Errorf("controller manager /healthz: %d %s", resp.StatusCode, hb)
	}
	if _, err := os.Stat(ControllerManagerKubeconfigPath(dir)); err != nil {
		t.Errorf("controller manager kubeconfig: %v", err)
	}
}

func TestAPIServerOnExternalEtcdWithTokens(t *testing.T) {
	dir := t.TempDir()
	clientURL := "http://127.0.0.1:" + itoa(freePort(t))
	e, err := etcd3.StartEmbedded(context.Background(), etcd3.EmbeddedConfig{Dir: filepath.Join(dir, "etcd"), ClientURL: clientURL, UnsafeNoFsync: true, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	now := time.Now()
	ca, err := pki.EnsureCA(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pki.EnsureServing(dir, "apiserver", ca, []string{"127.0.0.1"}, now); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens.csv")
	os.WriteFile(tokens, []byte("s3cret,alice,1001,\"system:masters,dev\"\n"), 0o600)
	cert, key := pki.Files(dir, "apiserver")
	if _, err := pki.EnsureSigningKey(dir, "sa"); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- RunAPIServer(ctx, APIServerConfig{
			EtcdServers: []string{clientURL}, BindAddress: "127.0.0.1", SecurePort: port,
			TLSCertFile: cert, TLSKeyFile: key, TokenAuthFile: tokens,
			ServiceAccountSigningKeyFile: filepath.Join(dir, "sa.key"),
		})
	}()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("apiserver returned %v", err)
		}
	}()
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	url := "https://127.0.0.1:" + itoa(port)
	waitReady(t, c, url, errc)
	cases := []struct {
		token string
		code  int
	}{{"s3cret", 200}, {"wrong", 401}, {"", 401}}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", url+"/api/v1/namespaces", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("token %q: %d %s", tc.token, resp.StatusCode, b)
		}
		if tc.code == 401 && !strings.Contains(string(b), `"reason":"Unauthorized"`) {
			t.Errorf("token %q: 401 without Status body: %s", tc.token, b)
		}
	}

	// --service-account-signing-key-file: TokenRequest issues a token that
	// authenticates as the service account.
	call := func(method, path, bearer string, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// An API server alone has no controllers: no default service account
	// (created here) and no kube-root-ca.crt, as upstream.
	if code, b := call("GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", "s3cret", ""); code != http.StatusNotFound {
		t.Errorf("kube-root-ca.crt without a controller manager: %d %s", code, b)
	}
	if code, b := call("POST", "/api/v1/namespaces/default/serviceaccounts", "s3cret",
		`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`); code != http.StatusCreated {
		t.Fatalf("creating the default service account: %d %s", code, b)
	}
	code, b := call("POST", "/api/v1/namespaces/default/serviceaccounts/default/token", "s3cret",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)
	var tr struct {
		Status struct{ Token string } `json:"status"`
	}
	if err := json.Unmarshal(b, &tr); code != http.StatusCreated || err != nil || tr.Status.Token == "" {
		t.Fatalf("TokenRequest: %d %s", code, b)
	}
	code, b = call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", tr.Status.Token,
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	if code != http.StatusCreated || !strings.Contains(string(b), `"username":"system:serviceaccount:default:default"`) {
		t.Errorf("whoami with the service account token: %d %s", code, b)
	}
}

// TestAPIServerBadServiceAccountKey: a --service-account-signing-key-file
// skiff cannot use is a clear start-up error.
func TestAPIServerBadServiceAccountKey(t *testing.T) {
	dir := t.TempDir()
	rsaKey := filepath.Join(dir, "rsa.key")
	os.WriteFile(rsaKey, []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"), 0o600)
	notPEM := filepath.Join(dir, "junk.key")
	os.WriteFile(notPEM, []byte("junk"), 0o600)
	now := time.Now()
	ca, err := pki.EnsureCA(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pki.EnsureServing(dir, "apiserver", ca, []string{"127.0.0.1"}, now); err != nil {
		t.Fatal(err)
	}
	cert, key := pki.Files(dir, "apiserver")
	caFile, _ := pki.Files(dir, "ca")
	tests := []struct{ file, want string }{
		{rsaKey, "ECDSA P-256"},
		{notPEM, "not PEM"},
		{filepath.Join(dir, "missing.key"), "no such file"},
	}
	for _, tt := range tests {
		err := RunAPIServer(context.Background(), APIServerConfig{
			Storage: "memory", BindAddress: "127.0.0.1", SecurePort: freePort(t),
			TLSCertFile: cert, TLSKeyFile: key, ClientCAFile: caFile,
			ServiceAccountSigningKeyFile: tt.file,
		})
		if err == nil || !strings.Contains(err.Error(), "--service-account-signing-key-file") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want a --service-account-signing-key-file error mentioning %q", tt.file, err, tt.want)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// A second cluster on a data dir that a running one holds fails at once,
// naming the holder (it used to block forever on etcd's database lock).
func TestUpDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	_, _, stop := startUp(t, dir, "etcd", freePort(t))
	defer stop()
	up, err := NewUp(UpConfig{DataDir: dir, Storage: "etcd", SecurePort: freePort(t), ContainerRuntime: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = up.Run(ctx)
	want := "data dir " + dir + " is in use by skiff (pid " + strconv.Itoa(os.Getpid()) + ")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second up: %v, want an error containing %q", err, want)
	}
}

func TestUpDisable(t *testing.T) {
	if _, err := NewUp(UpConfig{DataDir: t.TempDir(), Disable: []string{"scheduler", "nonsense"}}); err == nil ||
		!strings.Contains(err.Error(), `unknown component "nonsense"`) {
		t.Fatalf("unknown component: %v", err)
	}
	// Without skiff's controllers, the API server alone creates no
	// per-namespace objects (upstream's API server alone has none).
	dir := t.TempDir()
	var out bytes.Buffer
	up, err := NewUp(UpConfig{DataDir: dir, Storage: "memory", SecurePort: freePort(t), Out: &out, ContainerRuntime: "sim",
		Disable: []string{"controller-manager", "scheduler"}})
	if err != nil {
		t.Fatal(err)
	}
	c, url, errc, cancel := runUp(t, up, dir)
	resp, err := c.Post(url+"/api/v1/namespaces", "application/json", strings.NewReader(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bare"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(url + "/api/v1/namespaces/bare/serviceaccounts/default")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("default service account with the controller manager disabled: %d, want 404", resp.StatusCode)
	}
	resp, err = c.Get(url + "/api/v1/namespaces/bare/configmaps/kube-root-ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("kube-root-ca.crt with the controller manager disabled: %d, want 404", resp.StatusCode)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Disabled: controller-manager, scheduler", "skiff stopped; nothing was kept (--storage=memory)."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out.String(), want)
		}
	}
}

// With every component disabled (the API server alone, as the benchmarks
// run it), skiff up keeps serving after its own start-up work is done
// (the node bootstrap RBAC once returned and so stopped the cluster).
func TestUpAPIServerAloneStaysUp(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	up, err := NewUp(UpConfig{DataDir: dir, Storage: "memory", SecurePort: freePort(t), Out: &out, ContainerRuntime: "sim",
		Disable: Components})
	if err != nil {
		t.Fatal(err)
	}
	c, url, errc, cancel := runUp(t, up, dir)
	get := func(path string) int {
		resp, err := c.Get(url + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// The start-up work is done once kubeadm's bindings exist...
	end30 := time.Now().Add(30 * time.Second)
	for get("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/kubeadm:kubelet-bootstrap") != http.StatusOK {
		if time.Now().After(end30) {
			t.Fatal("no kubeadm:kubelet-bootstrap binding")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// ...and the server still answers for the next second.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-errc:
			t.Fatalf("skiff up returned (%v) with every component disabled; output:\n%s", err, out.String())
		default:
		}
		if code := get("/api/v1/namespaces/default"); code != http.StatusOK {
			t.Fatalf("GET namespace: %d", code)
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("up returned %v", err)
	}
}
