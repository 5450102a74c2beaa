package apiserver

import (
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The bootstrap token rules, as upstream's token authenticator's tests
// (plugin/pkg/auth/authenticator/token/bootstrap).
func TestAuthenticateBootstrapToken(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const id, secret = "abc123", "0123456789abcdef"
	token := id + "." + secret
	valid := func(mut func(s *corev1.Secret)) *corev1.Secret {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
			Type:       SecretTypeBootstrapToken,
			Data: map[string][]byte{
				"token-id": []byte(id), "token-secret": []byte(secret),
				"usage-bootstrap-authentication": []byte("true"),
			},
		}
		if mut != nil {
			mut(s)
		}
		return s
	}
	deleted := metav1.NewTime(now)
	tests := []struct {
		name       string
		token      string
		secret     *corev1.Secret // nil: not found
		getErr     error
		wantUser   string
		wantGroups []string
		wantErr    bool
	}{
		{name: "valid", token: token, secret: valid(nil), wantUser: "system:bootstrap:abc123", wantGroups: []string{"system:bootstrappers"}},
		{name: "extra groups sorted and deduplicated", token: token,
			secret: valid(func(s *corev1.Secret) {
				s.Data["auth-extra-groups"] = []byte("system:bootstrappers:kubeadm:default-node-token,system:bootstrappers:a,system:bootstrappers:a")
			}),
			wantUser: "system:bootstrap:abc123", wantGroups: []string{"system:bootstrappers", "system:bootstrappers:a", "system:bootstrappers:kubeadm:default-node-token"}},
		{name: "expiration in the future", token: token,
			secret:   valid(func(s *corev1.Secret) { s.Data["expiration"] = []byte(now.Add(time.Minute).Format(time.RFC3339)) }),
			wantUser: "system:bootstrap:abc123", wantGroups: []string{"system:bootstrappers"}},
		{name: "expired", token: token,
			secret: valid(func(s *corev1.Secret) { s.Data["expiration"] = []byte(now.Add(-time.Second).Format(time.RFC3339)) })},
		{name: "expiring now", token: token,
			secret: valid(func(s *corev1.Secret) { s.Data["expiration"] = []byte(now.Format(time.RFC3339)) })},
		{name: "unparseable expiration counts as expired", token: token,
			secret: valid(func(s *corev1.Secret) { s.Data["expiration"] = []byte("tomorrow") })},
		{name: "wrong secret", token: id + ".fedcba9876543210", secret: valid(nil)},
		{name: "token-id differs", token: token, secret: valid(func(s *corev1.Secret) { s.Data["token-id"] = []byte("zzz999") })},
		{name: "not for authentication", token: token, secret: valid(func(s *corev1.Secret) { s.Data["usage-bootstrap-authentication"] = []byte("false") })},
		{name: "usage missing", token: token, secret: valid(func(s *corev1.Secret) { delete(s.Data, "usage-bootstrap-authentication") })},
		{name: "wrong type", token: token, secret: valid(func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque })},
		{name: "being deleted", token: token, secret: valid(func(s *corev1.Secret) { s.DeletionTimestamp = &deleted })},
		{name: "invalid extra group", token: token, secret: valid(func(s *corev1.Secret) { s.Data["auth-extra-groups"] = []byte("system:masters") })},
		{name: "extra group with a space", token: token,
			secret: valid(func(s *corev1.Secret) {
				s.Data["auth-extra-groups"] = []byte("system:bootstrappers:a, system:bootstrappers:b")
			})},
		{name: "no secret", token: token},
		{name: "storage error", token: token, getErr: errors.New("boom"), wantErr: true},
		{name: "not a bootstrap token: upper case", token: "ABC123." + secret, secret: valid(nil)},
		{name: "not a bootstrap token: short secret", token: id + ".0123456789abcde", secret: valid(nil)},
		{name: "not a bootstrap token: a JWT", token: "a.b.c", secret: valid(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked string
			get := func(name string) (*corev1.Secret, error) {
				asked = name
				if tt.getErr != nil {
					return nil, tt.getErr
				}
				if tt.secret == nil {
					return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
				}
				return tt.secret, nil
			}
			u, ok, err := authenticateBootstrapToken(tt.token, get, now, func(string, ...any) {})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if asked != "" && asked != "bootstrap-token-"+id {
				t.Errorf("looked up secret %q", asked)
			}
			if tt.wantUser == "" {
				if ok || u != nil {
					t.Fatalf("authenticated as %+v, want not authenticated", u)
				}
				return
			}
			if !ok || u == nil {
				t.Fatalf("not authenticated, want %s", tt.wantUser)
			}
			if u.Name != tt.wantUser || !slices.Equal(u.Groups, tt.wantGroups) {
				t.Errorf("user %s %v, want %s %v", u.Name, u.Groups, tt.wantUser, tt.wantGroups)
			}
		})
	}
}
