package controllermanager

import (
	"slices"
	"strings"
	"testing"
)

func TestEnabledControllers(t *testing.T) {
	table := []Descriptor{
		{Name: "a-controller", Aliases: []string{"a"}},
		{Name: "b-controller", Aliases: []string{"b"}},
		{Name: "off-controller", Aliases: []string{"off"}, DisabledByDefault: true},
	}
	tests := []struct {
		name        string
		controllers []string
		want        []string
		wantErr     string
	}{
		{name: "star enables default ones", controllers: []string{"*"}, want: []string{"a-controller", "b-controller"}},
		{name: "star and disabled-by-default named", controllers: []string{"*", "off"}, want: []string{"a-controller", "b-controller", "off-controller"}},
		{name: "star minus one", controllers: []string{"*", "-b-controller"}, want: []string{"a-controller"}},
		{name: "alias minus", controllers: []string{"*", "-a"}, want: []string{"b-controller"}},
		{name: "only named, no star", controllers: []string{"b"}, want: []string{"b-controller"}},
		{name: "minus wins over plus", controllers: []string{"a", "-a", "a"}, want: nil},
		{name: "empty list enables nothing", controllers: []string{}, want: nil},
		{name: "minus of disabled-by-default", controllers: []string{"*", "-off"}, want: []string{"a-controller", "b-controller"}},
		{name: "unknown", controllers: []string{"*", "nope"}, wantErr: `"nope" is not in the list of known controllers`},
		{name: "unknown minus", controllers: []string{"-nope"}, wantErr: `"-nope" is not in the list of known controllers`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EnabledControllers(table, tt.controllers)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUpstreamTable(t *testing.T) {
	table := Controllers()
	seen := map[string]bool{}
	for _, d := range table {
		for _, n := range append([]string{d.Name}, d.Aliases...) {
			if seen[n] {
				t.Errorf("name %q used twice", n)
			}
			seen[n] = true
		}
		if (d.WorkersFlag == "") != (d.DefaultWorkers == 0) {
			t.Errorf("%s: flag %q with default %d", d.Name, d.WorkersFlag, d.DefaultWorkers)
		}
	}
	// Upstream's defaults (kube-controller-manager --help).
	want := map[string]struct {
		flag string
		n    int
	}{
		"deployment":            {"concurrent-deployment-syncs", 5},
		"replicaset":            {"concurrent-replicaset-syncs", 5},
		"garbagecollector":      {"concurrent-gc-syncs", 20},
		"namespace":             {"concurrent-namespace-syncs", 10},
		"serviceaccount-token":  {"concurrent-serviceaccount-token-syncs", 5},
		"daemonset":             {"concurrent-daemonset-syncs", 2},
		"replicationcontroller": {"concurrent-rc-syncs", 5},
		"endpoint":              {"concurrent-endpoint-syncs", 5},
		"endpointslice":         {"concurrent-service-endpoint-syncs", 5},
		"job":                   {"concurrent-job-syncs", 5},
		"cronjob":               {"concurrent-cron-job-syncs", 5},
		"statefulset":           {"concurrent-statefulset-syncs", 5},
	}
	for alias, w := range want {
		d, ok := lookup(table, alias)
		if !ok {
			t.Errorf("%s missing", alias)
			continue
		}
		if d.WorkersFlag != w.flag || d.DefaultWorkers != w.n {
			t.Errorf("%s: --%s=%d, want --%s=%d", alias, d.WorkersFlag, d.DefaultWorkers, w.flag, w.n)
		}
	}
	got, err := EnabledControllers(table, []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []string{"bootstrap-signer-controller", "token-cleaner-controller"} {
		if slices.Contains(got, off) {
			t.Errorf("%s enabled by *", off)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{name: "defaults", mutate: func(*Config) {}},
		{name: "zero workers", mutate: func(c *Config) { c.ConcurrentSyncs = map[string]int{"deployment-controller": 0} },
			wantErr: "--concurrent-deployment-syncs must be greater than 0"},
		{name: "renew >= lease", mutate: func(c *Config) { c.LeaderElection.RenewDeadline = c.LeaderElection.LeaseDuration },
			wantErr: "leaseDuration must be greater than renewDeadline"},
		{name: "lock type", mutate: func(c *Config) { c.LeaderElection.ResourceLock = "endpoints" },
			wantErr: `only "leases" is supported`},
		{name: "port", mutate: func(c *Config) { c.Serving.SecurePort = 70000 }, wantErr: "--secure-port 70000 must be between 0 and 65535"},
		{name: "unknown controller", mutate: func(c *Config) { c.Controllers = []string{"*", "-frob"} },
			wantErr: `"-frob" is not in the list of known controllers`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			c = c.withDefaults()
			err := c.validate()
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
