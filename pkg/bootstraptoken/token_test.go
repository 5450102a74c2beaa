package bootstraptoken_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/bootstraptoken"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func TestGenerate(t *testing.T) {
	re := regexp.MustCompile(`\A[a-z0-9]{6}\.[a-z0-9]{16}\z`)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		tok, err := bootstraptoken.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if !re.MatchString(tok) {
			t.Fatalf("token %q is not <id>.<secret>", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q generated twice", tok)
		}
		seen[tok] = true
		if _, _, err := bootstraptoken.Parse(tok); err != nil {
			t.Fatalf("Parse(%q): %v", tok, err)
		}
	}
}

func TestSecret(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	tests := []struct {
		name    string
		opts    bootstraptoken.Options
		want    map[string]string
		wantErr string
	}{
		{
			name: "kubeadm's defaults",
			opts: bootstraptoken.Options{Token: "abcdef.0123456789abcdef", TTL: 24 * time.Hour, Usages: bootstraptoken.DefaultUsages,
				Groups: []string{bootstraptoken.DefaultNodeGroup}},
			want: map[string]string{"token-id": "abcdef", "token-secret": "0123456789abcdef", "expiration": "2026-01-03T02:04:05Z",
				"usage-bootstrap-signing": "true", "usage-bootstrap-authentication": "true",
				"auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token"},
		},
		{
			name: "no expiration, description, two groups",
			opts: bootstraptoken.Options{Token: "abcdef.0123456789abcdef", Description: "for n2", Usages: []string{"authentication"},
				Groups: []string{"system:bootstrappers:a", "system:bootstrappers:b"}},
			want: map[string]string{"token-id": "abcdef", "token-secret": "0123456789abcdef", "description": "for n2",
				"usage-bootstrap-authentication": "true", "auth-extra-groups": "system:bootstrappers:a,system:bootstrappers:b"},
		},
		{name: "malformed token", opts: bootstraptoken.Options{Token: "abcdef.0123"}, wantErr: "was not of the form"},
		{name: "upper case token", opts: bootstraptoken.Options{Token: "ABCDEF.0123456789abcdef"}, wantErr: "was not of the form"},
		{name: "unknown usage", opts: bootstraptoken.Options{Token: "abcdef.0123456789abcdef", Usages: []string{"everything"}}, wantErr: `unknown usage "everything"`},
		{name: "invalid group", opts: bootstraptoken.Options{Token: "abcdef.0123456789abcdef", Usages: []string{"authentication"}, Groups: []string{"system:masters"}},
			wantErr: `group "system:masters" must match`},
		{name: "groups without authentication", opts: bootstraptoken.Options{Token: "abcdef.0123456789abcdef", Usages: []string{"signing"}, Groups: []string{"system:bootstrappers:a"}},
			wantErr: "need the authentication usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := bootstraptoken.Secret(tt.opts, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != "bootstrap-token-abcdef" || s.Namespace != "kube-system" || s.Type != "bootstrap.kubernetes.io/token" {
				t.Errorf("secret %s/%s type %s", s.Namespace, s.Name, s.Type)
			}
			got := map[string]string{}
			for k, v := range s.Data {
				got[k] = string(v)
			}
			if len(got) != len(tt.want) {
				t.Errorf("data %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("data[%s] = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// Create stores the Secret (a generated token when none is given) and
// refuses a token id that exists; Kubeconfig carries the cluster and the
// token.
func TestCreateAndKubeconfig(t *testing.T) {
	env := testenv.StartT(t)
	cc, err := client.LoadKubeconfig(env.KubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	tok, err := bootstraptoken.Create(ctx, c, bootstraptoken.Options{TTL: time.Hour, Usages: bootstraptoken.DefaultUsages, Groups: []string{bootstraptoken.DefaultNodeGroup}}, now)
	if err != nil {
		t.Fatal(err)
	}
	id, secret, err := bootstraptoken.Parse(tok)
	if err != nil {
		t.Fatal(err)
	}
	s, err := client.For[*corev1.Secret, *corev1.SecretList](c).Namespace("kube-system").Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["token-secret"]) != secret || s.Type != "bootstrap.kubernetes.io/token" {
		t.Errorf("stored secret %s %v", s.Type, s.Data)
	}
	if _, err := bootstraptoken.Create(ctx, c, bootstraptoken.Options{Token: tok}, now); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("creating the token again: %v, want already exists", err)
	}

	from, err := kubeconfig.Load(env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := bootstraptoken.Kubeconfig(from, filepath.Dir(env.KubeconfigPath), tok)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bootstrap.kubeconfig")
	if err := kubeconfig.Write(path, kc); err != nil {
		t.Fatal(err)
	}
	bc, err := client.LoadKubeconfig(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if bc.Host != cc.Host || bc.BearerToken != tok || len(bc.CAData) == 0 || len(bc.CertData) != 0 {
		t.Errorf("bootstrap kubeconfig: host %s token %q CA %d bytes cert %d bytes", bc.Host, bc.BearerToken, len(bc.CAData), len(bc.CertData))
	}
	// A CA file is embedded.
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, env.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	from.Clusters[0].Cluster.CertificateAuthorityData, from.Clusters[0].Cluster.CertificateAuthority = nil, filepath.Base(caFile)
	kc, err = bootstraptoken.Kubeconfig(from, filepath.Dir(caFile), tok)
	if err != nil {
		t.Fatal(err)
	}
	if string(kc.Clusters[0].Cluster.CertificateAuthorityData) != string(env.CAData) || kc.Clusters[0].Cluster.CertificateAuthority != "" {
		t.Errorf("CA file not embedded: %+v", kc.Clusters[0].Cluster)
	}
}
