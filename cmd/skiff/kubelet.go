package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/certificate"
	"github.com/skiff-sh/skiff/pkg/kubelet/eviction"
	"github.com/skiff-sh/skiff/pkg/kubelet/hollow"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
	"github.com/skiff-sh/skiff/pkg/kubelet/standalone"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
)

// newKubelet runs kubelets against an API server: --runtime=sim --nodes=N
// runs N hollow nodes in this process (pkg/kubelet/hollow);
// --runtime=remote (implied by --container-runtime-endpoint) runs one node
// on a CRI runtime such as containerd (pkg/kubelet/standalone). Both with
// the kubeconfig's identity.
func newKubelet(logger func() *slog.Logger) *cobra.Command {
	var (
		kubeconfig          string
		bootstrapKubeconfig string
		rotateCerts         bool
		runtime             string
		cfg                 hollow.Config
		qps                 float32
		burst               int
		contentType         string
		labels              []string
		endpoint            string
		nodeIP              string
		podLogDir           string
		logMaxSize          string
		logMaxFiles         int
		rootDir             string
		reqTimeout          time.Duration
		serving             kubeletServing
		evictFlags          evictionFlags
		podFlags            podConfigFlags
		gogc                int
	)
	cmd := &cobra.Command{
		Use:   "kubelet",
		Short: "Run node agents against an API server (--runtime=sim: simulated nodes, no containers; --runtime=remote: one node on a CRI runtime such as containerd)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("gogc") || os.Getenv("GOGC") == "" {
				debug.SetGCPercent(gogc)
			}
			if cmd.Flags().Changed("container-runtime-endpoint") && !cmd.Flags().Changed("runtime") {
				runtime = "remote"
			}
			switch runtime {
			case "sim":
			case "remote":
				if cmd.Flags().Changed("nodes") && cfg.Nodes != 1 {
					return errors.New("--runtime=remote runs one node: --nodes must be 1")
				}
			default:
				return fmt.Errorf("--runtime=%s: must be sim (simulated nodes) or remote (a CRI runtime at --container-runtime-endpoint)", runtime)
			}
			if cfg.Nodes < 1 || cfg.Nodes > hollow.MaxNodes {
				return fmt.Errorf("--nodes must be between 1 and %d", hollow.MaxNodes)
			}
			if cfg.Nodes == 1 && !cmd.Flags().Changed("node-name-prefix") && cfg.Name == "" {
				name, err := os.Hostname()
				if err != nil {
					return err
				}
				cfg.Name = strings.ToLower(name)
			}
			ctx, stop := signalContext()
			defer stop()
			if bootstrapKubeconfig != "" {
				// TLS bootstrapping: the kubeconfig's client certificate,
				// asked for with the bootstrap token when missing or expired.
				if cfg.Nodes != 1 {
					return errors.New("--bootstrap-kubeconfig: a client certificate is one node's identity, run one node (--nodes=1)")
				}
				if kubeconfig == "" {
					return errors.New("--bootstrap-kubeconfig needs --kubeconfig: where the kubelet's kubeconfig is written")
				}
				certDir := serving.certDir
				if certDir == "" {
					certDir = filepath.Join(rootDir, "pki")
				}
				if _, err := certificate.LoadClientCert(ctx, certificate.BootstrapConfig{KubeconfigPath: kubeconfig,
					BootstrapKubeconfigPath: bootstrapKubeconfig, CertDir: certDir, NodeName: cfg.NodeName(0), Logger: logger()}); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return fmt.Errorf("failed to run kubelet: unable to load bootstrap kubeconfig: %w", err)
				}
			}
			cc, err := client.LoadKubeconfig(kubeconfig, "")
			if err != nil {
				return err
			}
			// Client certificate rotation: the bootstrapped certificate (the
			// kubeconfig names the store's kubelet-client-current.pem) is
			// renewed before it expires.
			var rotation *certificate.Manager
			if bootstrapKubeconfig != "" && rotateCerts {
				certDir := serving.certDir
				if certDir == "" {
					certDir = filepath.Join(rootDir, "pki")
				}
				if rotation, err = certificate.ForKubeconfig(cc, certDir, cfg.NodeName(0), logger()); err != nil {
					return err
				}
			}
			// Each kubelet gets upstream's kubelet rate (50 QPS, burst 100)
			// unless told otherwise: hollow nodes share one client.
			cc.QPS, cc.Burst = 50*float32(cfg.Nodes), 100*cfg.Nodes
			if cmd.Flags().Changed("kube-api-qps") {
				cc.QPS = qps
			}
			if cmd.Flags().Changed("kube-api-burst") {
				cc.Burst = burst
			}
			cc.UserAgent, cc.ContentType = "skiff-kubelet", contentType
			c, err := client.New(cc)
			if err != nil {
				return err
			}
			if rotation != nil {
				rotation.SetClient(c)
				go rotation.Run(ctx)
			}
			cfg.Labels = map[string]string{}
			for _, l := range labels {
				k, v, ok := strings.Cut(l, "=")
				if !ok {
					return fmt.Errorf("--node-labels: %q is not key=value", l)
				}
				cfg.Labels[k] = v
			}
			cfg.Client, cfg.Logger = c, logger()
			// The kubelet's HTTPS API: a remote runtime's node serves it
			// unless --port=0; simulated nodes only when --port is given,
			// so that many simulations share a host (many nodes share one
			// listener, each at a loopback address of its own).
			var srvCfg *server.Config
			if runtime == "remote" && serving.port != 0 || runtime == "sim" && cmd.Flags().Changed("port") && serving.port != 0 {
				if srvCfg, err = serving.config(c, cc); err != nil {
					return err
				}
				if runtime == "sim" {
					cfg.Server, cfg.NodeIP = srvCfg, nodeIP
				}
			}
			if runtime == "remote" {
				name := cfg.NodeName(0)
				fmt.Fprintf(os.Stderr, "skiff kubelet: node %s on the container runtime at %s, as the kubeconfig's user\n", name, endpoint)
				if srvCfg != nil && srvCfg.CertDirectory == "" {
					srvCfg.CertDirectory = filepath.Join(rootDir, "pki")
				}
				thresholds, err := evictFlags.thresholds(cmd.Flags())
				if err != nil {
					return err
				}
				maxSize, err := resource.ParseQuantity(logMaxSize)
				if err != nil || maxSize.Value() <= 0 || logMaxFiles < 2 {
					return fmt.Errorf("--container-log-max-size %q, --container-log-max-files %d: a positive quantity and at least 2 files", logMaxSize, logMaxFiles)
				}
				err = standalone.Run(ctx, standalone.Config{Client: c, Endpoint: endpoint, RuntimeRequestTimeout: reqTimeout, Events: cfg.Events, Logger: cfg.Logger,
					Server: srvCfg,
					Kubelet: kubelet.Config{NodeName: name, NodeLabels: cfg.Labels, NodeIP: nodeIP, Capacity: cfg.Capacity,
						PodLogDir: podLogDir, RootDir: rootDir, Volumes: &volume.Config{},
						ContainerLogMaxSize: maxSize.Value(), ContainerLogMaxFiles: logMaxFiles,
						EvictionThresholds: thresholds, EvictionPressureTransitionPeriod: evictFlags.transition,
						EvictionMaxPodGracePeriod: evictFlags.maxPodGrace, ClusterDNS: podFlags.clusterDNS, ClusterDomain: podFlags.clusterDomain,
						ResolvConf: podFlags.resolvConf, SeccompDefault: podFlags.seccompDefault, CgroupsPerQOS: podFlags.cgroupsPerQOS}})
				if err != nil && !errors.Is(err, ctx.Err()) {
					return err
				}
				return nil
			}
			fmt.Fprintf(os.Stderr, "skiff kubelet: %d simulated node(s) (runtime sim: no containers run; nodes labelled %s=sim), first %s, as the kubeconfig's user\n",
				cfg.Nodes, hollow.LabelRuntime, cfg.NodeName(0))
			if err := hollow.Run(ctx, cfg); err != nil && !errors.Is(err, ctx.Err()) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&gogc, "gogc", 100, "skiff: the Go garbage collector's target percentage for this process, as the GOGC environment variable (which wins when set and this flag is not): lower takes less memory and more CPU. Measured with 1000 simulated nodes running 10k pods: 50 takes the peak from 542-590 to 446 MiB and the kubelets' CPU from 12-14 to 18 s")
	f.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig file, specifying how to connect to the API server.")
	f.BoolVar(&rotateCerts, "rotate-certificates", true, "Auto rotate the kubelet client certificates by requesting new certificates from the kube-apiserver when the certificate expiration approaches (at 70-90% of its lifetime; with --bootstrap-kubeconfig: the bootstrapped certificate in --cert-dir).")
	f.StringVar(&bootstrapKubeconfig, "bootstrap-kubeconfig", "", "Path to a kubeconfig file that will be used to get client certificate for kubelet. If the file specified by --kubeconfig does not exist or its client certificate expired, the bootstrap kubeconfig is used to request a client certificate from the API server (a CSR the controller manager approves and signs); on success, a kubeconfig file referencing the generated client certificate and key is written to the path specified by --kubeconfig, the certificate and key to --cert-dir (default <root-dir>/pki). One node only (--nodes=1).")
	f.StringVar(&runtime, "runtime", "sim", "Container runtime: sim (simulated nodes, no containers) or remote (one node on the CRI runtime at --container-runtime-endpoint; implied by that flag).")
	f.StringVar(&endpoint, "container-runtime-endpoint", standalone.DefaultEndpoint, "The endpoint of the CRI runtime (--runtime=remote): unix:///path or a path.")
	f.StringVar(&rootDir, "root-dir", kubelet.DefaultRootDir, "Directory for the kubelet's files (--runtime=remote): the pods' volumes under <dir>/pods/<uid>/volumes.")
	f.StringVar(&logMaxSize, "container-log-max-size", "10Mi", "A container's log file is rotated past this size (--runtime=remote; upstream's containerLogMaxSize).")
	f.IntVar(&logMaxFiles, "container-log-max-files", 5, "Log files kept per container, the live one counted (--runtime=remote; upstream's containerLogMaxFiles).")
	f.StringVar(&podLogDir, "pod-log-dir", "/var/log/pods", "Where containers' logs go (--runtime=remote): <dir>/<namespace>_<pod>_<uid>/<container>/<restart>.log.")
	f.DurationVar(&reqTimeout, "runtime-request-timeout", 2*time.Minute, "Timeout of every runtime request except pulls (--runtime=remote).")
	f.StringVar(&nodeIP, "node-ip", "", "IP address of the node (--runtime=remote, or a simulated node serving --port; default 127.0.0.1).")
	serving.addFlags(f)
	evictFlags.addFlags(f)
	podFlags.addFlags(f)
	f.IntVar(&cfg.Nodes, "nodes", 1, "How many simulated nodes to run in this process (--runtime=sim).")
	f.StringVar(&cfg.NamePrefix, "node-name-prefix", "sim-node-", "Simulated nodes are named <prefix><index> (a single node without this flag is named after the host).")
	f.StringVar(&cfg.Name, "hostname-override", "", "The name of the node when --nodes=1.")
	f.StringSliceVar(&labels, "node-labels", nil, "Labels to add when registering the nodes, key=value pairs separated by ','.")
	f.DurationVar(&cfg.Sim.StartLatency, "sim-start-latency", 0, "How long a simulated container takes to start.")
	f.DurationVar(&cfg.Sim.StopLatency, "sim-stop-latency", time.Second, "How long a simulated container takes to stop (bounded by the pod's grace period).")
	f.DurationVar(&cfg.Sim.RunDuration, "sim-run-duration", 5*time.Second, "How long containers of pods with restartPolicy OnFailure or Never (Jobs) run before exiting 0; the pod annotation sim.skiff.sh/run-duration overrides it for any pod.")
	f.DurationVar(&cfg.Sim.InitRunDuration, "sim-init-run-duration", 0, "How long simulated init containers run.")
	f.BoolVar(&cfg.Events, "record-events", true, "Record upstream's pod events (Pulling, Pulled, Created, Started, Killing, BackOff); off for large simulations.")
	f.Float32Var(&qps, "kube-api-qps", 0, "QPS to use while talking with the API server (unset: 50 per node; negative: no limit).")
	f.IntVar(&burst, "kube-api-burst", 0, "Burst to use while talking with the API server (unset: 100 per node).")
	f.StringVar(&contentType, "kube-api-content-type", client.ContentTypeProtobuf, "Content type of requests sent to apiserver.")
	return cmd
}

// kubeletServing holds the flags of the kubelet's HTTPS API (upstream's
// names and, where the kubelet configuration file's defaults differ from
// the flags', the file's: anonymous off, Webhook authorization).
type kubeletServing struct {
	port              int
	address           string
	certFile, keyFile string
	certDir           string
	clientCAFile      string
	anonymous         bool
	authzMode         string
	tokenWebhook      bool
	healthzPort       int
	healthzAddress    string
}

func (s *kubeletServing) addFlags(f *pflag.FlagSet) {
	f.IntVar(&s.port, "port", server.DefaultPort, "The port for the kubelet's HTTPS API (logs, exec, attach, port-forward, stats, metrics); 0 disables it. Simulated nodes serve it only when this is given (several nodes on one listener, each reporting an address 127.1.x.y of this host's loopback network).")
	f.StringVar(&s.address, "address", "0.0.0.0", "The IP address for the kubelet to serve on.")
	f.StringVar(&s.certFile, "tls-cert-file", "", "The kubelet's serving certificate (without it a self-signed one is made and kept in --cert-dir).")
	f.StringVar(&s.keyFile, "tls-private-key-file", "", "The key of --tls-cert-file.")
	f.StringVar(&s.certDir, "cert-dir", "", "The directory where the TLS certs are located: the self-signed serving certificate (default <root-dir>/pki for --runtime=remote; in memory for simulated nodes) and, with --bootstrap-kubeconfig, the client certificate kubelet-client-current.pem (default <root-dir>/pki).")
	f.StringVar(&s.clientCAFile, "client-ca-file", "", "The CA that client certificates (the API server's kubelet client) must be signed by (default: the kubeconfig's certificate authority, which is skiff's cluster CA).")
	f.BoolVar(&s.anonymous, "anonymous-auth", false, "Let requests without credentials in as system:anonymous.")
	f.StringVar(&s.authzMode, "authorization-mode", "Webhook", "Webhook (SubjectAccessReview through the API server) or AlwaysAllow.")
	f.BoolVar(&s.tokenWebhook, "authentication-token-webhook", true, "Authenticate bearer tokens with TokenReview through the API server.")
	f.IntVar(&s.healthzPort, "healthz-port", 10248, "The port of the unauthenticated plain-HTTP /healthz; 0 disables it.")
	f.StringVar(&s.healthzAddress, "healthz-bind-address", "127.0.0.1", "The IP address for the healthz server to serve on.")
}

// config is the server configuration of the flags; c reviews, cc's CA is
// the default client CA.
func (s *kubeletServing) config(c *client.Client, cc *client.Config) (*server.Config, error) {
	if (s.certFile == "") != (s.keyFile == "") {
		return nil, errors.New("--tls-cert-file and --tls-private-key-file go together")
	}
	sc := &server.Config{Address: s.address, Port: s.port, TLSCertFile: s.certFile, TLSKeyFile: s.keyFile, CertDirectory: s.certDir, Anonymous: s.anonymous}
	if s.healthzPort != 0 {
		sc.HealthzAddress = net.JoinHostPort(s.healthzAddress, strconv.Itoa(s.healthzPort))
	}
	caPEM := cc.CAData
	if s.clientCAFile != "" || len(caPEM) == 0 && cc.CAFile != "" {
		path := s.clientCAFile
		if path == "" {
			path = cc.CAFile
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		caPEM = data
	}
	if len(caPEM) > 0 {
		sc.ClientCA = x509.NewCertPool()
		if !sc.ClientCA.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("--client-ca-file: no certificates")
		}
	}
	wh := server.NewWebhook(c, nil)
	if s.tokenWebhook {
		sc.Authenticator = wh
	}
	switch s.authzMode {
	case "Webhook":
		sc.Authorizer = wh
	case "AlwaysAllow":
	default:
		return nil, fmt.Errorf("--authorization-mode=%s: must be Webhook or AlwaysAllow", s.authzMode)
	}
	return sc, nil
}

// evictionFlags are upstream's node-pressure eviction flags (--runtime=remote).
type evictionFlags struct {
	hard, soft, softGrace, minReclaim string
	transition                        time.Duration
	maxPodGrace                       int64
}

func (e *evictionFlags) addFlags(f *pflag.FlagSet) {
	f.StringVar(&e.hard, "eviction-hard", "imagefs.available<15%,imagefs.inodesFree<5%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%",
		"Hard eviction thresholds (e.g. memory.available<1Gi): a pod is evicted at once when one is met (--runtime=remote; empty: none).")
	f.StringVar(&e.soft, "eviction-soft", "", "Soft eviction thresholds (e.g. memory.available<1.5Gi), met for their grace period before a pod is evicted.")
	f.StringVar(&e.softGrace, "eviction-soft-grace-period", "", "Grace periods of the soft thresholds (e.g. memory.available=1m30s).")
	f.StringVar(&e.minReclaim, "eviction-minimum-reclaim", "", "Minimum reclaims (e.g. imagefs.available=2Gi): how far above a met threshold the signal must get back.")
	f.DurationVar(&e.transition, "eviction-pressure-transition-period", 5*time.Minute, "How long the kubelet waits before a node pressure condition goes back to False.")
	f.Int64Var(&e.maxPodGrace, "eviction-max-pod-grace-period", 0, "Most grace period (seconds) a pod evicted for a soft threshold gets.")
}

// thresholds parses the flags (upstream's defaults when none is given).
func (e *evictionFlags) thresholds(f *pflag.FlagSet) ([]eviction.Threshold, error) {
	if !f.Changed("eviction-hard") && !f.Changed("eviction-soft") {
		return nil, nil // the kubelet's defaults
	}
	maps := make([]map[string]string, 4)
	for i, v := range []string{e.hard, e.soft} {
		m, err := eviction.ParseLangleMap(v)
		if err != nil {
			return nil, fmt.Errorf("--eviction-hard/--eviction-soft: %w", err)
		}
		maps[i] = m
	}
	for i, v := range []string{e.softGrace, e.minReclaim} {
		m, err := eviction.ParseEqualsMap(v)
		if err != nil {
			return nil, fmt.Errorf("--eviction-soft-grace-period/--eviction-minimum-reclaim: %w", err)
		}
		maps[2+i] = m
	}
	th, err := eviction.ParseThresholds(maps[0], maps[1], maps[2], maps[3])
	if err != nil {
		return nil, err
	}
	if th == nil {
		th = []eviction.Threshold{} // none: no eviction
	}
	return th, nil
}
