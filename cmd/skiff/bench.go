package main

import (
	"github.com/spf13/cobra"

	"github.com/skiff-sh/skiff/pkg/bench"
)

func newBench() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure skiff components from the client side",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newBenchAPIServer())
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
