package kubelet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/eviction"
	"github.com/skiff-sh/skiff/pkg/kubelet/gc"
	"github.com/skiff-sh/skiff/pkg/kubelet/prober"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
)

// Version is the kubelet version the node reports (the API server's).
const Version = "v1.37.2"

// Config configures a Kubelet.
type Config struct {
	Client   *client.Client
	NodeName string
	// WorkPool runs the pod workers' and node tasks' work (deep.go); the
	// hollow agent's nodes share one. Nil: a pool of the kubelet's own.
	WorkPool *WorkPool
	Runtime  cri.RuntimeService
	Images   cri.ImageService
	Clock    clock.Clock
	Logger   *slog.Logger
	// NodeLabels are added to the node's well-known labels.
	NodeLabels map[string]string
	// Capacity of the node; empty: what Config.Machine measures when it
	// can (HostMachine: CPUs, MemTotal, the root directory's filesystem,
	// 110 pods), else cpu 8, memory 32Gi, pods 110, ephemeral-storage
	// 100Gi (simulated nodes). Allocatable is capacity less Reserved and
	// the hard eviction thresholds of memory and nodefs, as upstream's.
	Capacity corev1.ResourceList
	// Reserved is subtracted from capacity for allocatable (upstream's
	// --kube-reserved plus --system-reserved).
	Reserved corev1.ResourceList
	// NodeIP is the node's InternalIP (default 127.0.0.1).
	NodeIP string
	// KubeletPort is the port of the kubelet's HTTPS API the node reports
	// (status.daemonEndpoints.kubeletEndpoint; default 10250).
	KubeletPort int32
	// NodeStatusUpdateFrequency: how often status is computed (10 s).
	NodeStatusUpdateFrequency time.Duration
	// NodeStatusReportFrequency: how often unchanged status is posted (5 min).
	NodeStatusReportFrequency time.Duration
	// NodeLeaseDurationSeconds (40); the lease is renewed every quarter.
	NodeLeaseDurationSeconds int32
	// PLEGRelistPeriod (1 s).
	PLEGRelistPeriod time.Duration
	// PodSource delivers the node's pods; nil: the kubelet watches its
	// own pods (spec.nodeName=<node>) and runs that source itself.
	PodSource PodSource
	// Recorder records upstream's pod events (Pulling, Pulled, Created,
	// Started, Killing, BackOff, Failed) from source kubelet/<node>; nil:
	// none.
	Recorder record.EventRecorder
	// SimulateHandlers: probes and lifecycle hooks are not run; a
	// container with a readiness probe reads ready initialDelaySeconds
	// after it started, as if its first probe succeeded, liveness and
	// startup probes and postStart/preStop hooks are ignored (hollow nodes
	// of the simulated runtime). Otherwise pkg/kubelet/prober runs every
	// probe and the kubelet runs the hooks.
	SimulateHandlers bool
	// ProbeRunner runs probes (nil: the real exec, httpGet, tcpSocket and
	// grpc probes); tests script it.
	ProbeRunner prober.Runner

	// Services feeds the service environment variables of containers
	// (FOO_SERVICE_HOST...); the caller runs it (many hollow kubelets
	// share one). Nil: the kubelet watches the services itself.
	Services *cache.TypedInformer[*corev1.Service]
	// PodLogDir is the root of the containers' logs
	// (<dir>/<ns>_<pod>_<uid>/<container>/<restart>.log, upstream's
	// /var/log/pods); "" sets no log paths (the simulated runtime).
	PodLogDir string
	// ContainerLogMaxSize (DefaultContainerLogMaxSize, 10Mi) and
	// ContainerLogMaxFiles (5): container log rotation (logrotate.go).
	ContainerLogMaxSize  int64
	ContainerLogMaxFiles int
	// Mounts gives each container its volume mounts (pkg/kubelet/volume);
	// nil: none, or the volume manager's with Volumes.
	Mounts MountsFunc
	// RootDir is the kubelet's root directory (pods/<uid>/volumes/...;
	// default DefaultRootDir).
	RootDir string
	// Volumes, when set, makes the kubelet manage its pods' volumes
	// (pkg/kubelet/volume, under RootDir; unset fields of it come from
	// this Config): set up before the sandbox is created (a failure is a
	// FailedMount event and the pod stays Pending, retried), mounted into
	// the containers, refreshed, and torn down once the pod's containers
	// and sandboxes are removed. Nil: no volume work (hollow nodes).
	Volumes *volume.Config

	// EvictionThresholds are the node-pressure eviction thresholds
	// (pkg/kubelet/eviction); nil: upstream's default hard thresholds,
	// empty: none (pods over their local storage limits are still
	// evicted).
	EvictionThresholds []eviction.Threshold
	// EvictionPressureTransitionPeriod (5 min): how long a pressure
	// condition stays after its signal recovered.
	EvictionPressureTransitionPeriod time.Duration
	// EvictionMaxPodGracePeriod bounds soft evictions' grace periods.
	EvictionMaxPodGracePeriod int64

	// SandboxImage is never garbage collected (DefaultSandboxImage).
	SandboxImage string
	// Machine is the host for garbage collection and eviction (memory,
	// filesystems, PIDs); nil: a simulated machine of Capacity whose usage
	// is what the runtime reports (HostMachine reads the real one).
	Machine Machine
	// ClusterDNS are the DNS servers of pods with dnsPolicy ClusterFirst
	// (upstream's --cluster-dns; none: such pods fall back to Default
	// with a MissingClusterDNS event, as upstream's); ClusterDomain their
	// search domain (--cluster-domain, e.g. cluster.local).
	ClusterDNS    []string
	ClusterDomain string
	// ResolvConf is the node's resolver configuration that pods with
	// dnsPolicy Default get (default /etc/resolv.conf; a missing file
	// reads as empty).
	ResolvConf string
	// SeccompDefault: containers without a seccomp profile run with the
	// runtime's default profile (upstream's --seccomp-default).
	SeccompDefault bool
	// SeccompProfileRoot holds Localhost seccomp profiles (default
	// <RootDir>/seccomp).
	SeccompProfileRoot string
	// CgroupsPerQOS gives each pod the cgroup parent
	// /kubepods[/burstable|/besteffort]/pod<uid> (cgroupfs names; the
	// runtime creates the directories, the kubelet removes them under
	// CgroupRoot when the pod is gone; no pod-level limits are written).
	// Off (the default): the runtime's default cgroup.
	CgroupsPerQOS bool
	// CgroupRoot is where the cgroup filesystems are mounted (default
	// /sys/fs/cgroup).
	CgroupRoot string
}

// Kubelet is one node's agent.
type Kubelet struct {
	cfg    Config
	pool   *WorkPool
	log    *slog.Logger
	clock  clock.Clock
	nodes  *client.Typed[*corev1.Node, *corev1.NodeList]
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	leases *client.Typed[*coordinationv1.Lease, *coordinationv1.LeaseList]

	ownSource *InformerPodSource // when Config.PodSource is nil

	hostOnce     sync.Once
	hostCapacity corev1.ResourceList    // measured by Config.Machine
	hostInfo     *corev1.NodeSystemInfo // read from Config.Machine

	mu             sync.Mutex
	workers        map[types.UID]*podWorker
	node           *corev1.Node // last registered or posted
	podCIDR        string       // last given to the runtime (podcidr.go)
	runtimeID      string       // e.g. "skiff-sim" (container IDs' scheme)
	runtimeVersion string
	lastReport     time.Time // last node status post
	ctx            context.Context

	evictions *eviction.Manager
	du        duCache // directory usage for eviction (logs, emptyDirs)
	status    *statusManager
	pleg      *pleg
	probes    *prober.Manager // nil with SimulateHandlers
	volumes   *volume.Manager // nil without Config.Volumes
	podCfg    *podConfig
	// imageBackOff: failed pulls per pod and image.
	imageBackOff imageBackOff
	// The garbage collectors (newGC).
	containerGC *gc.ContainerGC
	imageGC     *gc.ImageGC

	ownServices *cache.TypedInformer[*corev1.Service] // when Config.Services is nil
}

// New checks the configuration and returns a Kubelet; Run starts it.
func New(cfg Config) (*Kubelet, error) {
	if cfg.Client == nil || cfg.NodeName == "" || cfg.Runtime == nil || cfg.Images == nil {
		return nil, errors.New("kubelet: Client, NodeName, Runtime and Images are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WorkPool == nil {
		cfg.WorkPool = NewWorkPool()
	}
	if cfg.NodeStatusUpdateFrequency <= 0 {
		cfg.NodeStatusUpdateFrequency = 10 * time.Second
	}
	if cfg.NodeStatusReportFrequency <= 0 {
		cfg.NodeStatusReportFrequency = 5 * time.Minute
	}
	if cfg.NodeLeaseDurationSeconds <= 0 {
		cfg.NodeLeaseDurationSeconds = 40
	}
	if cfg.PLEGRelistPeriod <= 0 {
		cfg.PLEGRelistPeriod = time.Second
	}
	if cfg.NodeIP == "" {
		cfg.NodeIP = "127.0.0.1"
	}
	if cfg.SandboxImage == "" {
		cfg.SandboxImage = DefaultSandboxImage
	}
	if cfg.KubeletPort <= 0 {
		cfg.KubeletPort = 10250
	}
	k := &Kubelet{cfg: cfg, pool: cfg.WorkPool, log: cfg.Logger.With("node", cfg.NodeName), clock: cfg.Clock,
		nodes:   client.For[*corev1.Node, *corev1.NodeList](cfg.Client),
		pods:    client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		leases:  client.For[*coordinationv1.Lease, *coordinationv1.LeaseList](cfg.Client).Namespace(corev1.NamespaceNodeLease),
		workers: map[types.UID]*podWorker{}}
	if cfg.PodSource == nil {
		k.ownSource = NewInformerPodSource(cfg.Client, "spec.nodeName="+cfg.NodeName)
		k.cfg.PodSource = k.ownSource
	}
	if cfg.Services == nil {
		k.ownServices = cache.NewTypedInformer(client.For[*corev1.Service, *corev1.ServiceList](cfg.Client), nil, cache.SharedIndexInformerOptions{})
		k.cfg.Services = k.ownServices
	}
	k.cfg.RootDir = defaultRootDir(cfg.RootDir)
	vm, err := k.newVolumeManager()
	if err != nil {
		return nil, err
	}
	if vm != nil {
		k.volumes = vm
		if k.cfg.Mounts == nil {
			k.cfg.Mounts = k.volumeMounts
		}
	}
	if k.cfg.Machine == nil {
		k.cfg.Machine = simMachine{k}
	}
	if k.evictions, err = k.newEvictionManager(); err != nil {
		return nil, err
	}
	k.podCfg = k.newPodConfig()
	k.status = &statusManager{pods: k.pods, last: map[types.UID]writtenStatus{}}
	k.pleg = &pleg{k: k, last: map[string]uint64{}}
	if !cfg.SimulateHandlers {
		k.probes = prober.New(prober.Config{Runtime: cfg.Runtime, Runner: cfg.ProbeRunner, Clock: cfg.Clock,
			Event: k.event, OnChange: k.pokePod})
	}
	return k, nil
}

// Run registers the node and runs the kubelet until ctx ends.
func (k *Kubelet) Run(ctx context.Context) error {
	var v *runtimeapi.VersionResponse
	var err error
	k.pool.run(func() { v, err = k.cfg.Runtime.Version(ctx, &runtimeVersionRequest) })
	if err != nil {
		return fmt.Errorf("kubelet: container runtime: %w", err)
	}
	k.ctx = ctx
	k.runtimeID = v.RuntimeName
	k.runtimeVersion = v.RuntimeVersion
	// Registration is retried until it succeeds (the API server may not
	// be up yet, as upstream's kubelet does), 1 s doubling to 7 s apart.
	for delay := time.Second; ; delay = min(2*delay, 7*time.Second) {
		k.pool.run(func() { err = k.registerNode(ctx) })
		if err == nil {
			break
		}
		k.log.Warn("unable to register node with the API server", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-k.clock.After(delay):
		}
	}
	return k.run(ctx)
}

// run runs the registered node's loops and pod workers until ctx ends.
func (k *Kubelet) run(ctx context.Context) error {
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx) }()
	}
	if k.ownSource != nil {
		run(k.ownSource.Run)
	}
	if k.ownServices != nil {
		run(k.ownServices.Run)
	}
	if k.volumes != nil {
		run(k.volumes.Run)
		run(k.cleanupOrphanedVolumes)
	}
	run(func(ctx context.Context) { k.runTasks(ctx, k.leaseTask(), k.nodeStatusTask()) })
	run(k.logRotationLoop)
	run(k.fastStatusUpdate)
	// Containers' service variables need the services listed once
	// (upstream refuses to build an environment before): wait for that a
	// while (wall time: it is the API server's answer), then go on; until
	// the list arrives containers wait with CreateContainerConfigError.
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	if !cache.WaitForCacheSync(sctx, k.cfg.Services.HasSynced) && ctx.Err() == nil {
		k.log.Warn("services not listed yet: containers start once they are (service environment variables)")
	}
	scancel()
	k.cfg.PodSource.Register(k.cfg.NodeName, k)
	// What relists and cleans the runtime starts once the source has
	// given the pods (else it would take them for orphans).
	podTasks := append([]task{k.pleg.task()}, k.gcTasks()...)
	if k.evictions != nil {
		// Run's first synchronization at once, then every interval.
		podTasks = append(podTasks, task{period: eviction.MonitoringInterval, now: true, run: k.evictions.Tick})
	}
	run(func(ctx context.Context) { k.runTasks(ctx, podTasks...) })
	<-ctx.Done()
	k.cfg.PodSource.Unregister(k.cfg.NodeName)
	wg.Wait()
	k.mu.Lock()
	ws := make([]*podWorker, 0, len(k.workers))
	for _, w := range k.workers {
		ws = append(ws, w)
	}
	k.mu.Unlock()
	for _, w := range ws {
		<-w.done
	}
	return nil
}

// pokePod makes the worker of the pod uid, if any, sync it.
func (k *Kubelet) pokePod(uid types.UID) {
	k.mu.Lock()
	w := k.workers[uid]
	k.mu.Unlock()
	if w != nil {
		w.poke()
	}
}

// PodUpdated implements PodHandler.
func (k *Kubelet) PodUpdated(pod *corev1.Pod) { k.workerFor(pod.UID).update(pod, false) }

// PodRemoved implements PodHandler.
func (k *Kubelet) PodRemoved(pod *corev1.Pod) { k.workerFor(pod.UID).update(pod, true) }

// newPodConfig is the configuration builder of the kubelet's pods.
func (k *Kubelet) newPodConfig() *podConfig {
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](k.cfg.Client)
	secrets := client.For[*corev1.Secret, *corev1.SecretList](k.cfg.Client)
	services := k.cfg.Services
	runtimeClasses := client.For[*nodev1.RuntimeClass, *nodev1.RuntimeClassList](k.cfg.Client)
	resolv := k.cfg.ResolvConf
	if resolv == "" {
		resolv = "/etc/resolv.conf"
	}
	if _, err := os.Stat(resolv); err != nil {
		k.log.Warn("the resolver configuration for dnsPolicy Default is missing; such pods get 127.0.0.1", "path", resolv, "err", err)
		resolv = ""
	}
	seccompRoot := k.cfg.SeccompProfileRoot
	if seccompRoot == "" {
		seccompRoot = filepath.Join(defaultRootDir(k.cfg.RootDir), "seccomp")
	}
	capacity := k.capacity()
	allocatable := k.allocatable(capacity)
	var podDir func(types.UID) string
	if k.volumes != nil {
		podDir = k.volumes.PodDir // the volume manager removes it with the pod
	}
	return &podConfig{
		PodDir:             podDir,
		ClusterDNS:         k.cfg.ClusterDNS,
		ClusterDomain:      k.cfg.ClusterDomain,
		ResolvConf:         resolv,
		SeccompDefault:     k.cfg.SeccompDefault,
		SeccompProfileRoot: seccompRoot,
		MemoryCapacity:     capacity.Memory().Value(),
		CgroupsPerQOS:      k.cfg.CgroupsPerQOS,
		NodeName:           k.cfg.NodeName,
		HostIPs:            []string{k.cfg.NodeIP},
		Allocatable:        allocatable,
		PodLogDir:          k.cfg.PodLogDir,
		Mounts:             k.cfg.Mounts,
		Lookups: Lookups{
			ConfigMap: func(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
				return cms.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			},
			Secret: func(ctx context.Context, ns, name string) (*corev1.Secret, error) {
				return secrets.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			},
			Services: func(ns string) ([]*corev1.Service, error) {
				return services.Lister().Namespace(ns).List(labels.Everything())
			},
			ServicesSynced: services.HasSynced,
			RuntimeClass: func(ctx context.Context, name string) (*nodev1.RuntimeClass, error) {
				return runtimeClasses.Get(ctx, name, metav1.GetOptions{})
			},
		},
	}
}

func (k *Kubelet) cgroupRoot() string {
	if k.cfg.CgroupRoot != "" {
		return k.cfg.CgroupRoot
	}
	return "/sys/fs/cgroup"
}
