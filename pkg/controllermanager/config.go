package controllermanager

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/component"
)

// Config configures a Manager. The zero value runs every default-enabled
// controller without leader election and without serving (what an
// in-process test wants); DefaultConfig has upstream's defaults.
type Config struct {
	// ClientConfig says how to reach the API server; when nil, Kubeconfig
	// is loaded, or without it the pod's service account inside a pod, else
	// $KUBECONFIG or ~/.kube/config.
	ClientConfig *client.Config
	Kubeconfig   string

	// Controllers is --controllers: "*", "foo", "-foo" (nil: ["*"]).
	Controllers []string
	// ConcurrentSyncs sets the worker count of controllers by canonical
	// name (the --concurrent-*-syncs flags); a controller not listed gets
	// its Descriptor's DefaultWorkers.
	ConcurrentSyncs map[string]int

	// KubeAPIQPS, KubeAPIBurst and KubeAPIContentType are upstream's
	// --kube-api-qps (20), --kube-api-burst (30) and
	// --kube-api-content-type (protobuf). A negative QPS turns
	// client-side throttling off.
	KubeAPIQPS         float32
	KubeAPIBurst       int
	KubeAPIContentType string

	// UseServiceAccountCredentials is upstream's
	// --use-service-account-credentials: each controller runs as its own
	// service account in kube-system (identities.go) instead of with the
	// manager's credentials.
	UseServiceAccountCredentials bool
	// LeaderElection is the --leader-elect* flags (zero fields:
	// upstream's defaults on kube-system/kube-controller-manager).
	LeaderElection component.LeaderElectionConfig

	// Serving is the secure serving of /healthz, /metrics and
	// /debug/pprof/ and its delegated authentication and authorization
	// (upstream's 0.0.0.0:10257); SecurePort 0 (without a Listener) turns
	// serving off.
	Serving component.ServingConfig

	// MinResyncPeriod is upstream's --min-resync-period (12h): informers
	// resync every MinResyncPeriod*[1,2).
	MinResyncPeriod time.Duration

	// RootCAFile is upstream's --root-ca-file: the CA the
	// root-ca-certificate-publisher controller publishes as
	// kube-root-ca.crt. Without it, the CA the client trusts (its
	// kubeconfig's certificate-authority) is published, as upstream.
	RootCAFile string

	// TerminatedPodGCThreshold is upstream's --terminated-pod-gc-threshold:
	// how many terminated pods the pod garbage collector keeps. 0 means
	// upstream's default (12500); negative turns that collection off (the
	// flag's 0 or less, as upstream).
	TerminatedPodGCThreshold int

	// CSRSigning is the CSR signing controller's CA files (see misc.go).
	CSRSigning CSRSigningConfig
	// ResourceQuotaSyncPeriod is --resource-quota-sync-period (0: 5m).
	ResourceQuotaSyncPeriod time.Duration
	// HorizontalPodAutoscaler is the --horizontal-pod-autoscaler-* flags.
	HorizontalPodAutoscaler HPAConfig

	// Network is the endpointslice controllers' knobs (see network.go).
	Network NetworkConfig

	// LocalPath configures skiff's local-path provisioner (storage.go).
	LocalPath LocalPathConfig
	// PVClaimBinderSyncPeriod is upstream's --pvclaimbinder-sync-period:
	// how often the PV binder re-syncs every claim and volume (0: 15s).
	PVClaimBinderSyncPeriod time.Duration

	// NodeLifecycle is the --node-monitor-* and --node-startup-grace-period
	// flags (zero: upstream's defaults).
	NodeLifecycle NodeLifecycleConfig
	// NodeIPAM is the node IPAM controller's flags (nodeipam.go).
	NodeIPAM NodeIPAMConfig

	// Descriptors replaces the controller table (nil: Controllers()).
	Descriptors []Descriptor

	// Registry receives the metrics (nil: a new registry with the Go and
	// process collectors). Gatherer serves them (nil: Registry when it is
	// a Gatherer).
	Registry prometheus.Registerer
	Gatherer prometheus.Gatherer

	Clock  clock.Clock
	Logger *slog.Logger
	// Rand returns a number in [0, 1) (resync and election jitter; nil:
	// math/rand/v2).
	Rand func() float64
}

// NodeLifecycleConfig is the node lifecycle controller's flags.
type NodeLifecycleConfig struct {
	NodeMonitorPeriod         time.Duration // --node-monitor-period, 5s
	NodeMonitorGracePeriod    time.Duration // --node-monitor-grace-period, 50s
	NodeStartupGracePeriod    time.Duration // --node-startup-grace-period, 1m
	NodeEvictionRate          float64       // --node-eviction-rate, 0.1
	SecondaryNodeEvictionRate float64       // --secondary-node-eviction-rate, 0.01
	LargeClusterSizeThreshold int           // --large-cluster-size-threshold, 50
	UnhealthyZoneThreshold    float64       // --unhealthy-zone-threshold, 0.55
}

// Upstream's defaults.
const (
	DefaultSecurePort      = component.ControllerManagerSecurePort
	DefaultKubeAPIQPS      = 20
	DefaultKubeAPIBurst    = 30
	DefaultMinResyncPeriod = 12 * time.Hour
	// Component is the name the manager reports (User-Agent, field
	// manager, event source of the lease events, leader election lock).
	Component = component.ControllerManagerName
)

// DefaultConfig is upstream's kube-controller-manager defaults: every
// default controller, leader election on, serving on 0.0.0.0:10257.
func DefaultConfig() Config {
	return Config{
		Controllers:        []string{"*"},
		KubeAPIQPS:         DefaultKubeAPIQPS,
		KubeAPIBurst:       DefaultKubeAPIBurst,
		KubeAPIContentType: client.ContentTypeProtobuf,
		LeaderElection:     component.DefaultLeaderElectionConfig(Component),
		Serving:            component.DefaultServingConfig(DefaultSecurePort),
		MinResyncPeriod:    DefaultMinResyncPeriod,
	}
}

// withDefaults fills what is unset.
func (c Config) withDefaults() Config {
	if c.Controllers == nil {
		c.Controllers = []string{"*"}
	}
	if c.KubeAPIQPS == 0 {
		c.KubeAPIQPS = DefaultKubeAPIQPS
	}
	if c.KubeAPIBurst == 0 {
		c.KubeAPIBurst = DefaultKubeAPIBurst
	}
	if c.KubeAPIContentType == "" {
		c.KubeAPIContentType = client.ContentTypeProtobuf
	}
	c.LeaderElection = c.LeaderElection.WithDefaults(Component)
	c.Serving = c.Serving.WithDefaults()
	if c.Serving.PairName == "" {
		c.Serving.PairName = Component // --cert-dir's kube-controller-manager.crt/.key
	}
	if c.MinResyncPeriod == 0 {
		c.MinResyncPeriod = DefaultMinResyncPeriod
	}
	if c.Descriptors == nil {
		c.Descriptors = Controllers()
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// validate checks the configuration as upstream's options validation does.
func (c *Config) validate() error {
	var errs []error
	if _, err := EnabledControllers(c.Descriptors, c.Controllers); err != nil {
		errs = append(errs, err)
	}
	for name, n := range c.ConcurrentSyncs {
		d, ok := lookup(c.Descriptors, name)
		if !ok {
			errs = append(errs, fmt.Errorf("worker count for unknown controller %q", name))
			continue
		}
		if n < 1 {
			flag := d.WorkersFlag
			if flag == "" {
				flag = "workers of " + d.Name
			} else {
				flag = "--" + flag
			}
			errs = append(errs, fmt.Errorf("%s must be greater than 0, got %d", flag, n))
		}
	}
	errs = append(errs, c.LeaderElection.Validate()...)
	errs = append(errs, c.Serving.Validate()...)
	return errors.Join(errs...)
}

// lookup finds a controller by canonical name or alias.
func lookup(descs []Descriptor, name string) (Descriptor, bool) {
	for _, d := range descs {
		if d.Name == name || slices.Contains(d.Aliases, name) {
			return d, true
		}
	}
	return Descriptor{}, false
}

// EnabledControllers returns the canonical names of the controllers that
// the --controllers list enables, in table order, with upstream's
// semantics: "-foo" disables foo, "foo" enables it, otherwise "*" enables
// it unless it is disabled by default. Aliases are accepted; a name that
// is not known is an error.
func EnabledControllers(descs []Descriptor, controllers []string) ([]string, error) {
	explicit := map[string]bool{}
	star := false
	var errs []error
	for _, item := range controllers {
		item = strings.TrimSpace(item)
		switch {
		case item == "*":
			star = true
			continue
		case item == "":
			continue
		}
		name, on := item, true
		if strings.HasPrefix(item, "-") {
			name, on = item[1:], false
		}
		d, ok := lookup(descs, name)
		if !ok {
			errs = append(errs, fmt.Errorf("%q is not in the list of known controllers", item))
			continue
		}
		if prev, seen := explicit[d.Name]; seen && !prev {
			continue // "-foo" wins over "foo", as upstream checks it first
		}
		explicit[d.Name] = on
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []string
	for _, d := range descs {
		on, set := explicit[d.Name]
		if !set {
			on = star && !d.DisabledByDefault
		}
		if on {
			out = append(out, d.Name)
		}
	}
	return out, nil
}

// workers is the worker count of controller d.
func (c *Config) workers(d Descriptor) int {
	if n, ok := c.ConcurrentSyncs[d.Name]; ok {
		return n
	}
	for _, a := range d.Aliases {
		if n, ok := c.ConcurrentSyncs[a]; ok {
			return n
		}
	}
	if d.DefaultWorkers > 0 {
		return d.DefaultWorkers
	}
	return 1
}
