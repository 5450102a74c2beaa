package standalone

import (
	"context"
	"errors"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/remote"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
)

// DefaultEndpoint is upstream's default CRI endpoint (the machine's
// containerd).
const DefaultEndpoint = "unix:///run/containerd/containerd.sock"

// Config configures one node on a CRI runtime.
type Config struct {
	Client *client.Client
	// Endpoint is the CRI socket ("unix:///path" or a path; default
	// DefaultEndpoint).
	Endpoint string
	// DialTimeout bounds connecting to the runtime (default 10 s).
	DialTimeout time.Duration
	// RuntimeRequestTimeout bounds each runtime call but image pulls
	// (default remote.DefaultTimeout, 2 min).
	RuntimeRequestTimeout time.Duration
	// Kubelet is the kubelet's configuration; its Client, Runtime, Images,
	// Logger and (when Events) Recorder are filled in.
	Kubelet kubelet.Config
	// Events: record upstream's pod events (source kubelet/<node>).
	Events bool
	Clock  clock.Clock
	Logger *slog.Logger
	// Server, when set, serves the kubelet's HTTPS API
	// (pkg/kubelet/server) with this configuration while the kubelet
	// runs: NodeName, Host, Runtime, Images, Clock and Logger are filled
	// in; the port it serves (Port, or Listener's) is the one the node
	// reports. A server that cannot serve (the port taken) stops the
	// kubelet with its error.
	Server *server.Config
}

// Run connects to the runtime and runs the kubelet until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Client == nil || cfg.Kubelet.NodeName == "" {
		return errors.New("standalone: Client and Kubelet.NodeName are required")
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultEndpoint
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	rt, err := remote.Dial(dctx, cfg.Endpoint, remote.WithTimeout(cfg.RuntimeRequestTimeout))
	cancel()
	if err != nil {
		return err
	}
	defer rt.Close()
	kc := cfg.Kubelet
	kc.Client, kc.Runtime, kc.Images, kc.Clock, kc.Logger = cfg.Client, rt, rt, cfg.Clock, cfg.Logger
	if kc.Machine == nil {
		kc.Machine = kubelet.HostMachine{RootDir: kc.RootDir} // garbage collection and eviction read the host
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if cfg.Events {
		b := record.NewBroadcaster(record.WithContext(ctx), record.WithClock(cfg.Clock), record.WithLogger(cfg.Logger))
		b.StartRecordingToSink(record.NewClientSink(cfg.Client))
		defer b.Shutdown()
		kc.Recorder = b.NewRecorder(corev1.EventSource{Component: "kubelet", Host: kc.NodeName})
	}
	if cfg.Server != nil {
		kc.KubeletPort = server.PortOf(cfg.Server)
	}
	k, err := kubelet.New(kc)
	if err != nil {
		return err
	}
	cfg.Logger.Info("kubelet running on a CRI runtime", "node", kc.NodeName, "endpoint", cfg.Endpoint)
	if cfg.Server == nil {
		return k.Run(ctx)
	}
	sc := *cfg.Server
	sc.NodeName, sc.Host, sc.Runtime, sc.Images, sc.Clock, sc.Logger = kc.NodeName, k, rt, rt, cfg.Clock, cfg.Logger
	if sc.SystemLogDir == "" {
		sc.SystemLogDir = "/var/log" // upstream's enableSystemLogHandler
	}
	if sc.NodeStats == nil {
		// The node's own usage, not only its pods' (what metrics-server
		// and kubectl top nodes read).
		sc.NodeStats = server.MachineStats(kubelet.HostMachine{RootDir: kc.RootDir}, cfg.Clock)
	}
	return server.RunAlongside(ctx, sc, k.Run)
}
