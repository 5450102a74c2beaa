package apiserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra is what the authenticator adds (a service account token's
	// credential id, pod and node), as upstream's user.Info.
	Extra map[string][]string
}

// userInfo is u as the API's UserInfo (what authorizers, reviews and
// strategies see).
func (u *User) userInfo() *authenticationv1.UserInfo {
	ui := &authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		ui.Extra = make(map[string]authenticationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			ui.Extra[k] = v
		}
	}
	return ui
}

// adminUser is every request's user when the server has no authenticator
// (in-process tests).
var adminUser = &User{Name: "system:admin", Groups: []string{"system:masters", "system:authenticated"}}

// Authenticator identifies the sender of a request. ok is false when the
// request carries no credentials this authenticator understands.
type Authenticator interface {
	Authenticate(r *http.Request) (user *User, ok bool, err error)
}

// UnionAuthenticator tries each authenticator in turn.
type UnionAuthenticator []Authenticator

func (u UnionAuthenticator) Authenticate(r *http.Request) (*User, bool, error) {
	var lastErr error
	for _, a := range u {
		user, ok, err := a.Authenticate(r)
		if err != nil {
			lastErr = err
			continue
		}
		if ok {
			return user, true, nil
		}
	}
	return nil, false, lastErr
}

// X509Authenticator accepts client certificates signed by the client CA:
// CN is the user, O the groups. A chain's verification (a signature check)
// is remembered until the certificate expires, so a client's requests after
// the first cost a hash lookup, as upstream's verify cache does.
type X509Authenticator struct {
	Roots *x509.CertPool

	mu       sync.Mutex
	verified map[[32]byte]time.Time // chain hash → leaf NotAfter
}

// NewX509Authenticator returns an authenticator for certificates signed by roots.
func NewX509Authenticator(roots *x509.CertPool) *X509Authenticator {
	return &X509Authenticator{Roots: roots}
}

// maxVerifiedCerts bounds the verification cache.
const maxVerifiedCerts = 4096

func (a *X509Authenticator) Authenticate(r *http.Request) (*User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	cert := r.TLS.PeerCertificates[0]
	h := sha256.New()
	for _, c := range r.TLS.PeerCertificates {
		h.Write(c.Raw)
	}
	var key [32]byte
	h.Sum(key[:0])
	now := time.Now()
	a.mu.Lock()
	until, ok := a.verified[key]
	a.mu.Unlock()
	if !ok || now.After(until) {
		opts := x509.VerifyOptions{Roots: a.Roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		for _, c := range r.TLS.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		if _, err := cert.Verify(opts); err != nil {
			return nil, false, fmt.Errorf("verifying certificate: %w", err)
		}
		a.mu.Lock()
		if a.verified == nil || len(a.verified) >= maxVerifiedCerts {
			a.verified = map[[32]byte]time.Time{}
		}
		a.verified[key] = cert.NotAfter
		a.mu.Unlock()
	}
	return &User{Name: cert.Subject.CommonName, Groups: cert.Subject.Organization}, true, nil
}

// TokenAuthenticator accepts bearer tokens from a static token file.
type TokenAuthenticator struct {
	tokens map[string]*User
}

// LoadTokenFile reads upstream's --token-auth-file CSV format:
// token,user,uid[,"group1,group2"].
func LoadTokenFile(path string) (*TokenAuthenticator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	t := &TokenAuthenticator{tokens: map[string]*User{}}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) == 0 || strings.HasPrefix(strings.TrimSpace(rec[0]), "#") {
			continue
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("%s:%d: need at least token,user,uid", path, line)
		}
		u := &User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				u.Groups = append(u.Groups, strings.TrimSpace(g))
			}
		}
		if rec[0] == "" {
			return nil, fmt.Errorf("%s:%d: empty token", path, line)
		}
		t.tokens[rec[0]] = u
	}
	return t, nil
}

// bearerToken is the token of an "Authorization: Bearer <token>" header,
// read as upstream does: the scheme in any case, the token the next
// space-separated word.
func bearerToken(r *http.Request) (string, bool) {
	parts := strings.SplitN(strings.TrimSpace(r.Header.Get("Authorization")), " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

func (t *TokenAuthenticator) Authenticate(r *http.Request) (*User, bool, error) {
	tok, ok := bearerToken(r)
	if !ok {
		return nil, false, nil
	}
	for known, u := range t.tokens {
		if subtle.ConstantTimeCompare([]byte(known), []byte(tok)) == 1 {
			return u, true, nil
		}
	}
	return nil, false, fmt.Errorf("invalid bearer token")
}

// authenticate identifies the request's user or fails with 401. A request
// without credentials is system:anonymous (in system:unauthenticated) when
// AnonymousAuth is on; invalid credentials are never anonymous.
func (s *Server) authenticate(r *http.Request) (*User, error) {
	if s.cfg.Authenticator == nil {
		return adminUser, nil
	}
	u, ok, err := s.cfg.Authenticator.Authenticate(r)
	if err == nil && !ok && s.cfg.AnonymousAuth {
		// A bearer token no authenticator accepts is invalid, not
		// absent (upstream's bearer token authenticator).
		if _, has := bearerToken(r); !has {
			return anonymousUser, nil
		}
	}
	if err != nil || !ok {
		return nil, apierrors.NewUnauthorized("Unauthorized")
	}
	c := *u
	c.Groups = withAuthenticated(u.Groups)
	return &c, nil
}
