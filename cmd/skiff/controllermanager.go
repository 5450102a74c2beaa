package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
)

// newControllerManager maps upstream's kube-controller-manager flags onto
// controllermanager.Config.
func newControllerManager(logger func() *slog.Logger) *cobra.Command {
	cfg := controllermanager.DefaultConfig()
	table := controllermanager.Controllers()
	workers := map[string]*int{}
	var terminatedPodGCThreshold, gogc int
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run the controller manager (skiff's kube-controller-manager) against an API server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logger = logger()
			if cmd.Flags().Changed("gogc") || os.Getenv("GOGC") == "" {
				debug.SetGCPercent(gogc)
			}
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
	f.BoolVar(&cfg.UseServiceAccountCredentials, "use-service-account-credentials", false, "If true, use individual service account credentials for each controller.")
	component.AddLeaderElectionFlags(f, &cfg.LeaderElection)
	component.AddServingFlags(f, &cfg.Serving)
	f.DurationVar(&cfg.MinResyncPeriod, "min-resync-period", cfg.MinResyncPeriod, "The resync period in reflectors will be random between MinResyncPeriod and 2*MinResyncPeriod")
	addMiscControllerFlags(f, &cfg)
	addNetworkControllerFlags(f, &cfg)
	addNodeIPAMFlags(f, &cfg)
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
	f.IntVar(&gogc, "gogc", defaultGOGC, "skiff: the Go garbage collector's target percentage for this process, as the GOGC environment variable (which wins when set and this flag is not): the heap grows to (1 + gogc/100) × the live heap between collections, so lower takes less memory and more CPU (Go's default: 100); negative turns the collector off (bound the heap with GOMEMLIMIT then)")
	f.StringVar(&cfg.LocalPath.StorageDir, "local-path-storage-dir", "", "skiff-local-path-provisioner: the directory holding the volumes on the nodes (default /var/lib/skiff/storage)")
	f.BoolVar(&cfg.LocalPath.ManageDirectories, "local-path-manage-directories", false, "skiff-local-path-provisioner: the nodes' file system is this host's: create volume directories when provisioning and remove them when deleting")
	return cmd
}

// defaultGOGC trades garbage-collector CPU for memory: the pod cache is
// most of the manager's heap and changes slowly, so collecting at 1.5×
// the live heap instead of 2× costs little CPU (docs/benchmarks.md,
// "Controller manager").
const defaultGOGC = 50

func flagOf(table []controllermanager.Descriptor, name string) string {
	for _, d := range table {
		if d.Name == name {
			return d.WorkersFlag
		}
	}
	return ""
}
