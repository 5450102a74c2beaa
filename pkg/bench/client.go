package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/skiff-sh/skiff/pkg/kubeconfig"
)

// Client talks to one API server over HTTPS with JSON. Its transport keeps
// one HTTP/2 connection and multiplexes every request over it, as client-go
// does.
type Client struct {
	// URL is the server's base address, https://host:port.
	URL  string
	HTTP *http.Client
	// Token, when set, is sent as a bearer token.
	Token string
	// serverPID, when known, is the server process, whose CPU time the
	// phases report.
	serverPID int
}

// NewClient returns a Client for url with the given TLS configuration
// (trusted roots and client certificate).
func NewClient(url string, tlsConfig *tls.Config) *Client {
	tr := &http.Transport{
		TLSClientConfig:     tlsConfig,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Client{URL: strings.TrimRight(url, "/"), HTTP: &http.Client{Transport: tr}}
}

// ClientFromKubeconfig builds a Client from a kubeconfig with inline
// certificate data (what `skiff up` writes).
func ClientFromKubeconfig(path string) (*Client, error) {
	kc, err := kubeconfig.Load(path)
	if err != nil {
		return nil, err
	}
	if len(kc.Clusters) == 0 || len(kc.Users) == 0 {
		return nil, fmt.Errorf("%s: no cluster or user", path)
	}
	cl, user := kc.Clusters[0].Cluster, kc.Users[0].User
	for _, c := range kc.Contexts {
		if c.Name != kc.CurrentContext {
			continue
		}
		for _, n := range kc.Clusters {
			if n.Name == c.Context.Cluster {
				cl = n.Cluster
			}
		}
		for _, n := range kc.Users {
			if n.Name == c.Context.User {
				user = n.User
			}
		}
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cl.CertificateAuthorityData) {
		return nil, fmt.Errorf("%s: no certificate-authority-data", path)
	}
	cert, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData)
	if err != nil {
		return nil, fmt.Errorf("%s: client certificate: %w", path, err)
	}
	return NewClient(cl.Server, &tls.Config{
		RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		ServerName: cl.TLSServerName,
	}), nil
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.HTTP.CloseIdleConnections() }

// Do sends a request with an optional JSON body and returns the response;
// the caller closes its body.
func (c *Client) Do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = int64(len(body))
	}
	return c.HTTP.Do(req)
}

// StatusError is an unexpected HTTP status with the start of its body.
type StatusError struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Code, e.Body)
}

// call sends a request, requires status want, and decodes the response
// into out (when out is not nil) or discards it.
func (c *Client) call(ctx context.Context, method, path string, body []byte, want int, out any) error {
	resp, err := c.Do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// CreateNamespace creates namespace name and its default service account
// (existing ones are fine): pods need the service account, and the
// server measured may run without a controller manager to create it.
func (c *Client) CreateNamespace(ctx context.Context, name string) error {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	})
	err := c.call(ctx, http.MethodPost, "/api/v1/namespaces", body, http.StatusCreated, nil)
	var se *StatusError
	if err != nil && !(errors.As(err, &se) && se.Code == http.StatusConflict) {
		return err
	}
	body, _ = json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"},
	})
	err = c.call(ctx, http.MethodPost, "/api/v1/namespaces/"+name+"/serviceaccounts", body, http.StatusCreated, nil)
	if errors.As(err, &se) && se.Code == http.StatusConflict {
		return nil
	}
	return err
}

// ServiceAccountClient sets up a service account in ns that RBAC allows
// to create pods there (a Role and RoleBinding), and returns a client
// authenticating with a token of it (no client certificate), once the
// server authorizes it.
func (c *Client) ServiceAccountClient(ctx context.Context, ns string) (*Client, error) {
	const name = "bench-creator"
	objs := []struct {
		path string
		obj  map[string]any
	}{
		{"/api/v1/namespaces/" + ns + "/serviceaccounts", map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name}}},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/roles", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
			"metadata": map[string]any{"name": name}, "rules": []map[string]any{{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"create"}}}}},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
			"metadata": map[string]any{"name": name}, "roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
			"subjects": []map[string]any{{"kind": "ServiceAccount", "name": name, "namespace": ns}}}},
	}
	for _, o := range objs {
		body, _ := json.Marshal(o.obj)
		if err := c.call(ctx, http.MethodPost, o.path, body, http.StatusCreated, nil); err != nil {
			return nil, err
		}
	}
	body, _ := json.Marshal(map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{"expirationSeconds": 3600}})
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := c.call(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name+"/token", body, http.StatusCreated, &tr); err != nil {
		return nil, err
	}
	tls := c.HTTP.Transport.(*http.Transport).TLSClientConfig.Clone()
	tls.Certificates = nil
	sa := NewClient(c.URL, tls)
	sa.Token, sa.serverPID = tr.Status.Token, c.serverPID
	// Wait until the binding reaches the authorizer.
	review, _ := json.Marshal(map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": map[string]any{"namespace": ns, "verb": "create", "resource": "pods"}}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var r struct {
			Status struct {
				Allowed bool `json:"allowed"`
			} `json:"status"`
		}
		err := sa.call(ctx, http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review, http.StatusCreated, &r)
		if err == nil && r.Status.Allowed {
			return sa, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("service account %s/%s is not allowed to create pods (%v)", ns, name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Ready reports whether GET /readyz answers 200 (anything else, including
// a 500 with a body, is not ready).
func (c *Client) Ready(ctx context.Context) bool {
	resp, err := c.Do(ctx, http.MethodGet, "/readyz", nil)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
