package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-sh/skiff/pkg/controllermanager"
)

// newControllerManager maps upstream's kube-controller-manager flags onto
// controllermanager.Config.
func newControllerManager(logger func() *slog.Logger) *cobra.Command {
	cfg := controllermanager.DefaultConfig()
	table := controllermanager.Controllers()
	workers := map[string]*int{}
	var terminatedPodGCThreshold int
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run the controller manager (skiff's kube-controller-manager) against an API server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = logger()
			cfg.TerminatedPodGCThreshold = terminatedPodGCThreshold
			// A rate of 0 is upstream's "never"; the Config's 0 is the default.
			for _, r := range []*float64{&cfg.NodeLifecycle.NodeEvictionRate, &cfg.NodeLifecycle.SecondaryNodeEvictionRate} {
				if *r == 0 {
					*r = -1
				}
			}
			if terminatedPodGCThreshold <= 0 {
				cfg.TerminatedPodGCThreshold = -1 // off
			}
			cfg.ConcurrentSyncs = map[string]int{}
			for name, n := range workers {
				if f := cmd.Flags().Lookup(flagOf(table, name)); f != nil && f.Changed {
					cfg.ConcurrentSyncs[name] = *n
				}
			}
			m, err := controllermanager.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			err = m.Run(ctx)
			if errors.Is(err, controllermanager.ErrLeaderElectionLost) {
				return fmt.Errorf("%w (exiting, as upstream: restart to campaign again)", err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "path to a kubeconfig file with the API server's address and credentials")
	var all, off []string
	for _, d := range table {
		all = append(all, d.Name)
		if d.DisabledByDefault {
			off = append(off, d.Name)
		}
	}
	f.StringSliceVar(&cfg.Controllers, "controllers", cfg.Controllers, "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.\nAll controllers: "+
		strings.Join(all, ", ")+"\nDisabled-by-default controllers: "+strings.Join(off, ", "))
	for _, d := range table {
		if d.WorkersFlag == "" {
			continue
		}
		n := new(int)
		workers[d.Name] = n
		f.IntVar(n, d.WorkersFlag, d.DefaultWorkers, fmt.Sprintf("The number of %s workers that are allowed to sync concurrently. Larger number = more responsive, but more CPU (and network) load", strings.TrimSuffix(d.Name, "-controller")))
	}
	f.Float32Var(&cfg.KubeAPIQPS, "kube-api-qps", cfg.KubeAPIQPS, "QPS to use while talking with kubernetes apiserver (negative: no client-side throttling)")
	f.IntVar(&cfg.KubeAPIBurst, "kube-api-burst", cfg.KubeAPIBurst, "Burst to use while talking with kubernetes apiserver")
	f.StringVar(&cfg.KubeAPIContentType, "kube-api-content-type", cfg.KubeAPIContentType, "Content type of requests sent to apiserver")
	le := &cfg.LeaderElection
	f.BoolVar(&le.LeaderElect, "leader-elect", le.LeaderElect, "Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability")
	f.DurationVar(&le.LeaseDuration, "leader-elect-lease-duration", le.LeaseDuration, "The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot")
	f.DurationVar(&le.RenewDeadline, "leader-elect-renew-deadline", le.RenewDeadline, "The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration")
	f.DurationVar(&le.RetryPeriod, "leader-elect-retry-period", le.RetryPeriod, "The duration the clients should wait between attempting acquisition and renewal of a leadership")
	f.StringVar(&le.ResourceLock, "leader-elect-resource-lock", le.ResourceLock, "The type of resource object that is used for locking during leader election (only 'leases')")
	f.StringVar(&le.ResourceNamespace, "leader-elect-resource-namespace", le.ResourceNamespace, "The namespace of resource object that is used for locking during leader election")
	f.StringVar(&le.ResourceName, "leader-elect-resource-name", le.ResourceName, "The name of resource object that is used for locking during leader election")
	f.IntVar(&cfg.SecurePort, "secure-port", cfg.SecurePort, "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all")
	f.StringVar(&cfg.BindAddress, "bind-address", cfg.BindAddress, "The IP address on which to listen for the --secure-port port")
	f.StringVar(&cfg.TLSCertFile, "tls-cert-file", "", "File containing the default x509 Certificate for HTTPS (without it a self-signed certificate is generated)")
	f.StringVar(&cfg.TLSKeyFile, "tls-private-key-file", "", "File containing the default x509 private key matching --tls-cert-file")
	f.StringVar(&cfg.AuthenticationKubeconfig, "authentication-kubeconfig", "", "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create tokenreviews.authentication.k8s.io and to look up the client CA in kube-system/extension-apiserver-authentication (without it, client certificates and tokens are not accepted on --secure-port)")
	f.StringVar(&cfg.AuthorizationKubeconfig, "authorization-kubeconfig", "", "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io (without it, only --authorization-always-allow-paths and system:masters are allowed)")
	f.StringVar(&cfg.ClientCAFile, "client-ca-file", "", "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate")
	f.StringSliceVar(&cfg.AuthorizationAlwaysAllowPaths, "authorization-always-allow-paths", []string{"/healthz", "/readyz", "/livez"}, "A list of HTTP paths to skip during authorization")
	f.BoolVar(&cfg.Profiling, "profiling", cfg.Profiling, "Enable profiling via web interface host:port/debug/pprof/")
	f.DurationVar(&cfg.MinResyncPeriod, "min-resync-period", cfg.MinResyncPeriod, "The resync period in reflectors will be random between MinResyncPeriod and 2*MinResyncPeriod")
	addMiscControllerFlags(f, &cfg)
	addNetworkControllerFlags(f, &cfg)
	f.IntVar(&terminatedPodGCThreshold, "terminated-pod-gc-threshold", 12500, "Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.")
	f.DurationVar(&cfg.NodeLifecycle.NodeMonitorPeriod, "node-monitor-period", 5*time.Second, "The period for syncing NodeStatus in cloud-node-lifecycle-controller.")
	f.DurationVar(&cfg.NodeLifecycle.NodeMonitorGracePeriod, "node-monitor-grace-period", 50*time.Second, "Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet to post node status.")
	f.DurationVar(&cfg.NodeLifecycle.NodeStartupGracePeriod, "node-startup-grace-period", time.Minute, "Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.")
	f.Float64Var(&cfg.NodeLifecycle.NodeEvictionRate, "node-eviction-rate", 0.1, "Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters.")
	f.Float64Var(&cfg.NodeLifecycle.SecondaryNodeEvictionRate, "secondary-node-eviction-rate", 0.01, "Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than --large-cluster-size-threshold.")
	f.IntVar(&cfg.NodeLifecycle.LargeClusterSizeThreshold, "large-cluster-size-threshold", 50, "Number of nodes from which node-lifecycle-controller treats the cluster as large for the eviction logic purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller.")
	f.Float64Var(&cfg.NodeLifecycle.UnhealthyZoneThreshold, "unhealthy-zone-threshold", 0.55, "Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy.")
	f.StringVar(&cfg.RootCAFile, "root-ca-file", "", "If set, this root certificate authority will be included in service account's token secret and the kube-root-ca.crt ConfigMap (default: the kubeconfig's CA)")
	f.DurationVar(&cfg.PVClaimBinderSyncPeriod, "pvclaimbinder-sync-period", 15*time.Second, "The period for syncing persistent volumes and persistent volume claims")
	f.StringVar(&cfg.LocalPath.StorageDir, "local-path-storage-dir", "", "skiff-local-path-provisioner: the directory holding the volumes on the nodes (default /var/lib/skiff/storage)")
	f.BoolVar(&cfg.LocalPath.ManageDirectories, "local-path-manage-directories", false, "skiff-local-path-provisioner: the nodes' file system is this host's: create volume directories when provisioning and remove them when deleting")
	return cmd
}

func flagOf(table []controllermanager.Descriptor, name string) string {
	for _, d := range table {
		if d.Name == name {
			return d.WorkersFlag
		}
	}
	return ""
}
