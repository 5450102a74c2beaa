package kubeconfig

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// Config is a kubeconfig file.
type Config struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	Clusters       []NamedCluster `json:"clusters"`
	Users          []NamedUser    `json:"users"`
	Contexts       []NamedContext `json:"contexts"`
	CurrentContext string         `json:"current-context"`
	Preferences    struct{}       `json:"preferences"`
}

// NamedCluster is a cluster entry.
type NamedCluster struct {
	Name    string  `json:"name"`
	Cluster Cluster `json:"cluster"`
}

// Cluster is where a cluster is and how to trust it.
type Cluster struct {
	Server                   string `json:"server"`
	CertificateAuthority     string `json:"certificate-authority,omitempty"`
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
	TLSServerName            string `json:"tls-server-name,omitempty"`
}

// NamedUser is a user entry.
type NamedUser struct {
	Name string   `json:"name"`
	User AuthInfo `json:"user"`
}

// AuthInfo is how a user authenticates.
type AuthInfo struct {
	ClientCertificate     string `json:"client-certificate,omitempty"`
	ClientCertificateData []byte `json:"client-certificate-data,omitempty"`
	ClientKey             string `json:"client-key,omitempty"`
	ClientKeyData         []byte `json:"client-key-data,omitempty"`
	Token                 string `json:"token,omitempty"`
	TokenFile             string `json:"tokenFile,omitempty"`
}

// NamedContext is a context entry.
type NamedContext struct {
	Name    string  `json:"name"`
	Context Context `json:"context"`
}

// Context binds a cluster, a user and a default namespace.
type Context struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace,omitempty"`
}

// New returns a single-cluster, single-user kubeconfig.
func New(name, server string, caPEM, certPEM, keyPEM []byte) *Config {
	return &Config{
		APIVersion: "v1", Kind: "Config",
		Clusters:       []NamedCluster{{Name: name, Cluster: Cluster{Server: server, CertificateAuthorityData: caPEM}}},
		Users:          []NamedUser{{Name: name + "-admin", User: AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}}},
		Contexts:       []NamedContext{{Name: name, Context: Context{Cluster: name, User: name + "-admin"}}},
		CurrentContext: name,
	}
}

// Write stores c at path (0600, parent directories created).
func Write(path string, c *Config) error {
	data, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Load reads a kubeconfig file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := yaml.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
