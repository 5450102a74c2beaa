package cluster

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/containerd"
	"github.com/skiff-sh/skiff/pkg/image"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/hollow"
	"github.com/skiff-sh/skiff/pkg/kubelet/remote"
	"github.com/skiff-sh/skiff/pkg/kubelet/server"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
	"github.com/skiff-sh/skiff/pkg/pki"
)

// The node of `skiff up` (component "kubelet"): one kubelet in the
// process, named after the host (lowercase, as upstream's kubelet names
// its node), with its own identity system:node:<name> in group
// system:nodes (a client certificate of the cluster CA, as kubeadm gives
// the kubelet), so that the Node authorizer and NodeRestriction admission
// (which Up enables, as kubeadm does) limit it to its own Node, Lease and
// the pods bound to it and what they reference. It serves the kubelet's
// HTTPS API (logs, exec, stats, metrics) on KubeletPort.
//
// Its runtime, in order: the CRI runtime at ContainerRuntimeEndpoint; a
// containerd skiff starts and supervises under <data-dir>/containerd
// (ContainerRuntime "containerd", or by default when containerd and runc
// are installed and skiff runs as root), with the pause image imported
// and the CNI network <data-dir>/cni/net.d/10-skiff.conflist written
// from the node's pod CIDR; else the simulated runtime.

// KubeletKubeconfigPath is where Up writes the node's kubeconfig (user
// system:node:<host>), for a `skiff kubelet` run beside
// `skiff up --disable=kubelet` on the same host.
func KubeletKubeconfigPath(dataDir string) string {
	return filepath.Join(dataDir, "kubelet.kubeconfig")
}

// KubeletDir is the kubelet's root directory under the data directory.
func KubeletDir(dataDir string) string { return filepath.Join(dataDir, "kubelet") }

// CNIConfPath is the node's CNI network configuration.
func CNIConfPath(dataDir string) string {
	return filepath.Join(dataDir, "cni", "net.d", "10-skiff.conflist")
}

// NodeName is the name of Up's node: the host name, lowercase.
func NodeName() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("node name: %w", err)
	}
	return strings.ToLower(h), nil
}

// nodePlan is what Up's node will run.
type nodePlan struct {
	name    string
	message string // said in Up's output
	run     func(context.Context) error
	// keepsContainers: the supervised containerd's containers outlive
	// skiff (said when it stops).
	keepsContainers bool
}

// kubeletQPS and kubeletBurst are upstream's kubelet --kube-api-qps and
// --kube-api-burst defaults.
const (
	kubeletQPS   = 50
	kubeletBurst = 100
)

// containerdUsable says why the machine's containerd cannot be used ("":
// it can).
func containerdUsable() string {
	if err := containerd.Available(); err != nil {
		return err.Error()
	}
	return ""
}

// planNode issues the node's certificate and kubeconfig and builds its
// kubelet and runtime.
func (u *Up) planNode(apiServer string, ca *pki.KeyPair, nodeIP string, now time.Time) (*nodePlan, error) {
	cfg := u.cfg
	name, err := NodeName()
	if err != nil {
		return nil, err
	}
	dir := KubeletDir(cfg.DataDir)
	cert, err := pki.EnsureClient(filepath.Join(dir, "pki"), "kubelet-client", ca, "system:node:"+name, []string{"system:nodes"}, now)
	if err != nil {
		return nil, fmt.Errorf("kubelet client certificate: %w", err)
	}
	if err := kubeconfig.Write(KubeletKubeconfigPath(cfg.DataDir), kubeconfig.New("skiff", apiServer, ca.CertPEM, cert.CertPEM, cert.KeyPEM)); err != nil {
		return nil, err
	}
	c, err := client.New(&client.Config{Host: apiServer, CAData: ca.CertPEM, CertData: cert.CertPEM, KeyData: cert.KeyPEM,
		QPS: kubeletQPS, Burst: kubeletBurst, UserAgent: "skiff-kubelet", ContentType: client.ContentTypeProtobuf})
	if err != nil {
		return nil, err
	}
	if nodeIP == "" {
		nodeIP = cfg.AdvertiseAddress
	}
	logger := cfg.Logger.With("component", "kubelet")

	// The kubelet's HTTPS API, on KubeletPort (upstream's 10250), or a
	// port the kernel chooses when the default one is taken.
	ln, portNote, err := kubeletListener(cfg.KubeletPort)
	if err != nil {
		return nil, err
	}
	clientCA := x509.NewCertPool()
	clientCA.AddCert(ca.Cert)
	wh := server.NewWebhook(c, cfg.Clock)
	srv := &server.Config{Listener: ln, CertDirectory: filepath.Join(dir, "pki"), ClientCA: clientCA, Authenticator: wh, Authorizer: wh}

	kc := kubelet.Config{Client: c, NodeName: name, NodeIP: nodeIP, Clock: cfg.Clock, Logger: logger, KubeletPort: server.PortOf(srv)}
	plan := &nodePlan{name: name}
	var (
		start   func(ctx context.Context) (cri.RuntimeService, cri.ImageService, func(), error)
		network bool // write the CNI network from the pod CIDR
	)
	why := ""
	switch {
	case cfg.ContainerRuntimeEndpoint != "":
		plan.message = fmt.Sprintf("The node %s runs pods on the CRI runtime at %s.", name, cfg.ContainerRuntimeEndpoint)
		start = func(ctx context.Context) (cri.RuntimeService, cri.ImageService, func(), error) {
			return dialRuntime(ctx, cfg.ContainerRuntimeEndpoint)
		}
	case cfg.ContainerRuntime == "containerd" || cfg.ContainerRuntime == "" && containerdUsable() == "":
		if cfg.ContainerRuntime == "containerd" {
			if why := containerdUsable(); why != "" {
				return nil, fmt.Errorf("--container-runtime=containerd: %s", why)
			}
		}
		// Containers keep running while skiff is stopped (as k3s's do) and
		// the kubelet finds them again, unless nothing is kept
		// (--storage=memory): then they go with the cluster.
		sup, err := containerd.New(containerd.Config{Dir: containerd.DirOf(cfg.DataDir), CNIConfDir: filepath.Dir(CNIConfPath(cfg.DataDir)),
			RemovePodsOnStop: cfg.Storage == "memory", Clock: cfg.Clock, Logger: cfg.Logger.With("component", "containerd")})
		if err != nil {
			return nil, err
		}
		network, plan.keepsContainers = true, cfg.Storage != "memory"
		plan.message = fmt.Sprintf("The node %s runs pods in real containers: skiff started containerd (socket %s, log %s), pod network %s (bridge cni0).",
			name, sup.Socket(), sup.Layout().Log, CNIConfPath(cfg.DataDir))
		start = func(ctx context.Context) (cri.RuntimeService, cri.ImageService, func(), error) {
			return startContainerd(ctx, sup, cfg.DataDir, logger)
		}
	default:
		why = containerdUsable()
		if cfg.ContainerRuntime == "sim" {
			why = "--container-runtime=sim"
		}
		// Its network waits for the node's pod CIDR (as a CNI network
		// does) when the in-process controller manager assigns one.
		rt := sim.New(sim.Config{WaitForPodCIDR: !u.disabled["controller-manager"], StopLatency: time.Second, RunDuration: 5 * time.Second})
		kc.NodeLabels = map[string]string{hollow.LabelRuntime: "sim"}
		kc.SimulateHandlers = true
		sims := fmt.Sprintf("the node %s runs a simulated runtime: pods are scheduled, get IPs and reach Running, but no container runs (the node is labelled %s=sim).", name, hollow.LabelRuntime)
		if cfg.ContainerRuntime == "sim" {
			plan.message = "--container-runtime=sim: " + sims
		} else {
			plan.message = "No container runtime found (" + why + "): " + sims
		}
		start = func(context.Context) (cri.RuntimeService, cri.ImageService, func(), error) {
			return rt, rt, func() {}, nil
		}
	}
	kc.RootDir = dir
	if why == "" { // a real runtime: volumes, logs and the machine's figures
		kc.PodLogDir, kc.Volumes = filepath.Join(cfg.DataDir, "pod-logs"), &volume.Config{}
		kc.Machine = kubelet.HostMachine{RootDir: dir}
		// The node's own usage (metrics-server, kubectl top nodes) and
		// the host's logs (nodes/log), as upstream's kubelet serves them.
		srv.NodeStats = server.MachineStats(kubelet.HostMachine{RootDir: dir}, cfg.Clock)
		srv.SystemLogDir = "/var/log"
	}
	if portNote != "" {
		plan.message += " " + portNote
	}
	plan.run = func(ctx context.Context) error {
		defer ln.Close()
		rt, images, stop, err := start(ctx)
		if err != nil {
			return err
		}
		defer stop()
		if network {
			rt = cniRuntime{RuntimeService: rt, dataDir: cfg.DataDir, logger: logger}
		}
		b := record.NewBroadcaster(record.WithContext(ctx), record.WithClock(cfg.Clock), record.WithLogger(logger))
		b.StartRecordingToSink(record.NewClientSink(c))
		defer b.Shutdown()
		kc := kc
		kc.Runtime, kc.Images = rt, images
		kc.Recorder = b.NewRecorder(corev1.EventSource{Component: "kubelet", Host: name})
		k, err := kubelet.New(kc)
		if err != nil {
			return err
		}
		sc := *srv
		sc.NodeName, sc.Host, sc.Runtime, sc.Images, sc.Clock, sc.Logger = name, k, rt, images, cfg.Clock, logger
		return server.RunAlongside(ctx, sc, k.Run)
	}
	return plan, nil
}

// kubeletListener listens on port (0: server.DefaultPort, and a port the
// kernel chooses when that one is in use, with a note saying so).
func kubeletListener(port int) (net.Listener, string, error) {
	explicit := port != 0
	if !explicit {
		port = int(server.DefaultPort)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("0.0.0.0", strconv.Itoa(port)))
	if err == nil || explicit || !errors.Is(err, syscall.EADDRINUSE) {
		if err != nil {
			return nil, "", fmt.Errorf("kubelet port: %w", err)
		}
		return ln, "", nil
	}
	if ln, err = net.Listen("tcp", "0.0.0.0:0"); err != nil {
		return nil, "", fmt.Errorf("kubelet port: %w", err)
	}
	return ln, fmt.Sprintf("(Port %d is in use: the kubelet serves on %d.)", port, ln.Addr().(*net.TCPAddr).Port), nil
}

// dialRuntime connects to a CRI runtime.
func dialRuntime(ctx context.Context, endpoint string) (cri.RuntimeService, cri.ImageService, func(), error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rt, err := remote.Dial(dctx, endpoint)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("container runtime: %w", err)
	}
	return rt, rt, func() { rt.Close() }, nil
}

// startContainerd starts the supervised containerd, imports the pause
// image and connects to it; stop waits for containerd to end (after ctx).
func startContainerd(ctx context.Context, sup *containerd.Supervisor, dataDir string, logger interface {
	Warn(string, ...any)
}) (cri.RuntimeService, cri.ImageService, func(), error) {
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	wait := func() {
		if err := <-done; err != nil {
			logger.Warn("containerd", "err", err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err := sup.WaitReady(wctx)
	cancel()
	if err == nil {
		err = importPause(ctx, sup, dataDir)
	}
	var rt *remote.Client
	if err == nil {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		rt, err = remote.Dial(dctx, sup.Endpoint())
		cancel()
	}
	if err != nil {
		if ctx.Err() == nil {
			// The supervisor runs until ctx ends: the cluster stops.
			return nil, nil, nil, fmt.Errorf("containerd: %w (see %s)", err, sup.Layout().Log)
		}
		wait()
		return nil, nil, nil, err
	}
	return rt, rt, func() { rt.Close(); wait() }, nil
}

// importPause writes the pause image skiff builds and imports it into the
// containerd (every start: an import of what is there changes nothing).
func importPause(ctx context.Context, sup *containerd.Supervisor, dataDir string) error {
	img, err := image.PauseImage(goruntime.GOARCH)
	if err != nil {
		return err
	}
	path := filepath.Join(containerd.DirOf(dataDir), "pause.tar")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := image.WriteDockerArchive(f, img); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = containerd.ImportImage(ctx, sup.Socket(), path)
	return err
}

// withNodeRestriction adds NodeRestriction to the enabled admission
// plugins (kubeadm enables it) unless it is disabled explicitly.
func withNodeRestriction(enable, disable []string) []string {
	if slices.Contains(enable, "NodeRestriction") || slices.Contains(disable, "NodeRestriction") {
		return enable
	}
	return append(slices.Clone(enable), "NodeRestriction")
}
