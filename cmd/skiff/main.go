package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	"github.com/skiff-sh/skiff/pkg/cluster"
)

func main() {
	root, prof := newRoot(), &profileFlags{}
	prof.add(root)
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return prof.start() }
	err := root.Execute()
	if perr := prof.stop(); perr != nil {
		fmt.Fprintln(os.Stderr, "skiff: writing the profile:", perr)
	}
	if err != nil {
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "skiff",
		Short:         "skiff is a compact Kubernetes-compatible control plane in one binary",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	var verbosity int
	root.PersistentFlags().IntVarP(&verbosity, "v", "v", 0, "log verbosity (0 = warnings, 1 = info, 2+ = debug)")
	logger := func() *slog.Logger {
		level := slog.LevelWarn
		switch {
		case verbosity >= 2:
			level = slog.LevelDebug
		case verbosity == 1:
			level = slog.LevelInfo
		}
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	root.AddCommand(newUp(logger), newAPIServer(logger), newControllerManager(logger), newScheduler(logger), newKubelet(logger), newImage(), newToken(), newBench(), newVersion())
	return root
}

// signalContext ends on SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func defaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ".skiff"
	}
	return filepath.Join(home, ".skiff")
}

func newUp(logger func() *slog.Logger) *cobra.Command {
	cfg := cluster.UpConfig{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run a whole cluster (storage and API server) in this process",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Out, cfg.Logger = cmd.OutOrStdout(), logger()
			up, err := cluster.NewUp(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			return up.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", defaultDataDir(), "directory for the cluster's data (etcd, certificates, kubeconfig)")
	f.StringVar(&cfg.Storage, "storage", "etcd", "storage backend: etcd (embedded, persistent) or memory (nothing persisted)")
	f.StringVar(&cfg.BindAddress, "bind-address", "127.0.0.1", "address the API server listens on")
	f.IntVar(&cfg.SecurePort, "secure-port", 6443, "port the API server serves HTTPS on")
	f.StringVar(&cfg.AdvertiseAddress, "advertise-address", "", "address clients reach the API server at (default: the bind address)")
	f.StringVar(&cfg.TokenAuthFile, "token-auth-file", "", "static bearer tokens, CSV: token,user,uid[,\"group1,group2\"]")
	f.BoolVar(&cfg.EnableBootstrapTokenAuth, "enable-bootstrap-token-auth", true, "accept bootstrap tokens (Secrets kube-system/bootstrap-token-<id>, made by skiff token create) as bearer tokens, as kubeadm sets it; nodes join with them (kubelet TLS bootstrap)")
	f.StringVar(&cfg.AuthorizationMode, "authorization-mode", cluster.DefaultAuthorizationMode, "ordered comma-separated list of authorization modes: "+strings.Join(authorizer.Modes, ", "))
	f.BoolVar(&cfg.AnonymousAuth, "anonymous-auth", true, "requests without credentials are system:anonymous (group system:unauthenticated), then authorized; off with AlwaysAllow")
	f.BoolVar(&cfg.Profiling, "profiling", true, "Enable profiling via web interface host:port/debug/pprof/")
	f.IntVar(&cfg.ControllerManagerSecurePort, "controller-manager-secure-port", 0, "serve the controller manager's /healthz and /metrics over HTTPS on 127.0.0.1 at this port (upstream's: 10257); 0 does not serve them")
	f.IntVar(&cfg.SchedulerSecurePort, "scheduler-secure-port", 0, "serve the scheduler's /healthz and /metrics over HTTPS on 127.0.0.1 at this port (upstream's: 10259); 0 does not serve them")
	f.StringSliceVar(&cfg.EnableAdmissionPlugins, "enable-admission-plugins", nil, "admission plugins to enable besides the default ones ("+admissionDefaults()+"), comma separated; they run in upstream's order whatever the order given")
	f.StringSliceVar(&cfg.DisableAdmissionPlugins, "disable-admission-plugins", nil, "admission plugins to disable although on by default, comma separated")
	f.StringVar(&cfg.ClusterCIDR, "cluster-cidr", cluster.DefaultClusterCIDR, "the pod network: each node gets a /--node-cidr-mask-size of it as spec.podCIDR (node IPAM); one CIDR, or an IPv4 and an IPv6 one comma separated")
	f.StringVar(&cfg.ContainerRuntime, "container-runtime", "", "what the node runs pods on: containerd (started and supervised under <data-dir>/containerd) or sim (simulated: pods get IPs and run, no container does); default containerd when it is installed, else sim")
	f.StringVar(&cfg.ContainerRuntimeEndpoint, "container-runtime-endpoint", "", "a CRI runtime already running for the node to use (unix:///path), instead of starting containerd")
	f.IntVar(&cfg.KubeletPort, "kubelet-port", 0, "port of the node's kubelet HTTPS API (default 10250, or a free one when 10250 is in use)")
	f.IntVar(&cfg.NodeCIDRMaskSize, "node-cidr-mask-size", 0, "size of each node's pod CIDR (default 24 for IPv4, 64 for IPv6)")
	f.StringSliceVar(&cfg.Disable, "disable", nil, "components to leave out, comma separated ("+strings.Join(cluster.Components, ", ")+"), e.g. to run upstream's in their place")
	return cmd
}

func newAPIServer(logger func() *slog.Logger) *cobra.Command {
	cfg := cluster.APIServerConfig{}
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run the API server alone, on an external etcd cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = logger()
			ctx, stop := signalContext()
			defer stop()
			return cluster.RunAPIServer(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.EtcdServers, "etcd-servers", nil, "etcd endpoints (comma separated URLs)")
	f.StringVar(&cfg.Storage, "storage", "etcd", "storage backend: etcd (--etcd-servers) or memory")
	f.StringVar(&cfg.BindAddress, "bind-address", "0.0.0.0", "address to listen on")
	f.IntVar(&cfg.SecurePort, "secure-port", 6443, "HTTPS port")
	f.StringVar(&cfg.AdvertiseAddress, "advertise-address", "", "address published in the kubernetes service")
	f.StringVar(&cfg.TLSCertFile, "tls-cert-file", "", "serving certificate (PEM)")
	f.StringVar(&cfg.TLSKeyFile, "tls-private-key-file", "", "serving key (PEM)")
	f.StringVar(&cfg.ClientCAFile, "client-ca-file", "", "CA that signs client certificates")
	f.StringVar(&cfg.TokenAuthFile, "token-auth-file", "", "static bearer tokens, CSV: token,user,uid[,\"group1,group2\"]")
	f.BoolVar(&cfg.EnableBootstrapTokenAuth, "enable-bootstrap-token-auth", false, "accept bootstrap tokens (Secrets kube-system/bootstrap-token-<id>) as bearer tokens, for kubelet TLS bootstrapping")
	f.StringVar(&cfg.AuthorizationMode, "authorization-mode", cluster.DefaultAuthorizationMode, "ordered comma-separated list of authorization modes: "+strings.Join(authorizer.Modes, ", "))
	f.BoolVar(&cfg.AnonymousAuth, "anonymous-auth", true, "requests without credentials are system:anonymous (group system:unauthenticated), then authorized; off with AlwaysAllow")
	f.BoolVar(&cfg.Profiling, "profiling", true, "Enable profiling via web interface host:port/debug/pprof/")
	f.StringVar(&cfg.ServiceAccountSigningKeyFile, "service-account-signing-key-file", "", "ECDSA P-256 key (PEM) that signs service account tokens; enables TokenRequest and token authentication")
	f.StringSliceVar(&cfg.EnableAdmissionPlugins, "enable-admission-plugins", nil, "admission plugins to enable besides the default ones ("+admissionDefaults()+"), comma separated; they run in upstream's order whatever the order given")
	f.StringSliceVar(&cfg.DisableAdmissionPlugins, "disable-admission-plugins", nil, "admission plugins to disable although on by default, comma separated")
	f.StringVar(&cfg.ServiceAccountIssuer, "service-account-issuer", "", "issuer and audience of service account tokens (default https://kubernetes.default.svc.cluster.local)")
	f.StringVar(&cfg.ProxyClientCertFile, "proxy-client-cert-file", "", "client certificate the API server presents to aggregated API servers")
	f.StringVar(&cfg.ProxyClientKeyFile, "proxy-client-key-file", "", "key of --proxy-client-cert-file")
	f.StringVar(&cfg.RequestHeaderClientCAFile, "requestheader-client-ca-file", "", "CA of --proxy-client-cert-file, published for aggregated API servers")
	f.StringSliceVar(&cfg.RequestHeaderAllowedNames, "requestheader-allowed-names", nil, "common names aggregated API servers accept on --proxy-client-cert-file (empty: any)")
	f.StringVar(&cfg.KubeletClientCertificate, "kubelet-client-certificate", "", "client certificate the API server presents to kubelets (logs, exec, attach, port-forward, nodes/proxy)")
	f.StringVar(&cfg.KubeletClientKey, "kubelet-client-key", "", "key of --kubelet-client-certificate")
	f.StringVar(&cfg.KubeletCertificateAuthority, "kubelet-certificate-authority", "", "CA that kubelets' serving certificates must be signed by (unset: not verified)")
	f.StringSliceVar(&cfg.KubeletPreferredAddressTypes, "kubelet-preferred-address-types", []string{"InternalIP", "ExternalIP", "Hostname"}, "the order of node address types to reach a kubelet by")
	return cmd
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the skiff version and the Kubernetes version it serves",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			v := apiserver.VersionInfo()
			fmt.Fprintf(cmd.OutOrStdout(), "skiff %s (Kubernetes API %s, %s, %s)\n", skiffVersion, v.GitVersion, v.GoVersion, v.Platform)
		},
	}
}

// skiffVersion is set at build time with -ldflags "-X main.skiffVersion=...".
var skiffVersion = "dev"

// admissionDefaults lists upstream's default-on admission plugins.
func admissionDefaults() string {
	names, _ := admission.EnabledPlugins(nil, nil)
	return strings.Join(names, ", ")
}
