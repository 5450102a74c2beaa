package server

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// TokenAuthenticator reviews a bearer token: the user it stands for, or
// ok false when it is not valid.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (user *authenticationv1.UserInfo, ok bool, err error)
}

// Attributes are what a request to the kubelet asks, as upstream's
// kubelet builds them: resource nodes, the node's name, a subresource by
// path, the verb from the HTTP method.
type Attributes struct {
	User        *authenticationv1.UserInfo
	Verb        string
	Name        string
	Subresource string
	Path        string
}

// Authorizer decides a request.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (allowed bool, reason string, err error)
}

// verbFor is upstream's kubelet mapping of HTTP methods to API verbs.
func verbFor(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

func isSubpath(p, prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// subresourcesFor is upstream's (1.34, KubeletFineGrainedAuthz on)
// choice of subresources for a path, tried in order until one allows:
// /pods and /runningpods pods then proxy, /healthz healthz then proxy,
// /configz configz then proxy; /stats stats, /metrics metrics, /logs log,
// /checkpoint checkpoint, /statusz statusz, /flagz configz; any other path
// proxy (exec, attach, portForward, containerLogs among them).
func subresourcesFor(p string) []string {
	var subs []string
	switch {
	case isSubpath(p, "/pods"):
		subs = append(subs, "pods")
	case isSubpath(p, "/healthz"):
		subs = append(subs, "healthz")
	case isSubpath(p, "/configz"):
		subs = append(subs, "configz")
	case isSubpath(p, "/runningpods"):
		subs = append(subs, "pods")
	}
	switch {
	case isSubpath(p, "/stats"):
		subs = append(subs, "stats")
	case isSubpath(p, "/metrics"):
		subs = append(subs, "metrics")
	case isSubpath(p, "/logs"):
		subs = append(subs, "log")
	case isSubpath(p, "/checkpoint"):
		subs = append(subs, "checkpoint")
	case isSubpath(p, "/statusz"):
		subs = append(subs, "statusz")
	case isSubpath(p, "/flagz"):
		subs = append(subs, "configz")
	default:
		subs = append(subs, "proxy")
	}
	return subs
}

// authenticate is upstream's kubelet authenticator: a client certificate
// of the client CA, else a bearer token the webhook accepts, else
// system:anonymous when anonymous requests are enabled — unless a
// certificate or token was presented and failed (upstream's anonymous
// authenticator comes after the others with fail-on-error). ok false: 401.
func (s *Server) authenticate(r *http.Request) (*authenticationv1.UserInfo, bool) {
	failed := false
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && s.cfg.ClientCA != nil {
		inter := x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		leaf := r.TLS.PeerCertificates[0]
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: s.cfg.ClientCA, Intermediates: inter, CurrentTime: s.cfg.Clock.Now(),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
			return &authenticationv1.UserInfo{Username: leaf.Subject.CommonName,
				Groups: append(slices.Clone(leaf.Subject.Organization), "system:authenticated")}, true
		} else {
			failed = true
			s.log.Debug("Unable to authenticate the request", "err", fmt.Errorf("verifying certificate %q failed: %w", leaf.Subject.CommonName, err))
		}
	}
	if token, ok := bearerToken(r); ok && s.cfg.Authenticator != nil {
		u, ok, err := s.cfg.Authenticator.AuthenticateToken(r.Context(), token)
		if err != nil {
			s.log.Error("Unable to authenticate the request due to an error", "err", err)
			return nil, false
		}
		if ok {
			return u, true
		}
		return nil, false
	}
	if s.cfg.Anonymous && !failed {
		return &authenticationv1.UserInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}, true
	}
	return nil, false
}

func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// authFilter is upstream's kubelet auth filter: 401 "Unauthorized" when
// no user is established, then the path's subresources tried in order;
// none allowing is a 403 "Forbidden (user=..., verb=..., resource=nodes,
// subresource(s)=[...])", an authorizer failure a 500.
func (s *Server) authFilter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.authenticate(r)
		if !ok {
			writeText(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		if s.cfg.Authorizer != nil {
			verb := verbFor(r.Method)
			subs := subresourcesFor(r.URL.Path)
			allowed := false
			for _, sub := range subs {
				ok, _, err := s.cfg.Authorizer.Authorize(r.Context(), Attributes{User: u, Verb: verb, Name: s.cfg.NodeName, Subresource: sub, Path: r.URL.Path})
				if err != nil {
					s.log.Error("Authorization error", "user", u.Username, "verb", verb, "resource", "nodes", "subresource", sub, "err", err)
					writeText(w, http.StatusInternalServerError, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=nodes, subresource=%s)", u.Username, verb, sub))
					return
				}
				if ok {
					allowed = true
					break
				}
			}
			if !allowed {
				s.log.Debug("Forbidden", "user", u.Username, "verb", verb, "resource", "nodes", "subresource(s)", subs)
				writeText(w, http.StatusForbidden, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource(s)=[%s])\n", u.Username, verb, strings.Join(subs, " ")))
				return
			}
		}
		s.metrics.request(r)
		next.ServeHTTP(w, r)
	})
}

// Webhook authenticates tokens with TokenReviews and authorizes with
// SubjectAccessReviews through the API server, caching answers as
// upstream's kubelet does (tokens 2 min; allowed 5 min, denied 30 s).
type Webhook struct {
	c     *client.Client
	clock clock.Clock

	mu     sync.Mutex
	tokens map[[32]byte]tokenEntry
	access map[string]accessEntry
}

type tokenEntry struct {
	user    *authenticationv1.UserInfo
	ok      bool
	expires time.Time
}

type accessEntry struct {
	allowed bool
	reason  string
	expires time.Time
}

// Upstream kubelet's webhook cache TTLs.
const (
	TokenCacheTTL        = 2 * time.Minute
	AuthorizedCacheTTL   = 5 * time.Minute
	UnauthorizedCacheTTL = 30 * time.Second
	maxCacheEntries      = 4096
)

// NewWebhook reviews through c (the kubelet's own client: the node's
// identity may create tokenreviews and subjectaccessreviews); clk nil is
// the real clock.
func NewWebhook(c *client.Client, clk clock.Clock) *Webhook {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Webhook{c: c, clock: clk, tokens: map[[32]byte]tokenEntry{}, access: map[string]accessEntry{}}
}

// AuthenticateToken implements TokenAuthenticator.
func (h *Webhook) AuthenticateToken(ctx context.Context, token string) (*authenticationv1.UserInfo, bool, error) {
	key := sha256.Sum256([]byte(token))
	now := h.clock.Now()
	h.mu.Lock()
	e, hit := h.tokens[key]
	h.mu.Unlock()
	if hit && now.Before(e.expires) {
		return e.user, e.ok, nil
	}
	tr := &authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
		Spec: authenticationv1.TokenReviewSpec{Token: token}}
	if err := post(ctx, h.c, "/apis/authentication.k8s.io/v1/tokenreviews", tr, tr); err != nil {
		return nil, false, err
	}
	u := tr.Status.User
	e = tokenEntry{user: &u, ok: tr.Status.Authenticated, expires: now.Add(TokenCacheTTL)}
	h.mu.Lock()
	if len(h.tokens) >= maxCacheEntries {
		clear(h.tokens)
	}
	h.tokens[key] = e
	h.mu.Unlock()
	return e.user, e.ok, nil
}

// Authorize implements Authorizer.
func (h *Webhook) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	var extraKeys []string
	for k, v := range a.User.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
		extraKeys = append(extraKeys, k+"="+strings.Join(v, ","))
	}
	sort.Strings(extraKeys)
	key := strings.Join([]string{a.User.Username, a.User.UID, strings.Join(a.User.Groups, ","), strings.Join(extraKeys, ";"), a.Verb, a.Name, a.Subresource}, "\x00")
	now := h.clock.Now()
	h.mu.Lock()
	e, hit := h.access[key]
	h.mu.Unlock()
	if hit && now.Before(e.expires) {
		return e.allowed, e.reason, nil
	}
	sar := &authorizationv1.SubjectAccessReview{TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
		Spec: authorizationv1.SubjectAccessReviewSpec{User: a.User.Username, UID: a.User.UID, Groups: a.User.Groups, Extra: extra,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: a.Verb, Version: "v1", Resource: "nodes", Subresource: a.Subresource, Name: a.Name}}}
	if len(extra) == 0 {
		sar.Spec.Extra = nil
	}
	if err := post(ctx, h.c, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar, sar); err != nil {
		return false, "", err
	}
	e = accessEntry{allowed: sar.Status.Allowed, reason: sar.Status.Reason, expires: now.Add(UnauthorizedCacheTTL)}
	if e.allowed {
		e.expires = now.Add(AuthorizedCacheTTL)
	}
	h.mu.Lock()
	if len(h.access) >= maxCacheEntries {
		clear(h.access)
	}
	h.access[key] = e
	h.mu.Unlock()
	return e.allowed, e.reason, nil
}

func post(ctx context.Context, c *client.Client, path string, in, out any) error {
	if c == nil {
		return errors.New("no API server client to review with")
	}
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

// writeText answers code with msg as it is (upstream's WriteErrorString).
func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg))
}
