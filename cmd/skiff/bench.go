package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/skiff-sh/skiff/pkg/bench"
)

func newBench() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure skiff components from the client side",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newBenchAPIServer(), newBenchControllers())
	return cmd
}

func newBenchAPIServer() *cobra.Command {
	cfg := bench.Config{}
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Start `skiff up` as a child process and measure start-up, creates, lists, watch fan-out and memory",
		Long: "Start `skiff up` as a child process on a temporary data directory and measure, over HTTPS with\n" +
			"the admin kubeconfig: cold start to /readyz (memory and embedded etcd), pod create throughput\n" +
			"and latency per client concurrency, list latency of all pods (consistent and from the watch\n" +
			"cache), watch fan-out, and the server's RSS. See docs/benchmarks.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Out, cfg.Progress = cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := signalContext()
			defer stop()
			_, err := bench.Run(ctx, cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Storage, "storage", "etcd", "storage of the server under test: etcd (embedded) or memory")
	f.IntVar(&cfg.Pods, "pods", 10000, "pods created in total across the create phases (a 1-client phase creates at most min(1000, pods/10))")
	f.IntSliceVar(&cfg.Clients, "clients", []int{1, 16, 64}, "concurrent clients of each create phase")
	f.IntVar(&cfg.Watchers, "watchers", 100, "concurrent watches in the watch fan-out")
	f.IntVar(&cfg.WatchEvents, "watch-events", 2000, "ConfigMaps created while the watchers watch")
	f.IntVar(&cfg.WatchWriters, "watch-writers", 4, "concurrent writers in the watch fan-out")
	f.IntVar(&cfg.StartRepeats, "start-repeats", 3, "cold starts timed per storage")
	f.IntVar(&cfg.ListRepeats, "list-repeats", 10, "timed lists per list variant")
	f.BoolVar(&cfg.JSON, "json", false, "print the report as JSON")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data directories and server logs")
	return cmd
}

func newBenchControllers() *cobra.Command {
	cfg := bench.ControllersConfig{}
	cmd := &cobra.Command{
		Use:   "controllers",
		Short: "Measure controller managers: pods/s for Deployments × replicas, and their memory",
		Long: "For each controller manager (skiff's `skiff controller-manager` and, when its binary is found,\n" +
			"upstream's kube-controller-manager), start a fresh `skiff up --storage=memory` with every skiff\n" +
			"component disabled, attach the manager (client throttling off: --kube-api-qps/--kube-api-burst),\n" +
			"create --deployments Deployments of --replicas replicas and time until every pod exists (pods/s),\n" +
			"then create more until --memory-pods pods exist and read the manager's resident memory.\n" +
			"See docs/benchmarks.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Out, cfg.Progress = cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := signalContext()
			defer stop()
			_, err := bench.RunControllers(ctx, cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Deployments, "deployments", 100, "Deployments created by the throughput phase")
	f.IntVar(&cfg.Replicas, "replicas", 100, "replicas of each Deployment")
	f.IntVar(&cfg.MemoryPods, "memory-pods", 50000, "pods at which the manager's memory is read again (negative: skip)")
	f.StringSliceVar(&cfg.Managers, "managers", nil, "managers to measure: skiff, upstream (default: both when upstream's binary is found)")
	f.StringVar(&cfg.UpstreamKCM, "upstream-kube-controller-manager", "", "upstream kube-controller-manager binary (default: ~/.cache/skiff-upstream-v1.34.4/kube-controller-manager, what ../shared/tools/build-upstream.sh builds)")
	f.Float64Var(&cfg.QPS, "kube-api-qps", 100000, "both managers' --kube-api-qps")
	f.IntVar(&cfg.Burst, "kube-api-burst", 100000, "both managers' --kube-api-burst")
	f.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "bound of each manager's run")
	f.BoolVar(&cfg.JSON, "json", false, "print the report as JSON")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data directories and logs")
	return cmd
}
