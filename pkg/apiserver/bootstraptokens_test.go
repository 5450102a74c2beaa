package apiserver_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// whoAmI sends a SelfSubjectReview with the bearer token and returns the
// status code and, on success, the user.
func whoAmI(t *testing.T, c *client, token string) (int, authenticationv1.UserInfo) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.env.URL+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.anonymous().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r authenticationv1.SelfSubjectReview
	if resp.StatusCode == http.StatusCreated {
		if err := jsonUnmarshal(body, &r); err != nil {
			t.Fatalf("decoding: %v: %s", err, body)
		}
	}
	return resp.StatusCode, r.Status.UserInfo
}

// --enable-bootstrap-token-auth: a bootstrap token authenticates through
// its Secret in kube-system (read from the server's own storage), stops
// working once the Secret is gone, and is not accepted with the flag off.
func TestBootstrapTokenAuth(t *testing.T) {
	secret := func(id, sec string) *corev1.Secret {
		return &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
			Type:       "bootstrap.kubernetes.io/token",
			StringData: map[string]string{"token-id": id, "token-secret": sec,
				"usage-bootstrap-authentication": "true",
				"auth-extra-groups":              "system:bootstrappers:kubeadm:default-node-token",
				"expiration":                     time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
		}
	}
	t.Run("enabled", func(t *testing.T) {
		c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) { cfg.EnableBootstrapTokenAuth = true }})
		c.call(http.MethodPost, "/api/v1/namespaces/kube-system/secrets", secret("abc123", "0123456789abcdef"), http.StatusCreated, nil)
		// The watch cache may not have the Secret yet: the authenticator
		// falls back to storage on a miss.
		code, u := whoAmI(t, c, "abc123.0123456789abcdef")
		if code != http.StatusCreated {
			t.Fatalf("status %d, want 201", code)
		}
		want := []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"}
		if u.Username != "system:bootstrap:abc123" || !slices.Equal(u.Groups, want) {
			t.Errorf("user %s %v, want system:bootstrap:abc123 %v", u.Username, u.Groups, want)
		}
		if code, _ := whoAmI(t, c, "abc123.0123456789abcdee"); code != http.StatusUnauthorized {
			t.Errorf("a wrong secret: status %d, want 401", code)
		}
		c.call(http.MethodDelete, "/api/v1/namespaces/kube-system/secrets/bootstrap-token-abc123", nil, http.StatusOK, nil)
		eventually(t, "the token of a deleted secret refused", func() bool {
			code, _ := whoAmI(t, c, "abc123.0123456789abcdef")
			return code == http.StatusUnauthorized
		})
	})
	t.Run("disabled", func(t *testing.T) {
		c := start(t)
		c.call(http.MethodPost, "/api/v1/namespaces/kube-system/secrets", secret("abc123", "0123456789abcdef"), http.StatusCreated, nil)
		if code, _ := whoAmI(t, c, "abc123.0123456789abcdef"); code != http.StatusUnauthorized {
			t.Errorf("status %d, want 401 without --enable-bootstrap-token-auth", code)
		}
	})
}
