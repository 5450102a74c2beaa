package apiserver

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/registry"
)

// Service account tokens are JWTs signed by the API server (ES256): the
// TokenRequest API (serviceaccounts/<name>/token, `kubectl create token`,
// the kubelet's projected token volumes) issues them and the
// authenticator below accepts them while the service account (and the
// object the token is bound to) still exists.

// DefaultServiceAccountIssuer is upstream's default issuer and API audience.
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

var grServiceAccounts = schema.GroupResource{Resource: "serviceaccounts"}

// saClaims are the claims of a service account token, as upstream writes them.
type saClaims struct {
	jwt.RegisteredClaims
	Kubernetes k8sClaims `json:"kubernetes.io"`
}

type k8sClaims struct {
	Namespace      string `json:"namespace"`
	ServiceAccount ref    `json:"serviceaccount"`
	Pod            *ref   `json:"pod,omitempty"`
	Secret         *ref   `json:"secret,omitempty"`
	Node           *ref   `json:"node,omitempty"`
	WarnAfter      *int64 `json:"warnafter,omitempty"`
}

type ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// keyID is upstream's key id: the base64url SHA-256 of the DER public key.
func keyID(pub crypto.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// serveTokenRequest issues a token for a service account.
func (s *Server) serveTokenRequest(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	if s.cfg.ServiceAccountSigner == nil {
		return pageNotFound()
	}
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	gvk := authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")
	obj, err := s.readTyped(w, r, gvk, &authenticationv1.TokenRequest{}, nil)
	if err != nil {
		return err
	}
	tr := obj.(*authenticationv1.TokenRequest)
	ctx := r.Context()
	// Admission sees the TokenRequest as a create of serviceaccounts/token,
	// as upstream's (NodeRestriction limits a kubelet to tokens bound to
	// its own pods; webhooks may match the subresource).
	o, err := parseWriteOptions(r.URL.Query(), "CreateOptions")
	if err != nil {
		return err
	}
	tr.SetGroupVersionKind(gvk)
	attrs := s.attributes(ctx, admission.Create, info, e, tr, nil, o)
	attrs.Kind, attrs.RequestKind = gvk.GroupKind(), gvk
	attrs.Versions = subresourceVersions{v: &admissionVersions{s: s, e: e}, gvk: gvk, newObj: func() runtime.Object { return &authenticationv1.TokenRequest{} }}
	if err := s.admit(ctx, attrs); err != nil {
		return err
	}
	tr, ok := attrs.Object.(*authenticationv1.TokenRequest)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("unexpected token request object %T after admission", attrs.Object))
	}
	if err := s.admission.Validate(ctx, attrs); err != nil {
		return err
	}
	saObj, err := e.store.Get(ctx, info.Namespace, info.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	sa := saObj.(*corev1.ServiceAccount)
	if tr.Spec.ExpirationSeconds == nil {
		def := int64(3600)
		tr.Spec.ExpirationSeconds = &def
	}
	if len(tr.Spec.Audiences) == 0 {
		tr.Spec.Audiences = []string{s.cfg.ServiceAccountIssuer}
	}
	if *tr.Spec.ExpirationSeconds < 600 {
		return apierrors.NewInvalid(schema.GroupKind{Group: "authentication.k8s.io", Kind: "TokenRequest"}, info.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "expirationSeconds"), *tr.Spec.ExpirationSeconds, "may not specify a duration less than 10 minutes")})
	}
	now := s.cfg.Clock.Now()
	exp := now.Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second)
	claims := saClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.cfg.ServiceAccountIssuer,
			Subject:   "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
			Audience:  jwt.ClaimStrings(tr.Spec.Audiences),
			ExpiresAt: jwt.NewNumericDate(exp),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ID:        string(registry.NewUID(s.cfg.Rand)),
		},
		Kubernetes: k8sClaims{Namespace: sa.Namespace, ServiceAccount: ref{Name: sa.Name, UID: string(sa.UID)}},
	}
	if b := tr.Spec.BoundObjectRef; b != nil {
		bound, err := s.boundObject(ctx, info.Namespace, b)
		if err != nil {
			return err
		}
		switch b.Kind {
		case "Pod":
			claims.Kubernetes.Pod = bound
		case "Secret":
			claims.Kubernetes.Secret = bound
		case "Node":
			claims.Kubernetes.Node = bound
		}
	}
	token := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	token.Header["kid"] = keyID(s.cfg.ServiceAccountSigner.Public())
	signed, err := token.SignedString(s.cfg.ServiceAccountSigner)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	tr.Status = authenticationv1.TokenRequestStatus{Token: signed, ExpirationTimestamp: metav1.NewTime(exp)}
	tr.Name, tr.Namespace = sa.Name, sa.Namespace
	tr.SetGroupVersionKind(gvk)
	s.writeObject(w, r, http.StatusCreated, m, tr)
	return nil
}

// boundObject checks the object a token is bound to and returns its ref.
func (s *Server) boundObject(ctx context.Context, ns string, b *authenticationv1.BoundObjectReference) (*ref, error) {
	var gr schema.GroupResource
	switch b.Kind {
	case "Pod":
		gr = grPods
	case "Secret":
		gr = schema.GroupResource{Resource: "secrets"}
	case "Node":
		gr, ns = schema.GroupResource{Resource: "nodes"}, ""
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount to object of kind %q", b.Kind))
	}
	obj, err := s.GetConsistent(ctx, gr, ns, b.Name)
	if err != nil {
		return nil, err
	}
	m := obj.(metav1.Object)
	if b.UID != "" && b.UID != m.GetUID() {
		return nil, apierrors.NewConflict(gr, b.Name, fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", b.UID))
	}
	return &ref{Name: m.GetName(), UID: string(m.GetUID())}, nil
}

// saTokenAuthenticator accepts service account tokens this server issued.
// A token that authenticated is remembered for saTokenCacheTTL (at most
// until it expires), as upstream's cached token authenticator does
// (--authentication-token-success-cache-ttl... 10 s): a client's requests
// after the first cost a hash and a map lookup instead of a signature
// check and two consistent reads; a deleted service account or pod is
// noticed within that time.
type saTokenAuthenticator struct {
	s *Server

	mu    sync.Mutex
	cache map[[32]byte]saCacheEntry
}

type saCacheEntry struct {
	user  *User
	until time.Time
}

// saTokenCacheTTL is upstream's default success cache TTL for tokens.
const saTokenCacheTTL = 10 * time.Second

// maxCachedTokens bounds the token cache.
const maxCachedTokens = 4096

func (a *saTokenAuthenticator) Authenticate(r *http.Request) (*User, bool, error) {
	raw, ok := bearerToken(r)
	if !ok {
		return nil, false, nil
	}
	if strings.Count(raw, ".") != 2 {
		return nil, false, nil // not a JWT: another authenticator's
	}
	if _, ok := a.s.cfg.ServiceAccountSigner.Public().(*ecdsa.PublicKey); !ok {
		return nil, false, nil
	}
	key := sha256.Sum256([]byte(raw))
	now := a.s.cfg.Clock.Now()
	a.mu.Lock()
	e, hit := a.cache[key]
	a.mu.Unlock()
	if hit && now.Before(e.until) {
		return e.user, true, nil
	}
	u, exp, err := a.verify(r, raw)
	if err != nil {
		return nil, false, err
	}
	until := now.Add(saTokenCacheTTL)
	if !exp.IsZero() && exp.Before(until) {
		until = exp
	}
	a.mu.Lock()
	if a.cache == nil || len(a.cache) >= maxCachedTokens {
		a.cache = map[[32]byte]saCacheEntry{}
	}
	a.cache[key] = saCacheEntry{user: u, until: until}
	a.mu.Unlock()
	return u, true, nil
}

// verify checks a token's signature, issuer, audience and times, and that
// the service account (and the pod or secret it is bound to) still
// exists. exp is the token's expiry.
func (a *saTokenAuthenticator) verify(r *http.Request, raw string) (*User, time.Time, error) {
	s := a.s
	pub := s.cfg.ServiceAccountSigner.Public().(*ecdsa.PublicKey)
	claims := &saClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(s.cfg.ServiceAccountIssuer),
		jwt.WithAudience(s.cfg.ServiceAccountIssuer), jwt.WithTimeFunc(s.cfg.Clock.Now))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("service account token: %w", err)
	}
	k := claims.Kubernetes
	ctx := r.Context()
	// Consistent reads: once a DELETE of the service account (or pod) has
	// answered, no verification may find it in a watch cache that has not
	// yet seen the deletion (the success cache is what bounds the cost).
	obj, err := s.GetConsistent(ctx, grServiceAccounts, k.Namespace, k.ServiceAccount.Name)
	if err != nil || string(obj.(*corev1.ServiceAccount).UID) != k.ServiceAccount.UID {
		return nil, time.Time{}, fmt.Errorf("service account %s/%s has been deleted", k.Namespace, k.ServiceAccount.Name)
	}
	u := &User{
		Name:   "system:serviceaccount:" + k.Namespace + ":" + k.ServiceAccount.Name,
		UID:    k.ServiceAccount.UID,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + k.Namespace},
	}
	// Upstream's extras: what the token is bound to, and its id.
	extra := map[string][]string{}
	if k.Pod != nil {
		pod, err := s.GetConsistent(ctx, grPods, k.Namespace, k.Pod.Name)
		if err != nil || string(pod.(*corev1.Pod).UID) != k.Pod.UID {
			return nil, time.Time{}, fmt.Errorf("pod %s/%s has been deleted", k.Namespace, k.Pod.Name)
		}
		extra["authentication.kubernetes.io/pod-name"] = []string{k.Pod.Name}
		extra["authentication.kubernetes.io/pod-uid"] = []string{k.Pod.UID}
	}
	if k.Node != nil {
		extra["authentication.kubernetes.io/node-name"] = []string{k.Node.Name}
		extra["authentication.kubernetes.io/node-uid"] = []string{k.Node.UID}
	}
	if claims.ID != "" {
		extra["authentication.kubernetes.io/credential-id"] = []string{"JTI=" + claims.ID}
	}
	if len(extra) > 0 {
		u.Extra = extra
	}
	var exp time.Time
	if claims.ExpiresAt != nil {
		exp = claims.ExpiresAt.Time
	}
	return u, exp, nil
}
