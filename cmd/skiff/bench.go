package main

import (
	"fmt"
	"os"
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
	cmd.AddCommand(newBenchAPIServer(), newBenchControllers(), newBenchScheduler(), newBenchKubelet())
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
	f.StringVar(&cfg.CreateAs, "create-as", "admin", "who creates the pods: admin (system:masters), serviceaccount (a token RBAC allows to create pods) or both (each phase twice, alternately, on one server); unless admin the server authorizes with --authorization-mode=Node,RBAC")
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

func newBenchScheduler() *cobra.Command {
	cfg := bench.SchedulerConfig{}
	var which, shape, extraConfig string
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Measure schedulers on upstream's scheduler_perf SchedulingBasic shape: pods/s, latency, memory",
		Long: "For each scheduler (skiff's `skiff scheduler`, upstream's kube-scheduler), start a fresh\n" +
			"`skiff up --storage=memory` with every skiff component disabled, create --nodes nodes (4 CPU, 32Gi,\n" +
			"110 pods, 3 zones) and --bound pods already bound, attach the scheduler as a child process (admin\n" +
			"kubeconfig, KubeSchedulerConfiguration with clientConnection qps/burst 5000, no leader election), then\n" +
			"create --pods pending pods and time until a watch saw all of them bound: pods/s (average and per-second\n" +
			"p50/p90/p99), per-pod latency from create to binding, the scheduler's own attempt and SLI histograms\n" +
			"from its /metrics, and its resident memory. --shape affinity puts a required pod affinity (zone) and a\n" +
			"zone spread constraint (maxSkew 1) on every pod. See docs/benchmarks.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch which {
			case "both":
				cfg.Schedulers = []string{"skiff", "upstream"}
			case "skiff", "upstream":
				cfg.Schedulers = []string{which}
			default:
				return fmt.Errorf("--scheduler must be skiff, upstream or both, not %q", which)
			}
			switch shape {
			case "all":
				cfg.Shapes = []string{bench.ShapeBasic, bench.ShapeAffinity}
			case bench.ShapeBasic, bench.ShapeAffinity:
				cfg.Shapes = []string{shape}
			default:
				return fmt.Errorf("--shape must be basic, affinity or all, not %q", shape)
			}
			if extraConfig != "" {
				b, err := os.ReadFile(extraConfig)
				if err != nil {
					return err
				}
				cfg.ExtraConfig = string(b)
			}
			cfg.Out, cfg.Progress = cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := signalContext()
			defer stop()
			_, err := bench.RunScheduler(ctx, cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&which, "scheduler", "both", "schedulers to measure, one after the other against a fresh API server each: skiff, upstream or both")
	f.StringVar(&shape, "shape", "basic", "workload shape: basic (SchedulingBasic), affinity (pod affinity + topology spread on every pod) or all")
	f.IntVar(&cfg.Nodes, "nodes", 5000, "nodes")
	f.IntVar(&cfg.Bound, "bound", 1000, "pods created already bound before the scheduler starts")
	f.IntVar(&cfg.Pods, "pods", 10000, "pending pods whose scheduling is timed")
	f.StringVar(&cfg.UpstreamScheduler, "upstream-scheduler", "", "upstream kube-scheduler binary (default: $KUBE_SCHEDULER, else ~/.cache/skiff-upstream-v1.34.4/kube-scheduler)")
	f.StringVar(&cfg.SkiffBinary, "skiff-binary", "", "skiff binary running the API server and `skiff scheduler` (default: this executable)")
	f.StringSliceVar(&cfg.SkiffArgs, "skiff-scheduler-args", bench.DefaultSkiffSchedulerArgs, "skiff scheduler's arguments after the binary; {kubeconfig}, {config} and {port} are replaced")
	f.StringSliceVar(&cfg.UpstreamArgs, "upstream-scheduler-args", bench.DefaultUpstreamSchedulerArgs, "kube-scheduler's arguments; {kubeconfig}, {config} and {port} are replaced")
	f.Float64Var(&cfg.QPS, "qps", 5000, "clientConnection.qps in both schedulers' configuration")
	f.IntVar(&cfg.Burst, "burst", 5000, "clientConnection.burst in both schedulers' configuration")
	f.StringVar(&extraConfig, "extra-config", "", "file of YAML appended to the KubeSchedulerConfiguration both schedulers get (e.g. profiles: disabling plugins one of them lacks)")
	f.IntVar(&cfg.Clients, "clients", 32, "concurrent clients creating nodes and pods")
	f.DurationVar(&cfg.Timeout, "timeout", 30*time.Minute, "bound of each scheduler's measured phase")
	f.BoolVar(&cfg.JSON, "json", false, "print the report as JSON")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data directories and logs")
	f.BoolVar(&cfg.Precreate, "precreate", false, "also measure each scheduler with every pending pod created before it starts (from its first binding to its last), reported beside the issue's runs")
	f.StringVar(&cfg.ProfileDir, "cpu-profile-dir", "", "write CPU profiles of the API server and the scheduler over the first --cpu-profile-seconds of each measured phase to this directory (<shape>-<scheduler>-{apiserver,scheduler}.pprof)")
	f.IntVar(&cfg.ProfileSeconds, "cpu-profile-seconds", 5, "length of the CPU profiles of --cpu-profile-dir")
	return cmd
}

func newBenchKubelet() *cobra.Command {
	cfg := bench.KubeletConfig{}
	cmd := &cobra.Command{
		Use:   "kubelet",
		Short: "Measure pod start-up on skiff's kubelet: pods/s to Running and created → Running latency, on simulated nodes or containerd",
		Long: "Start a control plane (`skiff up` with its components disabled, `skiff controller-manager` and `skiff scheduler`\n" +
			"as child processes with unthrottled clients), then the node agent as a child process:\n" +
			"  --runtime=sim (default): `skiff kubelet --runtime=sim --nodes=N --record-events=false` (hollow nodes);\n" +
			"  --runtime=containerd: one `skiff kubelet --container-runtime-endpoint` node on a containerd this command\n" +
			"  supervises (busybox image built from the host's static busybox and imported; skipped when containerd\n" +
			"  or runc is missing).\n" +
			"Once the nodes are Ready and a warm-up pod runs, --pods pods are created (as Deployments or bare pods) and a\n" +
			"watch records when each pod appears, is bound and is Running: pods/s to Running (first create → last Running),\n" +
			"start-up latency created → Running p50/p90/p99, time to 1000 and to all Running, and the resident memory of the\n" +
			"kubelet process and of the control plane's. --compare=kwok measures upstream's kwok on the same workload.\n" +
			"See docs/benchmarks.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Out, cfg.Progress = cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := signalContext()
			defer stop()
			_, err := bench.RunKubelet(ctx, cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Runtime, "runtime", "sim", "sim (hollow nodes, no containers) or containerd (one real node on a supervised containerd)")
	f.IntVar(&cfg.Nodes, "nodes", 1000, "simulated nodes (--runtime=sim)")
	f.IntVar(&cfg.Pods, "pods", 0, "pods timed (default: 10000 with --runtime=sim, 100 with containerd)")
	f.StringVar(&cfg.Workload, "workload", "", "deployments (pods made by the controller manager from Deployments of --replicas) or pods (bare pods created by the bench); default: deployments for sim, pods for containerd (as upstream's node density test)")
	f.IntVar(&cfg.Replicas, "replicas", 100, "replicas per Deployment (--workload=deployments)")
	f.StringVar(&cfg.Storage, "storage", "memory", "the API server's storage: memory or etcd (embedded)")
	f.StringSliceVar(&cfg.Compare, "compare", nil, "also measure these node agents on the same workload, each against a fresh control plane: kwok")
	f.StringVar(&cfg.Kwok, "kwok", "", "kwok binary (default: $KWOK, else ~/.cache/skiff-upstream-v1.34.4/kwok, what ../shared/tools/build-upstream.sh builds)")
	f.StringVar(&cfg.KwokStages, "kwok-stages", "", "YAML file of kwok Stages (default: kwokctl's defaults, node-initialize, node-heartbeat-with-lease and the pod fast stages, read from the Go module cache)")
	f.DurationVar(&cfg.SimStartLatency, "sim-start-latency", 0, "the hollow nodes' --sim-start-latency")
	f.StringSliceVar(&cfg.KubeletArgs, "kubelet-args", nil, "more arguments for `skiff kubelet`")
	f.IntVar(&cfg.Clients, "clients", 32, "concurrent clients creating pods or Deployments")
	f.DurationVar(&cfg.CreateInterval, "create-interval", 0, "create pod (or Deployment) i no earlier than i × this after the first (0: all at once), as the interval of upstream's node density test")
	f.Float64Var(&cfg.QPS, "kube-api-qps", 100000, "the controller manager's --kube-api-qps (the scheduler's clientConnection.qps: at most 5000)")
	f.IntVar(&cfg.Burst, "kube-api-burst", 100000, "the controller manager's --kube-api-burst (the scheduler's: at most 5000)")
	f.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "bound of the measured phase")
	f.StringVar(&cfg.Containerd, "containerd", "", "containerd binary (--runtime=containerd; default: containerd on PATH)")
	f.StringVar(&cfg.BusyboxPath, "busybox", "", "static busybox packed as the pods' image (--runtime=containerd; default /bin/busybox)")
	f.BoolVar(&cfg.JSON, "json", false, "print the report as JSON")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data directories and logs")
	f.StringVar(&cfg.CPUProfileDir, "cpu-profile-dir", "", "write CPU profiles of the whole run of each skiff child process to this directory (<agent>-{apiserver,controller-manager,scheduler,kubelet}.pprof)")
	return cmd
}
