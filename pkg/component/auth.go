package component

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// delegatedAuth authenticates and authorizes requests to a component's
// HTTPS server as upstream's delegated authentication and authorization
// do: a client certificate signed by the client CA, else a bearer token
// checked with a TokenReview, else system:anonymous; then the
// always-allowed paths, the system:masters group, else a
// SubjectAccessReview. Without an authentication client no token is
// accepted; without an authorization client only the always-allowed paths
// and system:masters are.
type delegatedAuth struct {
	alwaysAllow []string // paths; "/foo/*" is a prefix
	authn       *client.Client
	authz       *client.Client

	mu        sync.Mutex
	clientCAs *x509.CertPool // looked up until found
}

type userInfo struct {
	name   string
	uid    string
	groups []string
}

const anonymousUser = "system:anonymous"

func newDelegatedAuth(cfg *ServingConfig, clk clock.Clock, logger *slog.Logger) (*delegatedAuth, error) {
	a := &delegatedAuth{alwaysAllow: cfg.AuthorizationAlwaysAllowPaths}
	load := func(path string) (*client.Client, error) {
		if path == "" {
			return nil, nil
		}
		cc, err := client.LoadKubeconfig(path, "")
		if err != nil {
			return nil, err
		}
		cc.Clock, cc.Logger = clk, logger
		return client.New(cc)
	}
	var err error
	if a.authn, err = load(cfg.AuthenticationKubeconfig); err != nil {
		return nil, fmt.Errorf("--authentication-kubeconfig: %w", err)
	}
	if a.authz, err = load(cfg.AuthorizationKubeconfig); err != nil {
		return nil, fmt.Errorf("--authorization-kubeconfig: %w", err)
	}
	if a.authn == nil {
		logger.Warn("No authentication-kubeconfig provided in order to lookup client-ca-file in configmap/extension-apiserver-authentication in kube-system, so client certificate authentication won't work.")
	}
	if a.authz == nil {
		logger.Warn("No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won't work.")
	}
	if cfg.ClientCAFile != "" {
		data, err := os.ReadFile(cfg.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		a.clientCAs = x509.NewCertPool()
		if !a.clientCAs.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("--client-ca-file %s: no certificates", cfg.ClientCAFile)
		}
	}
	return a, nil
}

// lookupClientCA reads the client CA the API server publishes in
// kube-system/extension-apiserver-authentication (upstream's lookup).
func (a *delegatedAuth) lookupClientCA(ctx context.Context) *x509.CertPool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.clientCAs != nil || a.authn == nil {
		return a.clientCAs
	}
	cm, err := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](a.authn).Namespace("kube-system").
		Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		return nil // not published yet: looked up again on the next request
	}
	if ca := cm.Data["client-ca-file"]; ca != "" {
		pool := x509.NewCertPool()
		if pool.AppendCertsFromPEM([]byte(ca)) {
			a.clientCAs = pool
		}
	}
	return a.clientCAs
}

func (a *delegatedAuth) authenticate(r *http.Request) (userInfo, bool, error) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		if cas := a.lookupClientCA(r.Context()); cas != nil {
			inter := x509.NewCertPool()
			for _, c := range r.TLS.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			leaf := r.TLS.PeerCertificates[0]
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: cas, Intermediates: inter,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
				return userInfo{name: leaf.Subject.CommonName, groups: slices.Concat(leaf.Subject.Organization, []string{"system:authenticated"})}, true, nil
			}
		}
	}
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && token != "" {
		if a.authn == nil {
			return userInfo{}, false, nil
		}
		tr := &authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
			Spec: authenticationv1.TokenReviewSpec{Token: strings.TrimSpace(token)}}
		if err := post(r.Context(), a.authn, "/apis/authentication.k8s.io/v1/tokenreviews", tr, tr); err != nil {
			return userInfo{}, false, err
		}
		if !tr.Status.Authenticated {
			return userInfo{}, false, nil
		}
		u := tr.Status.User
		return userInfo{name: u.Username, uid: u.UID, groups: u.Groups}, true, nil
	}
	return userInfo{name: anonymousUser, groups: []string{"system:unauthenticated"}}, true, nil
}

func (a *delegatedAuth) authorize(r *http.Request, u userInfo) (bool, error) {
	for _, p := range a.alwaysAllow {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(r.URL.Path, prefix) || p == r.URL.Path {
			return true, nil
		}
	}
	if slices.Contains(u.groups, "system:masters") {
		return true, nil
	}
	if a.authz == nil {
		return false, nil
	}
	sar := &authorizationv1.SubjectAccessReview{TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
		Spec: authorizationv1.SubjectAccessReviewSpec{User: u.name, UID: u.uid, Groups: u.groups,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}}}
	if err := post(r.Context(), a.authz, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar, sar); err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

func post(ctx context.Context, c *client.Client, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	resp, err := c.Do(ctx, &client.Request{Method: http.MethodPost, Path: path, Body: body, JSONOnly: true})
	if err != nil {
		return err
	}
	return json.Unmarshal(resp.Body, out)
}

// wrap guards h.
func (a *delegatedAuth) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := a.authenticate(r)
		if err != nil || !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		allowed, err := a.authorize(r, u)
		if err != nil {
			http.Error(w, "Internal Server Error: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if !allowed {
			msg := fmt.Sprintf("forbidden: User %q cannot %s path %q", u.name, strings.ToLower(r.Method), r.URL.Path)
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
