package bootstraptoken

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
)

// Upstream's names (k8s.io/cluster-bootstrap/token/api and kubeadm).
const (
	// Namespace holds the token Secrets.
	Namespace    = "kube-system"
	SecretPrefix = "bootstrap-token-"
	SecretType   = corev1.SecretType("bootstrap.kubernetes.io/token")

	IDKey          = "token-id"
	SecretKey      = "token-secret"
	ExpirationKey  = "expiration"
	DescriptionKey = "description"
	ExtraGroupsKey = "auth-extra-groups"
	UsagePrefix    = "usage-bootstrap-"

	// DefaultNodeGroup is kubeadm's extra group of node join tokens,
	// which kubeadm's RBAC bindings let create and auto-approve node
	// client certificate signing requests.
	DefaultNodeGroup = "system:bootstrappers:kubeadm:default-node-token"
	// DefaultTTL is kubeadm's token lifetime.
	DefaultTTL = 24 * time.Hour
)

// DefaultUsages are kubeadm's: the token authenticates and signs the
// cluster-info ConfigMap.
var DefaultUsages = []string{"signing", "authentication"}

// KnownUsages are the usages upstream defines.
var KnownUsages = []string{"signing", "authentication"}

var (
	tokenRe = regexp.MustCompile(`\A([a-z0-9]{6})\.([a-z0-9]{16})\z`)
	groupRe = regexp.MustCompile(`\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z`)
)

const tokenChars = "0123456789abcdefghijklmnopqrstuvwxyz"

// Generate returns a random token "<id>.<secret>".
func Generate() (string, error) {
	b := make([]byte, 0, 23)
	for i := 0; i < 22; i++ {
		if i == 6 {
			b = append(b, '.')
		}
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(tokenChars))))
		if err != nil {
			return "", err
		}
		b = append(b, tokenChars[n.Int64()])
	}
	return string(b), nil
}

// Parse splits a token into its id and secret.
func Parse(token string) (id, secret string, err error) {
	m := tokenRe.FindStringSubmatch(token)
	if m == nil {
		return "", "", fmt.Errorf("the bootstrap token %q was not of the form %q", token, `\A([a-z0-9]{6})\.([a-z0-9]{16})\z`)
	}
	return m[1], m[2], nil
}

// Options describe a token to create.
type Options struct {
	// Token is "<id>.<secret>"; empty: generated.
	Token string
	// TTL is how long the token lives; 0: forever.
	TTL         time.Duration
	Description string
	// Usages are "signing" and/or "authentication".
	Usages []string
	// Groups are the extra groups (system:bootstrappers:*).
	Groups []string
}

// Secret is the token's Secret at now. It checks the options as kubeadm
// does.
func Secret(o Options, now time.Time) (*corev1.Secret, error) {
	id, secret, err := Parse(o.Token)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{IDKey: []byte(id), SecretKey: []byte(secret)}
	if o.Description != "" {
		data[DescriptionKey] = []byte(o.Description)
	}
	if o.TTL > 0 {
		data[ExpirationKey] = []byte(now.Add(o.TTL).UTC().Format(time.RFC3339))
	}
	for _, u := range o.Usages {
		known := false
		for _, k := range KnownUsages {
			known = known || u == k
		}
		if !known {
			return nil, fmt.Errorf("unknown usage %q (known: %s)", u, strings.Join(KnownUsages, ","))
		}
		data[UsagePrefix+u] = []byte("true")
	}
	for _, g := range o.Groups {
		if !groupRe.MatchString(g) {
			return nil, fmt.Errorf("group %q must match %s", g, groupRe)
		}
	}
	if len(o.Groups) > 0 {
		if data[UsagePrefix+"authentication"] == nil {
			return nil, fmt.Errorf("token groups need the authentication usage")
		}
		data[ExtraGroupsKey] = []byte(strings.Join(o.Groups, ","))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretPrefix + id, Namespace: Namespace},
		Type:       SecretType,
		Data:       data,
	}, nil
}

// Create stores the token of o (generated when o.Token is empty) and
// returns it.
func Create(ctx context.Context, c *client.Client, o Options, now time.Time) (string, error) {
	if o.Token == "" {
		t, err := Generate()
		if err != nil {
			return "", err
		}
		o.Token = t
	}
	sec, err := Secret(o, now)
	if err != nil {
		return "", err
	}
	_, err = client.For[*corev1.Secret, *corev1.SecretList](c).Namespace(Namespace).Create(ctx, sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("a token with id %q already exists", sec.Data[IDKey])
	}
	if err != nil {
		return "", err
	}
	return o.Token, nil
}

// Kubeconfig is a bootstrap kubeconfig: the cluster (server and CA) of
// from's current context with the token as its user, as kubeadm join
// writes /etc/kubernetes/bootstrap-kubelet.conf. A CA file (relative
// paths against dir) is embedded, so that the result stands alone.
func Kubeconfig(from *kubeconfig.Config, dir, token string) (*kubeconfig.Config, error) {
	var cluster *kubeconfig.Cluster
	for _, ctx := range from.Contexts {
		if ctx.Name != from.CurrentContext {
			continue
		}
		for i := range from.Clusters {
			if from.Clusters[i].Name == ctx.Context.Cluster {
				cluster = &from.Clusters[i].Cluster
			}
		}
	}
	if cluster == nil {
		return nil, fmt.Errorf("kubeconfig: no cluster for the current context %q", from.CurrentContext)
	}
	c := *cluster
	if len(c.CertificateAuthorityData) == 0 && c.CertificateAuthority != "" {
		path := c.CertificateAuthority
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: certificate authority: %w", err)
		}
		c.CertificateAuthorityData, c.CertificateAuthority = data, ""
	}
	if len(c.CertificateAuthorityData) == 0 && c.CertificateAuthority == "" && !c.InsecureSkipTLSVerify {
		return nil, fmt.Errorf("kubeconfig: the cluster has no certificate authority")
	}
	return &kubeconfig.Config{
		APIVersion: "v1", Kind: "Config",
		Clusters:       []kubeconfig.NamedCluster{{Name: "skiff", Cluster: c}},
		Users:          []kubeconfig.NamedUser{{Name: "tls-bootstrap-token-user", User: kubeconfig.AuthInfo{Token: token}}},
		Contexts:       []kubeconfig.NamedContext{{Name: "tls-bootstrap-token-user@skiff", Context: kubeconfig.Context{Cluster: "skiff", User: "tls-bootstrap-token-user"}}},
		CurrentContext: "tls-bootstrap-token-user@skiff",
	}, nil
}
