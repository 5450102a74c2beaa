package cluster

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	"github.com/skiff-sh/skiff/pkg/auth/bootstrappolicy"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/controller/nodeipam"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
	"github.com/skiff-sh/skiff/pkg/pki"
	"github.com/skiff-sh/skiff/pkg/registry/builtin"
	"github.com/skiff-sh/skiff/pkg/scheduler"
	schedconfig "github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/storage/etcd3"
	"github.com/skiff-sh/skiff/pkg/storage/memory"
)

// UpConfig configures the all-in-one cluster.
type UpConfig struct {
	DataDir          string
	Storage          string // "etcd" (embedded) or "memory"
	BindAddress      string
	SecurePort       int
	AdvertiseAddress string
	TokenAuthFile    string
	// EnableBootstrapTokenAuth accepts bootstrap tokens (`skiff token
	// create`) as bearer tokens, as kubeadm sets upstream's
	// --enable-bootstrap-token-auth (the skiff up flag defaults to true).
	EnableBootstrapTokenAuth bool
	// AuthorizationMode is upstream's --authorization-mode (comma
	// separated); empty means DefaultAuthorizationMode.
	AuthorizationMode string
	// AnonymousAuth is upstream's --anonymous-auth (off with AlwaysAllow,
	// as upstream resets it).
	AnonymousAuth bool
	// Profiling serves /debug/pprof/ on the API server (and the controller
	// manager's secure port), upstream's --profiling.
	Profiling bool
	// Disable leaves components out (see Components), so that upstream's
	// can run against skiff's API server in their place.
	Disable []string
	// ControllerManagerSecurePort serves the in-process controller
	// manager's /healthz and /metrics over HTTPS on 127.0.0.1 (upstream's
	// port is 10257); 0 does not serve them.
	ControllerManagerSecurePort int
	// SchedulerSecurePort serves the in-process scheduler's /healthz and
	// /metrics over HTTPS on 127.0.0.1 (upstream's port is 10259); 0 does
	// not serve them.
	SchedulerSecurePort int
	// EnableAdmissionPlugins and DisableAdmissionPlugins change upstream's
	// default admission plugins (see apiserver.Config).
	EnableAdmissionPlugins  []string
	DisableAdmissionPlugins []string
	// ClusterCIDR is the pod network (--cluster-cidr, default
	// DefaultClusterCIDR): the controller manager's node IPAM gives each
	// node a /NodeCIDRMaskSize of it (default 24) as spec.podCIDR.
	ClusterCIDR      string
	NodeCIDRMaskSize int
	// ContainerRuntime is what the node runs pods on: "" (containerd
	// when it is installed, else simulated), "sim" or "containerd".
	// ContainerRuntimeEndpoint is a CRI runtime already running to use
	// instead (upstream's --container-runtime-endpoint).
	ContainerRuntime         string
	ContainerRuntimeEndpoint string
	// KubeletPort is where the node serves the kubelet's HTTPS API (0:
	// upstream's 10250, or a port the kernel chooses when that one is in
	// use).
	KubeletPort int
	// Out receives the one-line "ready" message.
	Out    io.Writer
	Logger *slog.Logger
	Clock  clock.Clock
}

// Components are the parts of a cluster `skiff up` runs besides the API
// server, by the names --disable takes (kubelet: the node, node.go).
// Those skiff does not have yet (proxy, dns) are accepted so that scripts
// written for them keep working; disabling them changes nothing today.
var Components = []string{"controller-manager", "scheduler", "kubelet", "metrics-server", "proxy", "dns"}

// Up is a running all-in-one cluster.
type Up struct {
	cfg      UpConfig
	disabled map[string]bool
}

// NewUp validates cfg.
func NewUp(cfg UpConfig) (*Up, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("a data directory is required")
	}
	switch cfg.Storage {
	case "", "etcd":
		cfg.Storage = "etcd"
	case "memory":
	default:
		return nil, fmt.Errorf("--storage must be etcd or memory, not %q", cfg.Storage)
	}
	if cfg.BindAddress == "" {
		cfg.BindAddress = "127.0.0.1"
	}
	if cfg.SecurePort == 0 {
		cfg.SecurePort = 6443
	}
	if cfg.AdvertiseAddress == "" {
		cfg.AdvertiseAddress = cfg.BindAddress
		if ip := net.ParseIP(cfg.BindAddress); ip == nil || ip.IsUnspecified() {
			cfg.AdvertiseAddress = "127.0.0.1"
		}
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.ClusterCIDR == "" {
		cfg.ClusterCIDR = DefaultClusterCIDR
	}
	switch cfg.ContainerRuntime {
	case "", "sim", "containerd":
	default:
		return nil, fmt.Errorf("--container-runtime must be sim or containerd, not %q", cfg.ContainerRuntime)
	}
	cidrs, err := nodeipam.ParseClusterCIDRs(cfg.ClusterCIDR)
	if err != nil {
		return nil, fmt.Errorf("--cluster-cidr: %w", err)
	}
	if _, err := nodeipam.NodeCIDRMaskSizes(cidrs, cfg.NodeCIDRMaskSize, 0, 0); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if _, err := admission.EnabledPlugins(cfg.EnableAdmissionPlugins, cfg.DisableAdmissionPlugins); err != nil {
		return nil, err
	}
	disabled := map[string]bool{}
	for _, d := range cfg.Disable {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		if !slices.Contains(Components, d) {
			return nil, fmt.Errorf("--disable: unknown component %q (known: %s)", d, strings.Join(Components, ", "))
		}
		disabled[d] = true
	}
	return &Up{cfg: cfg, disabled: disabled}, nil
}

// KubeconfigPath is where Up writes the admin kubeconfig.
func KubeconfigPath(dataDir string) string { return filepath.Join(dataDir, "kubeconfig") }

// SchedulerKubeconfigPath is where Up writes the scheduler's kubeconfig
// (user system:kube-scheduler), for `skiff scheduler` run beside
// `skiff up --disable=scheduler`.
func SchedulerKubeconfigPath(dataDir string) string {
	return filepath.Join(dataDir, "scheduler.kubeconfig")
}

// ControllerManagerKubeconfigPath is where Up writes the controller
// manager's kubeconfig (user system:kube-controller-manager), for
// `skiff controller-manager` run beside `skiff up --disable=controller-manager`.
func ControllerManagerKubeconfigPath(dataDir string) string {
	return filepath.Join(dataDir, "controller-manager.kubeconfig")
}

// DefaultAuthorizationMode is --authorization-mode's default, upstream's:
// the in-process controller manager (each controller as its service
// account) and scheduler work with the bootstrap policy's permissions
// (rbac_test.go); the admin kubeconfig is system:masters.
const DefaultAuthorizationMode = "Node,RBAC"

// authorization parses the --authorization-mode and --anonymous-auth
// flags as upstream: anonymous authentication is turned off when
// AlwaysAllow is among the modes.
func authorization(mode string, anonymous bool, logger *slog.Logger) ([]string, bool, error) {
	if mode == "" {
		mode = DefaultAuthorizationMode
	}
	modes, err := authorizer.ParseModes(mode)
	if err != nil {
		return nil, false, fmt.Errorf("--authorization-mode: %w", err)
	}
	if anonymous && slices.Contains(modes, "AlwaysAllow") {
		logger.Warn("AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer")
		anonymous = false
	}
	return modes, anonymous, nil
}

// DefaultClusterCIDR is skiff up's pod network, k3s's default (kubeadm
// has none: it leaves --cluster-cidr to the network plugin's manifest,
// whose common choice 10.244.0.0/16 is flannel's).
const DefaultClusterCIDR = "10.42.0.0/16"

// serviceCIDR is the API server's default service range (upstream's
// kubeadm default), kept out of the pod network.
const serviceCIDR = "10.96.0.0/12"

// serviceFirstIP is the first address of the default service range, which
// the serving certificate must cover (in-cluster clients use it).
const serviceFirstIP = "10.96.0.1"

// Run starts the cluster and blocks until ctx ends, then stops it
// gracefully.
func (u *Up) Run(ctx context.Context) error {
	cfg := u.cfg
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer lock.release()
	now := cfg.Clock.Now()
	pkiDir := filepath.Join(cfg.DataDir, "pki")
	ca, err := pki.EnsureCA(pkiDir, now)
	if err != nil {
		return fmt.Errorf("cluster CA: %w", err)
	}
	hosts := []string{"127.0.0.1", "::1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local", serviceFirstIP, cfg.AdvertiseAddress}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	endpointIP := hostIP(cfg.AdvertiseAddress)
	if endpointIP != "" {
		hosts = append(hosts, endpointIP)
	}
	serving, err := pki.EnsureServing(pkiDir, "apiserver", ca, hosts, now)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	admin, err := pki.EnsureClient(pkiDir, "admin", ca, "kubernetes-admin", []string{"system:masters"}, now)
	if err != nil {
		return fmt.Errorf("admin certificate: %w", err)
	}
	// The controller manager's identity, as kubeadm gives upstream's.
	kcm, err := pki.EnsureClient(pkiDir, "controller-manager", ca, "system:kube-controller-manager", nil, now)
	if err != nil {
		return fmt.Errorf("controller manager certificate: %w", err)
	}
	// The scheduler's identity, as kubeadm gives upstream's.
	ksched, err := pki.EnsureClient(pkiDir, "scheduler", ca, "system:kube-scheduler", nil, now)
	if err != nil {
		return fmt.Errorf("scheduler certificate: %w", err)
	}
	// The API server's client certificate toward kubelets, as kubeadm
	// issues apiserver-kubelet-client (bound to system:kubelet-api-admin).
	kubeletClient, err := pki.EnsureClient(pkiDir, "apiserver-kubelet-client", ca, bootstrappolicy.KubeletAPIClientUser, nil, now)
	if err != nil {
		return fmt.Errorf("kubelet client certificate: %w", err)
	}
	saKey, err := pki.EnsureSigningKey(pkiDir, "sa")
	if err != nil {
		return fmt.Errorf("service account signing key: %w", err)
	}
	// The front-proxy CA and the client certificate the API server
	// presents to aggregated API servers, as kubeadm makes them.
	frontProxyCA, err := pki.EnsureNamedCA(pkiDir, "front-proxy-ca", "front-proxy-ca", now)
	if err != nil {
		return fmt.Errorf("front-proxy CA: %w", err)
	}
	frontProxy, err := pki.EnsureClient(pkiDir, "front-proxy-client", frontProxyCA, "front-proxy-client", nil, now)
	if err != nil {
		return fmt.Errorf("front-proxy client certificate: %w", err)
	}

	var kv storage.KV
	switch cfg.Storage {
	case "memory":
		kv = memory.New(memory.Config{})
	default:
		e, err := etcd3.StartEmbedded(ctx, etcd3.EmbeddedConfig{Dir: filepath.Join(cfg.DataDir, "etcd")})
		if err != nil {
			return err
		}
		defer e.Close()
		kv = etcd3.NewEmbedded(e)
	}
	defer kv.Close()

	authn := apiserver.UnionAuthenticator{apiserver.NewX509Authenticator(pool(ca.Cert))}
	if cfg.TokenAuthFile != "" {
		t, err := apiserver.LoadTokenFile(cfg.TokenAuthFile)
		if err != nil {
			return err
		}
		authn = append(authn, t)
	}
	modes, anonymous, err := authorization(cfg.AuthorizationMode, cfg.AnonymousAuth, cfg.Logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.SecurePort)))
	if err != nil {
		return err
	}
	srv, err := apiserver.New(apiserver.Config{
		AuthorizationModes: modes, AnonymousAuth: anonymous,
		KV: kv, Definitions: builtin.Definitions(), Listener: ln,
		SecurePort: cfg.SecurePort, BindAddress: cfg.BindAddress, AdvertiseAddress: cfg.AdvertiseAddress,
		EndpointAddress: endpointIP, TLS: ServingTLS(serving, nil), Authenticator: authn,
		ServiceAccountSigner: saKey, ClientCAPEM: ca.CertPEM, Profiling: cfg.Profiling,
		EnableBootstrapTokenAuth: cfg.EnableBootstrapTokenAuth,
		ProxyClientCert:          &tls.Certificate{Certificate: [][]byte{frontProxy.Cert.Raw}, PrivateKey: frontProxy.Key, Leaf: frontProxy.Cert},
		RequestHeaderCAPEM:       frontProxyCA.CertPEM, RequestHeaderAllowedNames: []string{"front-proxy-client"},
		KubeletClientCert: &tls.Certificate{Certificate: [][]byte{kubeletClient.Cert.Raw}, PrivateKey: kubeletClient.Key, Leaf: kubeletClient.Cert},
		Clock:             cfg.Clock, Logger: cfg.Logger,
		// NodeRestriction on, as kubeadm has it: a kubelet may change only
		// its own Node and the pods bound to it.
		EnableAdmissionPlugins: withNodeRestriction(cfg.EnableAdmissionPlugins, cfg.DisableAdmissionPlugins), DisableAdmissionPlugins: cfg.DisableAdmissionPlugins,
	})
	if err != nil {
		ln.Close()
		return err
	}
	server := "https://" + net.JoinHostPort(cfg.AdvertiseAddress, strconv.Itoa(cfg.SecurePort))
	kcPath := KubeconfigPath(cfg.DataDir)
	if err := kubeconfig.Write(kcPath, kubeconfig.New("skiff", server, ca.CertPEM, admin.CertPEM, admin.KeyPEM)); err != nil {
		return err
	}
	if err := kubeconfig.Write(ControllerManagerKubeconfigPath(cfg.DataDir), kubeconfig.New("skiff", server, ca.CertPEM, kcm.CertPEM, kcm.KeyPEM)); err != nil {
		return err
	}
	if err := kubeconfig.Write(SchedulerKubeconfigPath(cfg.DataDir), kubeconfig.New("skiff", server, ca.CertPEM, ksched.CertPEM, ksched.KeyPEM)); err != nil {
		return err
	}
	// The in-process components, each over HTTP with its own identity.
	type inProcess struct {
		name string
		run  func(context.Context) error
	}
	var comps []inProcess
	if !u.disabled["controller-manager"] {
		caCert, caKey := pki.Files(pkiDir, "ca")
		mcfg := controllermanager.Config{
			ClientConfig: &client.Config{Host: server, CAData: ca.CertPEM, CertData: kcm.CertPEM, KeyData: kcm.KeyPEM},
			// As kubeadm runs upstream's: each controller with its own
			// service account and upstream's system:controller:* role.
			UseServiceAccountCredentials: true,
			// One skiff up is one process over its own data directory:
			// there is no second instance to elect against (see doc.go).
			LeaderElection: component.LeaderElectionConfig{LeaderElect: false},
			Serving: component.ServingConfig{
				SecurePort: cfg.ControllerManagerSecurePort, BindAddress: "127.0.0.1", Profiling: cfg.Profiling,
				// As kubeadm configures upstream's: reviews through its own kubeconfig.
				AuthenticationKubeconfig: ControllerManagerKubeconfigPath(cfg.DataDir),
				AuthorizationKubeconfig:  ControllerManagerKubeconfigPath(cfg.DataDir),
			},
			// The cluster CA signs approved CSRs, as kubeadm configures.
			CSRSigning: controllermanager.CSRSigningConfig{ClusterSigningCertFile: caCert, ClusterSigningKeyFile: caKey},
			Clock:      cfg.Clock, Logger: cfg.Logger.With("component", "controller-manager"),
			// One host, one node: local-path volumes live in the data
			// directory and the provisioner manages their directories.
			LocalPath: controllermanager.LocalPathConfig{StorageDir: filepath.Join(cfg.DataDir, "storage"), ManageDirectories: true},
			// As k3s: every node gets a pod CIDR of the cluster CIDR.
			NodeIPAM: controllermanager.NodeIPAMConfig{AllocateNodeCIDRs: true, ClusterCIDR: cfg.ClusterCIDR,
				NodeCIDRMaskSize: cfg.NodeCIDRMaskSize, ServiceClusterIPRange: serviceCIDR},
		}
		m, err := controllermanager.New(mcfg)
		if err != nil {
			ln.Close()
			return fmt.Errorf("controller manager: %w", err)
		}
		comps = append(comps, inProcess{"controller manager", m.Run})
	}
	// The RBAC bindings kubeadm creates for nodes joining with a bootstrap
	// token (kubeadm.go).
	adminClient, err := client.New(&client.Config{Host: server, CAData: ca.CertPEM, CertData: admin.CertPEM, KeyData: admin.KeyPEM, UserAgent: "skiff-up"})
	if err != nil {
		ln.Close()
		return err
	}
	comps = append(comps, inProcess{"node bootstrap RBAC", func(ctx context.Context) error {
		return runKubeadmRBAC(ctx, adminClient, cfg.Clock, cfg.Logger)
	}})
	var node *nodePlan
	if !u.disabled["kubelet"] {
		if node, err = u.planNode(server, ca, endpointIP, now); err != nil {
			ln.Close()
			return err
		}
		comps = append(comps, inProcess{"kubelet", node.run})
	}
	if !u.disabled["scheduler"] {
		cc := schedconfig.Default()
		off := false
		cc.LeaderElection.LeaderElect = &off
		s, err := scheduler.New(ctx, scheduler.Config{
			ComponentConfig: cc,
			ClientConfig:    &client.Config{Host: server, CAData: ca.CertPEM, CertData: ksched.CertPEM, KeyData: ksched.KeyPEM},
			Serving: component.ServingConfig{
				SecurePort: cfg.SchedulerSecurePort, BindAddress: "127.0.0.1", Profiling: cfg.Profiling,
				AuthenticationKubeconfig: SchedulerKubeconfigPath(cfg.DataDir),
				AuthorizationKubeconfig:  SchedulerKubeconfigPath(cfg.DataDir),
			},
			Clock: cfg.Clock, Logger: cfg.Logger.With("component", "scheduler"),
		})
		if err != nil {
			ln.Close()
			return fmt.Errorf("scheduler: %w", err)
		}
		comps = append(comps, inProcess{"scheduler", s.Run})
	}
	if !u.disabled["metrics-server"] {
		run, err := newMetricsServer(metricsServerSetup{PKIDir: pkiDir, CA: ca, FrontProxyCA: frontProxyCA, Admin: admin,
			Server: server, HostIP: endpointIP, PortFile: MetricsServerPortPath(cfg.DataDir), Clock: cfg.Clock, Logger: cfg.Logger.With("component", "metrics-server")})
		if err != nil {
			// The cluster works without it; kubectl top and the HPA say
			// that the metrics API is missing.
			cfg.Logger.Warn("metrics-server not started: metrics.k8s.io is not served", "err", err)
		} else {
			comps = append(comps, inProcess{"metrics-server", run})
		}
	}
	// The API server runs until ctx ends and every in-process component
	// has stopped, so that their last requests are answered; a component
	// that fails stops the cluster.
	srvCtx, stopSrv := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSrv()
	compDone := make(chan error, len(comps))
	for _, c := range comps {
		go func() {
			select {
			case <-srv.Ready():
			case <-srvCtx.Done():
				compDone <- nil
				return
			}
			err := c.run(ctx)
			if err != nil {
				cfg.Logger.Error(c.name+" failed", "err", err)
				err = fmt.Errorf("%s: %w", c.name, err)
				stopSrv()
			}
			compDone <- err
		}()
	}
	compErr := make(chan error, 1)
	go func() {
		var first error
		for range comps {
			if err := <-compDone; err != nil && first == nil {
				first = err
			}
		}
		if len(comps) == 0 {
			<-ctx.Done()
		}
		stopSrv()
		compErr <- first
	}()
	announced := make(chan struct{})
	annCtx, stopAnnouncing := context.WithCancel(ctx)
	go func() {
		defer close(announced)
		select {
		case <-srv.Ready():
			fmt.Fprintf(cfg.Out, "skiff is up at %s (storage: %s). Kubeconfig: %s\n", server, cfg.Storage, kcPath)
			if node != nil {
				fmt.Fprintln(cfg.Out, node.message)
			}
			if off := u.disabledList(); off != "" {
				fmt.Fprintf(cfg.Out, "Disabled: %s (run your own against this API server)\n", off)
			}
			fmt.Fprintf(cfg.Out, "Next: export KUBECONFIG=%s && kubectl get namespaces\n", kcPath)
		case <-annCtx.Done():
		}
	}()
	err = srv.Run(srvCtx)
	stopSrv()
	stopAnnouncing()
	<-announced // one writer to cfg.Out at a time
	if cErr := <-compErr; cErr != nil && err == nil {
		err = cErr
	}
	if err == nil && ctx.Err() != nil {
		if cfg.Storage == "memory" {
			fmt.Fprintf(cfg.Out, "skiff stopped; nothing was kept (--storage=memory).\n")
		} else {
			fmt.Fprintf(cfg.Out, "skiff stopped; the cluster's data is kept in %s (run skiff up again to resume, or remove the directory to start afresh).\n", cfg.DataDir)
			if node != nil && node.keepsContainers {
				fmt.Fprintf(cfg.Out, "The node's containers keep running (as k3s's do); skiff up takes them over again.\n")
			}
		}
	}
	return err
}

// disabledList names the disabled components, in Components order.
func (u *Up) disabledList() string {
	var out []string
	for _, c := range Components {
		if u.disabled[c] {
			out = append(out, c)
		}
	}
	return strings.Join(out, ", ")
}

func pool(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// ServingTLS is the API server's TLS configuration: the serving key pair,
// client certificates requested (and verified by the authenticator).
func ServingTLS(serving *pki.KeyPair, _ *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key, Leaf: serving.Cert}},
		ClientAuth:   tls.RequestClientCert,
		NextProtos:   []string{"h2", "http/1.1"},
	}
}

// APIServerConfig configures a standalone API server.
type APIServerConfig struct {
	EtcdServers      []string
	Storage          string // "etcd" (EtcdServers) or "memory"
	BindAddress      string
	SecurePort       int
	AdvertiseAddress string
	TLSCertFile      string
	TLSKeyFile       string
	ClientCAFile     string
	TokenAuthFile    string
	// EnableBootstrapTokenAuth is upstream's --enable-bootstrap-token-auth
	// (off by default, as upstream's).
	EnableBootstrapTokenAuth bool
	// AuthorizationMode and AnonymousAuth are as in UpConfig.
	AuthorizationMode string
	AnonymousAuth     bool
	// ServiceAccountSigningKeyFile (ECDSA P-256, PEM) enables the
	// TokenRequest API and service account token authentication; without it
	// serviceaccounts/<name>/token is not served, as upstream.
	ServiceAccountSigningKeyFile string
	// ServiceAccountIssuer is the tokens' issuer and audience (default
	// https://kubernetes.default.svc.cluster.local).
	ServiceAccountIssuer string
	// Profiling serves /debug/pprof/ (upstream's --profiling).
	Profiling bool
	// ProxyClientCertFile and ProxyClientKeyFile are the client certificate
	// presented to aggregated API servers; RequestHeaderClientCAFile its CA
	// and RequestHeaderAllowedNames its allowed common names, published for
	// those servers (upstream's flags of the same names).
	ProxyClientCertFile, ProxyClientKeyFile string
	RequestHeaderClientCAFile               string
	RequestHeaderAllowedNames               []string
	// KubeletClientCertificate and KubeletClientKey are the client
	// certificate presented to kubelets, KubeletCertificateAuthority
	// verifies theirs (unverified without it), KubeletPreferredAddressTypes
	// orders a node's addresses (upstream's --kubelet-* flags).
	KubeletClientCertificate, KubeletClientKey string
	KubeletCertificateAuthority                string
	KubeletPreferredAddressTypes               []string
	// EnableAdmissionPlugins and DisableAdmissionPlugins change upstream's
	// default admission plugins (see apiserver.Config).
	EnableAdmissionPlugins  []string
	DisableAdmissionPlugins []string
	Logger                  *slog.Logger
}

// RunAPIServer runs a standalone API server until ctx ends.
func RunAPIServer(ctx context.Context, cfg APIServerConfig) error {
	if _, err := admission.EnabledPlugins(cfg.EnableAdmissionPlugins, cfg.DisableAdmissionPlugins); err != nil {
		return err
	}
	if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
		return errors.New("--tls-cert-file and --tls-private-key-file are required")
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		return err
	}
	var authn apiserver.UnionAuthenticator
	var clientCA []byte
	if cfg.ClientCAFile != "" {
		data, err := os.ReadFile(cfg.ClientCAFile)
		clientCA = data
		if err != nil {
			return err
		}
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM(data) {
			return fmt.Errorf("%s: no certificates", cfg.ClientCAFile)
		}
		authn = append(authn, apiserver.NewX509Authenticator(p))
	}
	if cfg.TokenAuthFile != "" {
		t, err := apiserver.LoadTokenFile(cfg.TokenAuthFile)
		if err != nil {
			return err
		}
		authn = append(authn, t)
	}
	if len(authn) == 0 && !cfg.EnableBootstrapTokenAuth {
		return errors.New("configure at least one of --client-ca-file, --token-auth-file or --enable-bootstrap-token-auth")
	}
	modes, anonymous, err := authorization(cfg.AuthorizationMode, cfg.AnonymousAuth, cfg.Logger)
	if err != nil {
		return err
	}
	var saKey crypto.Signer
	if cfg.ServiceAccountSigningKeyFile != "" {
		if saKey, err = pki.LoadSigningKey(cfg.ServiceAccountSigningKeyFile); err != nil {
			return fmt.Errorf("--service-account-signing-key-file: %w", err)
		}
	}
	var proxyCert *tls.Certificate
	if cfg.ProxyClientCertFile != "" || cfg.ProxyClientKeyFile != "" {
		c, err := tls.LoadX509KeyPair(cfg.ProxyClientCertFile, cfg.ProxyClientKeyFile)
		if err != nil {
			return fmt.Errorf("--proxy-client-cert-file/--proxy-client-key-file: %w", err)
		}
		proxyCert = &c
	}
	var kubeletCert *tls.Certificate
	if cfg.KubeletClientCertificate != "" || cfg.KubeletClientKey != "" {
		c, err := tls.LoadX509KeyPair(cfg.KubeletClientCertificate, cfg.KubeletClientKey)
		if err != nil {
			return fmt.Errorf("--kubelet-client-certificate/--kubelet-client-key: %w", err)
		}
		kubeletCert = &c
	}
	var kubeletCA []byte
	if cfg.KubeletCertificateAuthority != "" {
		if kubeletCA, err = os.ReadFile(cfg.KubeletCertificateAuthority); err != nil {
			return fmt.Errorf("--kubelet-certificate-authority: %w", err)
		}
	}
	var requestHeaderCA []byte
	if cfg.RequestHeaderClientCAFile != "" {
		if requestHeaderCA, err = os.ReadFile(cfg.RequestHeaderClientCAFile); err != nil {
			return err
		}
	}
	var kv storage.KV
	switch cfg.Storage {
	case "memory":
		kv = memory.New(memory.Config{})
	case "", "etcd":
		if len(cfg.EtcdServers) == 0 {
			return errors.New("--etcd-servers is required with --storage=etcd")
		}
		client, err := etcd3.NewClient(cfg.EtcdServers, 10*time.Second)
		if err != nil {
			return err
		}
		kv = etcd3.New(client, true)
	default:
		return fmt.Errorf("--storage must be etcd or memory, not %q", cfg.Storage)
	}
	defer kv.Close()
	srv, err := apiserver.New(apiserver.Config{
		AuthorizationModes: modes, AnonymousAuth: anonymous,
		KV: kv, Definitions: builtin.Definitions(),
		SecurePort: cfg.SecurePort, BindAddress: cfg.BindAddress, AdvertiseAddress: cfg.AdvertiseAddress,
		TLS: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert,
			NextProtos: []string{"h2", "http/1.1"}},
		Authenticator: authn, Logger: cfg.Logger, EnableBootstrapTokenAuth: cfg.EnableBootstrapTokenAuth,
		ServiceAccountSigner: saKey, ServiceAccountIssuer: cfg.ServiceAccountIssuer,
		ClientCAPEM: clientCA, Profiling: cfg.Profiling,
		ProxyClientCert: proxyCert, RequestHeaderCAPEM: requestHeaderCA, RequestHeaderAllowedNames: cfg.RequestHeaderAllowedNames,
		KubeletClientCert: kubeletCert, KubeletCAPEM: kubeletCA, KubeletPreferredAddressTypes: cfg.KubeletPreferredAddressTypes,
		EnableAdmissionPlugins: cfg.EnableAdmissionPlugins, DisableAdmissionPlugins: cfg.DisableAdmissionPlugins,
	})
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// hostIP is the address pods reach the API server at: the advertise
// address unless it is loopback, else the host's first global IPv4.
func hostIP(advertise string) string {
	if ip := net.ParseIP(advertise); ip != nil && !ip.IsLoopback() && !ip.IsUnspecified() {
		return advertise
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}
