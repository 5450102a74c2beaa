package apiserver_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// writeTokenFile writes a --token-auth-file and returns its path.
func writeTokenFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// --token-auth-file (token,user,uid[,"group1,group2"]): a listed bearer
// token authenticates as its user, in its groups and system:authenticated;
// an unknown one is refused with 401 and a Status.
func TestTokenAuthFile(t *testing.T) {
	tokens, err := apiserver.LoadTokenFile(writeTokenFile(t,
		"s3cret,alice,1001,\"system:masters,dev\"\n"+
			"plain,bob,1002\n"))
	if err != nil {
		t.Fatalf("loading the token file: %v", err)
	}
	c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) {
		// The admin certificate keeps working next to the tokens.
		cfg.Authenticator = apiserver.UnionAuthenticator{cfg.Authenticator, tokens}
	}})
	anon := c.anonymous()
	review := `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`

	tests := []struct {
		name       string
		header     string // Authorization
		wantCode   int
		wantUser   authenticationv1.UserInfo
		wantStatus string // message of the 401 Status
	}{
		{
			name: "token with groups", header: "Bearer s3cret", wantCode: http.StatusCreated,
			wantUser: authenticationv1.UserInfo{Username: "alice", UID: "1001", Groups: []string{"system:masters", "dev", "system:authenticated"}},
		},
		{
			name: "token without groups", header: "Bearer plain", wantCode: http.StatusCreated,
			wantUser: authenticationv1.UserInfo{Username: "bob", UID: "1002", Groups: []string{"system:authenticated"}},
		},
		{
			name: "scheme in another case", header: "bearer s3cret", wantCode: http.StatusCreated,
			wantUser: authenticationv1.UserInfo{Username: "alice", UID: "1001", Groups: []string{"system:masters", "dev", "system:authenticated"}},
		},
		{name: "another scheme", header: "Basic s3cret", wantCode: http.StatusUnauthorized, wantStatus: "Unauthorized"},
		{name: "unknown token", header: "Bearer wrong", wantCode: http.StatusUnauthorized, wantStatus: "Unauthorized"},
		{name: "a token's prefix", header: "Bearer s3cre", wantCode: http.StatusUnauthorized, wantStatus: "Unauthorized"},
		// skiff has no anonymous authentication (as --anonymous-auth=false).
		{name: "no credentials", wantCode: http.StatusUnauthorized, wantStatus: "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, c.env.URL+"/apis/authentication.k8s.io/v1/selfsubjectreviews", strings.NewReader(review))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := anon.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCode == http.StatusUnauthorized {
				expectStatus(t, resp.StatusCode, body, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, tt.wantStatus)
				return
			}
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantCode, body)
			}
			var r authenticationv1.SelfSubjectReview
			if err := jsonUnmarshal(body, &r); err != nil {
				t.Fatalf("decoding: %v: %s", err, body)
			}
			if r.Kind != "SelfSubjectReview" || r.APIVersion != "authentication.k8s.io/v1" {
				t.Errorf("answer is %s %s", r.APIVersion, r.Kind)
			}
			got := r.Status.UserInfo
			if got.Username != tt.wantUser.Username || got.UID != tt.wantUser.UID || !slices.Equal(got.Groups, tt.wantUser.Groups) {
				t.Errorf("userInfo %+v, want %+v", got, tt.wantUser)
			}
		})
	}

	t.Run("a token reaches resources", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, c.env.URL+"/api/v1/namespaces/default", nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET with a token: %d %s", resp.StatusCode, body)
		}
	})
}

// A token file that cannot be used is an error naming the file, so the
// server refuses to start rather than run without the tokens.
func TestTokenAuthFileErrors(t *testing.T) {
	tests := []struct {
		name    string
		content *string // nil: the file does not exist
		want    string  // in the error besides the path
	}{
		{name: "missing file", want: "no such file"},
		{name: "too few columns", content: ptrTo("s3cret,alice,1001\nshort,bob\n"), want: "token,user,uid"},
		{name: "broken quoting", content: ptrTo("s3cret,alice,1001,\"dev\n"), want: "quote"},
		{name: "stray quote", content: ptrTo("s3\"cret,alice,1001\n"), want: "bare \""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "absent.csv")
			if tt.content != nil {
				path = writeTokenFile(t, *tt.content)
			}
			_, err := apiserver.LoadTokenFile(path)
			if err == nil {
				t.Fatalf("loaded a bad token file")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to name %s and say %q", err, path, tt.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
