package apiserver

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Bootstrap tokens (upstream's --enable-bootstrap-token-auth): a bearer
// token "<id>.<secret>" whose Secret kube-system/bootstrap-token-<id> (type
// bootstrap.kubernetes.io/token) holds the same token-id and token-secret,
// usage-bootstrap-authentication "true" and no passed expiration
// authenticates as system:bootstrap:<id> in system:bootstrappers plus the
// Secret's auth-extra-groups. A token of another shape is left to the
// other authenticators; a token whose Secret does not match is not
// authenticated (no error: upstream logs why and answers "not mine").
// `kubeadm join` and a kubelet's TLS bootstrap use them to create their
// certificate signing request.

// Upstream's names (k8s.io/cluster-bootstrap/token/api).
const (
	BootstrapTokenSecretPrefix  = "bootstrap-token-"
	SecretTypeBootstrapToken    = corev1.SecretType("bootstrap.kubernetes.io/token")
	BootstrapTokenIDKey         = "token-id"
	BootstrapTokenSecretKey     = "token-secret"
	BootstrapTokenExpirationKey = "expiration"
	BootstrapTokenExtraGroups   = "auth-extra-groups"
	BootstrapTokenUsageAuthn    = "usage-bootstrap-authentication"
	BootstrapUserPrefix         = "system:bootstrap:"
	BootstrapDefaultGroup       = "system:bootstrappers"
)

var (
	bootstrapTokenRe = regexp.MustCompile(`\A([a-z0-9]{6})\.([a-z0-9]{16})\z`)
	bootstrapGroupRe = regexp.MustCompile(`\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z`)
)

// bootstrapTokenAuthenticator reads the token Secrets from the server's
// own storage (the watch cache, as upstream reads them from an informer).
type bootstrapTokenAuthenticator struct {
	s *Server
}

func (a *bootstrapTokenAuthenticator) Authenticate(r *http.Request) (*User, bool, error) {
	tok, ok := bearerToken(r)
	if !ok {
		return nil, false, nil
	}
	return authenticateBootstrapToken(tok, func(name string) (*corev1.Secret, error) {
		obj, err := a.s.Get(r.Context(), schema.GroupResource{Resource: "secrets"}, "kube-system", name)
		if err != nil {
			return nil, err
		}
		sec, ok := obj.(*corev1.Secret)
		if !ok {
			return nil, fmt.Errorf("unexpected %T for a secret", obj)
		}
		return sec, nil
	}, a.s.cfg.Clock.Now(), a.s.cfg.Logger.Debug)
}

// authenticateBootstrapToken is the bootstrap token check of token against
// the Secret get returns (by name in kube-system) at now; logf says why a
// well-formed token is refused.
func authenticateBootstrapToken(token string, get func(name string) (*corev1.Secret, error), now time.Time, logf func(msg string, args ...any)) (*User, bool, error) {
	m := bootstrapTokenRe.FindStringSubmatch(token)
	if m == nil {
		return nil, false, nil // not a bootstrap token
	}
	id, secret := m[1], m[2]
	name := BootstrapTokenSecretPrefix + id
	sec, err := get(name)
	if apierrors.IsNotFound(err) {
		logf("no secret to match bootstrap bearer token", "secret", name)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	refuse := func(why string) (*User, bool, error) {
		logf("bootstrap token refused", "secret", "kube-system/"+name, "reason", why)
		return nil, false, nil
	}
	if sec.DeletionTimestamp != nil {
		return refuse("is deleted and awaiting removal")
	}
	if sec.Type != SecretTypeBootstrapToken || sec.Data == nil {
		return refuse("has invalid type, expected " + string(SecretTypeBootstrapToken))
	}
	if subtle.ConstantTimeCompare(sec.Data[BootstrapTokenSecretKey], []byte(secret)) != 1 {
		return refuse("has invalid value for key " + BootstrapTokenSecretKey)
	}
	if string(sec.Data[BootstrapTokenIDKey]) != id {
		return refuse("has invalid value for key " + BootstrapTokenIDKey)
	}
	if bootstrapTokenExpired(sec, now) {
		return refuse("has expired")
	}
	if string(sec.Data[BootstrapTokenUsageAuthn]) != "true" {
		return refuse("not marked " + BootstrapTokenUsageAuthn + "=true")
	}
	groups, err := bootstrapTokenGroups(sec)
	if err != nil {
		return refuse(err.Error())
	}
	return &User{Name: BootstrapUserPrefix + id, Groups: groups}, true, nil
}

// bootstrapTokenExpired says whether the Secret's expiration (RFC 3339)
// has passed; an unparseable one counts as passed, none as never.
func bootstrapTokenExpired(sec *corev1.Secret, now time.Time) bool {
	exp := string(sec.Data[BootstrapTokenExpirationKey])
	if exp == "" {
		return false
	}
	t, err := time.Parse(time.RFC3339, exp)
	return err != nil || !t.After(now)
}

// bootstrapTokenGroups is system:bootstrappers and the Secret's
// auth-extra-groups, deduplicated and sorted; each extra group must be
// system:bootstrappers:<suffix>.
func bootstrapTokenGroups(sec *corev1.Secret) ([]string, error) {
	groups := []string{BootstrapDefaultGroup}
	if extra := string(sec.Data[BootstrapTokenExtraGroups]); extra != "" {
		for _, g := range strings.Split(extra, ",") {
			if !bootstrapGroupRe.MatchString(g) {
				return nil, fmt.Errorf("has invalid value for key %s: %q does not match %s", BootstrapTokenExtraGroups, g, bootstrapGroupRe)
			}
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), nil
}
