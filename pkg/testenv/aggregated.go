package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/skiff-sh/skiff/pkg/pki"
)

// AggregatedServer is an HTTPS server shaped like an aggregated API server
// (metrics-server, a custom API server): it serves with a certificate of
// its own CA for <Service>.<Namespace>.svc and accepts only clients
// presenting a certificate signed by the front-proxy CA, as servers built
// on upstream's delegated authentication do; the user is in the
// X-Remote-User, X-Remote-Group and X-Remote-Extra-* headers. Its address
// is a non-loopback IPv4 address of this host, since EndpointSlices may
// not name loopback addresses.
type AggregatedServer struct {
	// Namespace and Service name the Service that fronts it.
	Namespace, Service string
	// CAData (PEM) is its serving CA, the APIService's caBundle.
	CAData []byte
	// IP and Port are where it listens.
	IP   string
	Port int

	srv *http.Server
}

// ErrNoHostIP is returned when the host has no non-loopback IPv4 address
// to serve an aggregated API on (tests skip then).
var ErrNoHostIP = errors.New("testenv: no non-loopback IPv4 address for an EndpointSlice")

// NewAggregatedServer starts h as an aggregated API server for the
// Service namespace/service, trusting clients signed by frontProxyCA
// (PEM). Close it when done.
func NewAggregatedServer(frontProxyCA []byte, namespace, service string, h http.Handler) (*AggregatedServer, error) {
	ip := HostIPv4()
	if ip == "" {
		return nil, ErrNoHostIP
	}
	dir, err := os.MkdirTemp("", "skiff-aggregated-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	now := time.Now()
	ca, err := pki.EnsureNamedCA(dir, "ca", "aggregated-ca", now)
	if err != nil {
		return nil, err
	}
	serving, err := pki.EnsureServing(dir, "serving", ca, []string{service + "." + namespace + ".svc"}, now)
	if err != nil {
		return nil, err
	}
	clients := x509.NewCertPool()
	if !clients.AppendCertsFromPEM(frontProxyCA) {
		return nil, errors.New("testenv: no front-proxy CA certificate")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	s := &AggregatedServer{Namespace: namespace, Service: service, CAData: ca.CertPEM, IP: ip, Port: ln.Addr().(*net.TCPAddr).Port}
	s.srv = &http.Server{Handler: h, ErrorLog: nil, TLSConfig: &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key}},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: clients,
	}}
	go s.srv.ServeTLS(ln, "", "")
	return s, nil
}

// Close stops the server.
func (s *AggregatedServer) Close() error { return s.srv.Close() }

// Manifest is the Service (port 443, named https), its EndpointSlice
// pointing at the server, and the APIService for group/version, as one
// YAML stream for kubectl or the API.
func (s *AggregatedServer) Manifest(group, version string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  ports: [{name: https, port: 443, targetPort: %[3]d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[1]s-aggregated
  namespace: %[2]s
  labels: {kubernetes.io/service-name: %[1]s}
addressType: IPv4
endpoints: [{addresses: ["%[4]s"], conditions: {ready: true}}]
ports: [{name: https, port: %[3]d, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: %[6]s.%[5]s}
spec:
  group: %[5]s
  version: %[6]s
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {name: %[1]s, namespace: %[2]s}
  caBundle: %[7]s
`, s.Service, s.Namespace, s.Port, s.IP, group, version, base64.StdEncoding.EncodeToString(s.CAData))
}

// ServeAggregatedAPI starts h as the aggregated API server of
// group/version behind the Service kube-system/<service>, registers it
// (Service, EndpointSlice, APIService) and waits until the APIService is
// Available. The server stops with the Environment.
func (e *Environment) ServeAggregatedAPI(ctx context.Context, group, version, service string, h http.Handler) (*AggregatedServer, error) {
	s, err := NewAggregatedServer(e.FrontProxyCAData, "kube-system", service, h)
	if err != nil {
		return nil, err
	}
	e.cleanup = append(e.cleanup, func() { s.Close() })
	hc := e.HTTPClient()
	defer hc.CloseIdleConnections()
	for _, doc := range strings.Split(s.Manifest(group, version), "\n---\n") {
		path := map[string]string{
			"Service":       "/api/v1/namespaces/kube-system/services",
			"EndpointSlice": "/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices",
			"APIService":    "/apis/apiregistration.k8s.io/v1/apiservices",
		}[strings.TrimPrefix(strings.SplitN(doc, "\n", 3)[1], "kind: ")]
		if err := e.post(ctx, hc, path, doc); err != nil {
			return nil, err
		}
	}
	name := "/apis/apiregistration.k8s.io/v1/apiservices/" + version + "." + group
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+name, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `"reason":"Passed"`) {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("testenv: APIService %s.%s not Available: %s", version, group, body)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// post creates one object from YAML.
func (e *Environment) post(ctx context.Context, hc *http.Client, path, yaml string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+path, strings.NewReader(yaml))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/yaml")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("testenv: POST %s: %s: %s", path, resp.Status, msg)
	}
	return nil
}

// HostIPv4 is a non-loopback IPv4 address of this host, or "": an address
// an EndpointSlice may name (loopback addresses are refused) for a server
// a test runs.
func HostIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String()
		}
	}
	return ""
}
