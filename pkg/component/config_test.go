package component_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		serving func(*component.ServingConfig)
		le      func(*component.LeaderElectionConfig)
		wantErr string
	}{
		{name: "defaults"},
		{name: "port too large", serving: func(c *component.ServingConfig) { c.SecurePort = 70000 },
			wantErr: "--secure-port 70000 must be between 0 and 65535, inclusive. 0 for turning off secure port"},
		{name: "negative port", serving: func(c *component.ServingConfig) { c.SecurePort = -1 }, wantErr: "--secure-port -1 must be"},
		{name: "port off", serving: func(c *component.ServingConfig) { c.SecurePort = 0 }},
		{name: "cert without key", serving: func(c *component.ServingConfig) { c.TLSCertFile = "a.crt" },
			wantErr: "--tls-cert-file and --tls-private-key-file go together"},
		{name: "renew >= lease", le: func(c *component.LeaderElectionConfig) { c.RenewDeadline = c.LeaseDuration },
			wantErr: "leaseDuration must be greater than renewDeadline"},
		{name: "retry too long", le: func(c *component.LeaderElectionConfig) { c.RetryPeriod = 9 * time.Second },
			wantErr: "renewDeadline must be greater than retryPeriod*JitterFactor"},
		{name: "durations unchecked without election", le: func(c *component.LeaderElectionConfig) {
			c.LeaderElect, c.RenewDeadline = false, c.LeaseDuration
		}},
		{name: "lock type", le: func(c *component.LeaderElectionConfig) { c.ResourceLock = "endpoints" },
			wantErr: `--leader-elect-resource-lock: only "leases" is supported, not "endpoints"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := component.DefaultServingConfig(component.SchedulerSecurePort)
			le := component.DefaultLeaderElectionConfig(component.SchedulerName)
			if tt.serving != nil {
				tt.serving(&s)
			}
			if tt.le != nil {
				tt.le(&le)
			}
			err := errors.Join(append(s.Validate(), le.Validate()...)...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	le := component.DefaultLeaderElectionConfig(component.SchedulerName)
	want := component.LeaderElectionConfig{LeaderElect: true, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
		RetryPeriod: 2 * time.Second, ResourceLock: "leases", ResourceNamespace: "kube-system", ResourceName: "kube-scheduler"}
	if le != want {
		t.Errorf("DefaultLeaderElectionConfig = %+v, want %+v", le, want)
	}
	// WithDefaults keeps what is set.
	set := component.LeaderElectionConfig{LeaseDuration: time.Minute, ResourceName: "mine"}.WithDefaults("kube-scheduler")
	if set.LeaderElect || set.LeaseDuration != time.Minute || set.ResourceName != "mine" || set.RenewDeadline != 10*time.Second {
		t.Errorf("WithDefaults = %+v", set)
	}
	s := component.ServingConfig{}.WithDefaults()
	if s.BindAddress != "0.0.0.0" || !slices.Equal(s.AuthorizationAlwaysAllowPaths, []string{"/healthz", "/readyz", "/livez"}) || s.Enabled() {
		t.Errorf("ServingConfig{}.WithDefaults() = %+v", s)
	}
	if s := (component.ServingConfig{AuthorizationAlwaysAllowPaths: []string{}}).WithDefaults(); len(s.AuthorizationAlwaysAllowPaths) != 0 {
		t.Errorf("an empty always-allow list was filled: %v", s.AuthorizationAlwaysAllowPaths)
	}
	d := component.DefaultServingConfig(component.ControllerManagerSecurePort)
	if d.SecurePort != 10257 || !d.Profiling || !d.Enabled() {
		t.Errorf("DefaultServingConfig(10257) = %+v", d)
	}
}

// TestFlags: the shared flags have upstream's names and take their
// defaults from the config they are bound to (the scheduler's differ from
// the controller manager's).
func TestFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, s component.ServingConfig, le component.LeaderElectionConfig)
	}{
		{name: "defaults", check: func(t *testing.T, s component.ServingConfig, le component.LeaderElectionConfig) {
			if s.SecurePort != 10259 || s.BindAddress != "0.0.0.0" || !s.Profiling ||
				!slices.Equal(s.AuthorizationAlwaysAllowPaths, []string{"/healthz", "/readyz", "/livez"}) {
				t.Errorf("serving %+v", s)
			}
			if le != component.DefaultLeaderElectionConfig("kube-scheduler") {
				t.Errorf("leader election %+v", le)
			}
		}},
		{name: "set", args: []string{"--secure-port=0", "--bind-address=127.0.0.1", "--tls-cert-file=c", "--tls-private-key-file=k", "--cert-dir=d",
			"--authentication-kubeconfig=an", "--authorization-kubeconfig=az", "--client-ca-file=ca", "--authorization-always-allow-paths=/a,/b/*",
			"--profiling=false", "--leader-elect=false", "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
			"--leader-elect-retry-period=500ms", "--leader-elect-resource-lock=leases", "--leader-elect-resource-namespace=ns",
			"--leader-elect-resource-name=n"},
			check: func(t *testing.T, s component.ServingConfig, le component.LeaderElectionConfig) {
				want := component.ServingConfig{BindAddress: "127.0.0.1", TLSCertFile: "c", TLSKeyFile: "k", AuthenticationKubeconfig: "an",
					AuthorizationKubeconfig: "az", ClientCAFile: "ca", AuthorizationAlwaysAllowPaths: []string{"/a", "/b/*"}}
				if s.SecurePort != 0 || s.BindAddress != want.BindAddress || s.TLSCertFile != "c" || s.TLSKeyFile != "k" || s.CertDirectory != "d" ||
					s.AuthenticationKubeconfig != "an" || s.AuthorizationKubeconfig != "az" || s.ClientCAFile != "ca" ||
					!slices.Equal(s.AuthorizationAlwaysAllowPaths, want.AuthorizationAlwaysAllowPaths) || s.Profiling {
					t.Errorf("serving %+v", s)
				}
				wantLE := component.LeaderElectionConfig{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second,
					RetryPeriod: 500 * time.Millisecond, ResourceLock: "leases", ResourceNamespace: "ns", ResourceName: "n"}
				if le != wantLE {
					t.Errorf("leader election %+v, want %+v", le, wantLE)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := component.DefaultServingConfig(component.SchedulerSecurePort)
			le := component.DefaultLeaderElectionConfig(component.SchedulerName)
			fs := pflag.NewFlagSet("scheduler", pflag.ContinueOnError)
			component.AddServingFlags(fs, &s)
			component.AddLeaderElectionFlags(fs, &le)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			tt.check(t, s, le)
		})
	}
	// The help shows the bound config's defaults.
	s := component.DefaultServingConfig(component.SchedulerSecurePort)
	le := component.DefaultLeaderElectionConfig(component.SchedulerName)
	fs := pflag.NewFlagSet("scheduler", pflag.ContinueOnError)
	component.AddServingFlags(fs, &s)
	component.AddLeaderElectionFlags(fs, &le)
	for name, want := range map[string]string{"secure-port": "10259", "leader-elect-resource-name": "kube-scheduler",
		"leader-elect": "true", "authorization-always-allow-paths": "[/healthz,/readyz,/livez]", "profiling": "true"} {
		if f := fs.Lookup(name); f == nil || f.DefValue != want {
			t.Errorf("--%s default %v, want %s", name, f, want)
		}
	}
}

func TestLoadClientConfig(t *testing.T) {
	explicit := &client.Config{Host: "https://a:6443"}
	got, err := component.LoadClientConfig(explicit, "ignored")
	if err != nil || got == explicit || got.Host != explicit.Host {
		t.Fatalf("explicit: %+v %v, want a copy", got, err)
	}
	env := testenv.StartT(t)
	got, err = component.LoadClientConfig(nil, env.KubeconfigPath)
	if err != nil || got.Host != env.URL {
		t.Fatalf("kubeconfig: %+v %v, want host %s", got, err, env.URL)
	}
	if _, err := component.LoadClientConfig(nil, filepath.Join(t.TempDir(), "nope")); err == nil || !strings.HasPrefix(err.Error(), "kubeconfig: ") {
		t.Fatalf("missing kubeconfig: err = %v", err)
	}
}

func TestNewClientConfig(t *testing.T) {
	conn := component.ClientConnection{QPS: 50, Burst: 100, ContentType: client.ContentTypeProtobuf}
	got, err := conn.NewClientConfig(&client.Config{Host: "https://a:6443"}, component.UserAgent(component.SchedulerName), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Host != "https://a:6443" || got.QPS != 50 || got.Burst != 100 || got.ContentType != client.ContentTypeProtobuf ||
		got.UserAgent != "kube-scheduler/v0.0.0 (skiff)" {
		t.Errorf("NewClientConfig = %+v", got)
	}
	got, err = conn.NewClientConfig(&client.Config{Host: "https://a:6443", UserAgent: "mine"}, "theirs", nil, nil)
	if err != nil || got.UserAgent != "mine" {
		t.Errorf("a set User-Agent was replaced: %+v %v", got, err)
	}
}
