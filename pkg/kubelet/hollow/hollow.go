package hollow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
)

// LabelRuntime marks simulated nodes (value "sim").
const LabelRuntime = "skiff.sh/runtime"

// MaxNodes is how many nodes the address plan allows.
const MaxNodes = 64 * 256

// Config configures a set of hollow nodes.
type Config struct {
	Client *client.Client
	// Nodes is how many (default 1).
	Nodes int
	// NamePrefix names node i <NamePrefix><i> (default "sim-node-").
	NamePrefix string
	// Name, for a single node, is its name instead.
	Name string
	// Sim is the template of each node's runtime (Clock and PodSubnet are
	// set per node).
	Sim      sim.Config
	Capacity corev1.ResourceList
	// Labels are added to every node (besides skiff.sh/runtime=sim).
	Labels map[string]string
	// Events: record upstream's pod events (through one broadcaster for
	// all nodes, source kubelet/<node>).
	Events bool
	Clock  clock.Clock
	Logger *slog.Logger
	// Server serves the nodes' kubelet HTTPS APIs (pkg/kubelet/server;
	// NodeName, Host, Runtime, Images, Clock and Logger filled in):
	// /healthz, /pods, stats and metrics from the simulated runtime, empty
	// container logs (simulated containers print nothing),
	// exec/attach/port-forward refused as the runtime does not support
	// them. A single node reports NodeIP (default 127.0.0.1); many nodes
	// share one listener (Address should then be unspecified) and report
	// LoopbackIP(i), by which the listener tells them apart.
	Server *server.Config
	NodeIP string
}

// NodeName is the name of node i.
func (c Config) NodeName(i int) string {
	if c.Nodes <= 1 && c.Name != "" {
		return c.Name
	}
	prefix := c.NamePrefix
	if prefix == "" {
		prefix = "sim-node-"
	}
	return fmt.Sprintf("%s%d", prefix, i)
}

// NodeIP is node i's InternalIP.
func NodeIP(i int) string {
	n := i + 1
	return netip.AddrFrom4([4]byte{10, 255, byte(n / 256), byte(n % 256)}).String()
}

// LoopbackIP is node i's InternalIP when the nodes serve their kubelet
// APIs on one shared listener: an address of this host's loopback network
// (127.1.<(i+1)/256>.<(i+1)%256>), which tells the listener the node.
func LoopbackIP(i int) string {
	n := i + 1
	return netip.AddrFrom4([4]byte{127, 1, byte(n / 256), byte(n % 256)}).String()
}

// PodSubnet is node i's pod subnet.
func PodSubnet(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(64 + i/256), byte(i % 256), 0}), 24)
}

// Run runs the nodes until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Client == nil {
		return errors.New("hollow: Client is required")
	}
	if cfg.Nodes <= 0 {
		cfg.Nodes = 1
	}
	if cfg.Nodes > MaxNodes {
		return fmt.Errorf("hollow: at most %d nodes", MaxNodes)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	selector := "spec.nodeName!="
	if cfg.Nodes == 1 {
		selector = "spec.nodeName=" + cfg.NodeName(0)
	}
	source := kubelet.NewInformerPodSource(cfg.Client, selector)
	services := cache.NewTypedInformer(client.For[*corev1.Service, *corev1.ServiceList](cfg.Client), nil, cache.SharedIndexInformerOptions{})
	labels := map[string]string{LabelRuntime: "sim"}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var broadcaster record.EventBroadcaster
	if cfg.Events {
		broadcaster = record.NewBroadcaster(record.WithContext(ctx), record.WithClock(cfg.Clock), record.WithLogger(cfg.Logger))
		broadcaster.StartRecordingToSink(record.NewClientSink(cfg.Client))
		defer broadcaster.Shutdown()
	}
	var shared *server.Shared
	if cfg.Server != nil && cfg.Nodes > 1 {
		shared = &server.Shared{}
	}
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Nodes)
	// The nodes share their runtimes' annotations and their work's
	// goroutines.
	annotations, pool := sim.NewAnnotationTable(), kubelet.NewWorkPool()
	for i := 0; i < cfg.Nodes; i++ {
		sc := cfg.Sim
		sc.Clock, sc.PodSubnet, sc.Annotations = cfg.Clock, PodSubnet(i), annotations
		rt := sim.New(sc)
		var rec record.EventRecorder
		if broadcaster != nil {
			rec = broadcaster.NewRecorder(corev1.EventSource{Component: "kubelet", Host: cfg.NodeName(i)})
		}
		kc := kubelet.Config{Client: cfg.Client, NodeName: cfg.NodeName(i), WorkPool: pool, Runtime: rt, Images: rt,
			Clock: cfg.Clock, Logger: cfg.Logger, NodeLabels: labels, Capacity: cfg.Capacity, NodeIP: NodeIP(i), PodSource: source,
			Recorder: rec, SimulateHandlers: true, Services: services}
		if cfg.Server != nil {
			kc.NodeIP, kc.KubeletPort = cfg.NodeIP, server.PortOf(cfg.Server)
			switch {
			case shared != nil:
				kc.NodeIP = LoopbackIP(i)
			case kc.NodeIP == "":
				kc.NodeIP = "127.0.0.1"
			}
		}
		k, err := kubelet.New(kc)
		if err != nil {
			return err
		}
		run := k.Run
		if cfg.Server != nil {
			sc := *cfg.Server
			sc.NodeName, sc.Host, sc.Runtime, sc.Images, sc.Clock, sc.Logger = kc.NodeName, k, rt, rt, cfg.Clock, cfg.Logger
			if shared == nil {
				run = func(ctx context.Context) error { return server.RunAlongside(ctx, sc, k.Run) }
			} else {
				srv, err := server.New(sc)
				if err != nil {
					return err
				}
				shared.Add(kc.NodeIP, srv)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	if shared != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := shared.Run(ctx); err != nil {
				errs <- fmt.Errorf("kubelet server: %w", err)
				cancel()
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); source.Run(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); services.Run(ctx) }()
	cfg.Logger.Info("hollow nodes running", "nodes", cfg.Nodes, "first", cfg.NodeName(0), "runtime", sim.RuntimeName)
	<-ctx.Done()
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}
