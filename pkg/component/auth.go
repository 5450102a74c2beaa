package component

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
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
// SubjectAccessReview. Without an authentication client tokens are
// ignored (the request is anonymous); without an authorization client only
// the always-allowed paths and system:masters are allowed.
type delegatedAuth struct {
	alwaysAllow []string // paths; "/foo/*" is a prefix
	logger      *slog.Logger
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
	a := &delegatedAuth{alwaysAllow: cfg.AuthorizationAlwaysAllowPaths, logger: logger}
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

// authenticate is upstream's delegating authenticator: a client
// certificate (when a client CA is known), a bearer token (when tokens are
// reviewed), else system:anonymous. A certificate or token that is
// presented and fails is an error (401), not anonymous, unless the other
// one succeeds.
func (a *delegatedAuth) authenticate(r *http.Request) (userInfo, error) {
	var errs []error
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		if cas := a.lookupClientCA(r.Context()); cas != nil {
			inter := x509.NewCertPool()
			for _, c := range r.TLS.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			leaf := r.TLS.PeerCertificates[0]
			_, err := leaf.Verify(x509.VerifyOptions{Roots: cas, Intermediates: inter,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			if err == nil {
				return userInfo{name: leaf.Subject.CommonName, groups: slices.Concat(leaf.Subject.Organization, []string{"system:authenticated"})}, nil
			}
			errs = append(errs, fmt.Errorf("verifying certificate %q failed: %w", leaf.Subject.CommonName, err))
		}
	}
	if token, ok := bearerToken(r); ok && a.authn != nil {
		tr := &authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
			Spec: authenticationv1.TokenReviewSpec{Token: token}}
		switch err := post(r.Context(), a.authn, "/apis/authentication.k8s.io/v1/tokenreviews", tr, tr); {
		case err != nil:
			errs = append(errs, err)
		case !tr.Status.Authenticated:
			errs = append(errs, errors.New("invalid bearer token"))
		default:
			u := tr.Status.User
			return userInfo{name: u.Username, uid: u.UID, groups: u.Groups}, nil
		}
	}
	if err := errors.Join(errs...); err != nil {
		return userInfo{}, err
	}
	return userInfo{name: anonymousUser, groups: []string{"system:unauthenticated"}}, nil
}

// bearerToken is the token of an "Authorization: Bearer <token>" header
// (the scheme is case-insensitive, as upstream's).
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token, _, _ = strings.Cut(token, " ")
	return token, token != ""
}

// authorize is upstream's delegating authorizer: the always-allowed
// paths, the system:masters group, else a SubjectAccessReview. It returns
// the review's reason when denied.
func (a *delegatedAuth) authorize(r *http.Request, u userInfo) (bool, string, error) {
	for _, p := range a.alwaysAllow {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(r.URL.Path, prefix) || p == r.URL.Path {
			return true, "", nil
		}
	}
	if slices.Contains(u.groups, "system:masters") {
		return true, "", nil
	}
	if a.authz == nil {
		return false, "", nil
	}
	sar := &authorizationv1.SubjectAccessReview{TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
		Spec: authorizationv1.SubjectAccessReviewSpec{User: u.name, UID: u.uid, Groups: u.groups,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}}}
	if err := post(r.Context(), a.authz, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar, sar); err != nil {
		return false, "", err
	}
	return sar.Status.Allowed, sar.Status.Reason, nil
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

// wrap guards h as upstream's filters do: every answer is "Cache-Control:
// no-cache, private"; a failed authentication is a 401 Status, a denial a
// 403 Status ("forbidden: User %q cannot <verb> path %q[: reason]"), a
// review that could not be made a 500.
func (a *delegatedAuth) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache, private")
		u, err := a.authenticate(r)
		if err != nil {
			a.logger.Debug("Unable to authenticate the request", "err", err)
			writeStatus(w, r, &metav1.Status{Status: metav1.StatusFailure, Message: "Unauthorized",
				Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized})
			return
		}
		allowed, reason, err := a.authorize(r, u)
		if err != nil {
			a.logger.Error("Unable to authorize the request", "err", err)
			http.Error(w, fmt.Sprintf("Internal Server Error: %q: %v", html.EscapeString(r.RequestURI), err), http.StatusInternalServerError)
			return
		}
		if !allowed {
			msg := fmt.Sprintf("User %q cannot %s path %q", u.name, strings.ToLower(r.Method), r.URL.Path)
			if reason != "" {
				msg += ": " + reason
			}
			w.Header().Set("X-Content-Type-Options", "nosniff")
			writeStatus(w, r, &metav1.Status{Status: metav1.StatusFailure, Message: "forbidden: " + msg,
				Reason: metav1.StatusReasonForbidden, Details: &metav1.StatusDetails{}, Code: http.StatusForbidden})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// writeStatus writes st as JSON (one line and a newline), indented (no
// final newline) for ?pretty=true and for the user agents upstream
// pretty-prints for (curl, Wget, browsers) unless ?pretty=false.
func writeStatus(w http.ResponseWriter, r *http.Request, st *metav1.Status) {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	var body []byte
	if pretty(r) {
		body, _ = json.MarshalIndent(st, "", "  ") // without a final newline, as upstream's
	} else {
		body, _ = json.Marshal(st)
		body = append(body, '\n')
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(body)
}

func pretty(r *http.Request) bool {
	if p := r.URL.Query().Get("pretty"); p != "" {
		b, _ := strconv.ParseBool(p)
		return b
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}
