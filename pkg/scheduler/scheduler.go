package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/component"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/defaultpreemption"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/volumebinding"
	fwkruntime "github.com/skiff-sh/skiff/pkg/scheduler/framework/runtime"
	internalcache "github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/internal/queue"
)

// Config configures a Scheduler.
type Config struct {
	// ComponentConfig is the KubeSchedulerConfiguration; New defaults and
	// validates it (nil: config.Default()).
	ComponentConfig *config.KubeSchedulerConfiguration
	// ClientConfig, when set, reaches the API server instead of
	// ComponentConfig.ClientConnection.Kubeconfig (in-process use).
	ClientConfig *client.Config
	// Serving is /healthz, /metrics and /debug/pprof over HTTPS
	// (upstream's --secure-port 10259; 0 turns it off).
	Serving component.ServingConfig
	// Identity is the leader election identity (empty: hostname_uuid).
	Identity string
	// OutOfTreeRegistry adds plugins to the in-tree ones (a name taken by
	// an in-tree plugin is an error).
	OutOfTreeRegistry framework.Registry

	Clock  clock.Clock
	Logger *slog.Logger
	// Rand returns a number in [0, n) (tie breaking among the best
	// nodes); nil: math/rand/v2.
	Rand func(n int) int
	// Registry and Gatherer hold the metrics (nil: a new registry with
	// the Go and process collectors).
	Registry prometheus.Registerer
	Gatherer prometheus.Gatherer
}

// eventWriters bounds the events written at once.
const eventWriters = 64

// Scheduler assigns pending pods to nodes.
type Scheduler struct {
	cfg      Config
	cc       *config.KubeSchedulerConfiguration
	client   *client.Client
	factory  *informers.SharedInformerFactory
	cache    *internalcache.Cache
	queue    *queue.PriorityQueue
	snapshot *internalcache.Snapshot
	profiles map[string]*fwkruntime.Framework

	podLister cache.Lister[*corev1.Pod]
	// handlers are the informer handlers feeding the cache and the queue:
	// scheduling starts once they handled the initial lists.
	handlers                 []cache.ResourceEventHandlerRegistration
	broadcaster              record.EventBroadcaster
	percentageOfNodesToScore int32
	nextStartNodeIndex       int
	// filterStatuses is findNodesThatPassFilters' buffer, scoreBuf
	// prioritizeNodes' (cycles run one at a time).
	filterStatuses []*framework.Status
	scoreBuf       fwkruntime.ScoreBuffer

	clock    clock.Clock
	logger   *slog.Logger
	rand     func(n int) int
	metrics  *metrics
	registry prometheus.Registerer
	gatherer prometheus.Gatherer
	identity string
}

// New builds the scheduler: client, informers and their handlers,
// cache, queue and one framework per profile. Nothing runs until Run.
func New(ctx context.Context, cfg Config) (*Scheduler, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.IntN
	}
	cc := cfg.ComponentConfig
	if cc == nil {
		cc = config.Default()
	} else {
		cc = cc.DeepCopy()
		config.SetDefaults(cc)
	}
	if err := config.Validate(cc); err != nil {
		return nil, err
	}
	s := &Scheduler{cfg: cfg, cc: cc, clock: cfg.Clock, logger: cfg.Logger, rand: cfg.Rand, identity: cfg.Identity,
		profiles: map[string]*fwkruntime.Framework{}, snapshot: internalcache.NewEmptySnapshot()}
	if cc.PercentageOfNodesToScore != nil {
		s.percentageOfNodesToScore = *cc.PercentageOfNodesToScore
	}
	if s.identity == "" {
		id, err := component.NewIdentity()
		if err != nil {
			return nil, err
		}
		s.identity = id
	}
	s.registry, s.gatherer = cfg.Registry, cfg.Gatherer
	if s.registry == nil {
		reg := component.NewRegistry()
		s.registry, s.gatherer = reg, reg
	}
	var err error
	if s.metrics, err = newMetrics(s.registry); err != nil {
		return nil, err
	}
	if err := defaultpreemption.Register(s.registry); err != nil {
		return nil, err
	}
	if err := volumebinding.Register(s.registry); err != nil {
		return nil, err
	}

	conn := component.ClientConnection{Kubeconfig: cc.ClientConnection.Kubeconfig, QPS: cc.ClientConnection.QPS,
		Burst: int(cc.ClientConnection.Burst), ContentType: cc.ClientConnection.ContentType}
	ccfg, err := conn.NewClientConfig(cfg.ClientConfig, component.UserAgent(component.SchedulerName), s.clock, s.logger)
	if err != nil {
		return nil, err
	}
	if s.client, err = client.New(ccfg); err != nil {
		return nil, err
	}
	// Upstream's scheduler caches objects without managedFields, and
	// pods that finished (Succeeded/Failed) not at all.
	s.factory = informers.NewSharedInformerFactory(s.client, 0, informers.WithTransform(stripManagedFields))
	podInformer := s.factory.InformerFor(&corev1.Pod{}, func(c *client.Client, resync time.Duration) cache.SharedIndexInformer {
		return cache.NewTypedInformer(client.For[*corev1.Pod, *corev1.PodList](c), func(o *metav1.ListOptions) {
			o.FieldSelector = "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)
		}, cache.SharedIndexInformerOptions{ResyncPeriod: resync, Clock: s.clock}).Informer()
	})
	s.podLister = cache.NewLister[*corev1.Pod](podInformer.GetIndexer(), corev1.Resource("pods"))

	s.cache = internalcache.New(internalcache.Config{Clock: s.clock, Logger: s.logger, Registerer: s.registry})
	// Upstream's scheduler records through the events.k8s.io library,
	// which writes each event in its own goroutine: every pod gets its
	// Scheduled event even at thousands of bindings a second (written one
	// at a time, most were dropped once the queue filled).
	s.broadcaster = record.NewBroadcaster(record.WithClock(s.clock), record.WithLogger(s.logger),
		record.WithConcurrentWrites(eventWriters))

	registry := plugins.NewInTreeRegistry()
	if err := registry.Merge(cfg.OutOfTreeRegistry); err != nil {
		return nil, err
	}
	waiting := fwkruntime.NewWaitingPods()
	parallelism := 16
	if cc.Parallelism != nil {
		parallelism = int(*cc.Parallelism)
	}
	preEnqueue := map[string][]framework.PreEnqueuePlugin{}
	hints := map[string]queue.QueueingHintMap{}
	var less framework.LessFunc
	for i := range cc.Profiles {
		prof := &cc.Profiles[i]
		name := prof.Name()
		fwk, err := fwkruntime.NewFramework(ctx, registry, prof, fwkruntime.Options{
			Client: s.client, Informers: s.factory,
			EventRecorder: s.broadcaster.NewRecorder(corev1.EventSource{Component: name}),
			Clock:         s.clock, Logger: s.logger.With("profile", name), Parallelism: parallelism,
			Snapshot: s.snapshot, WaitingPods: waiting, Metrics: s.metrics,
		})
		if err != nil {
			return nil, fmt.Errorf("initializing profile for scheduler name %q: %w", name, err)
		}
		s.profiles[name] = fwk
		if less == nil {
			less = fwk.QueueSortFunc()
		}
		preEnqueue[name] = fwk.PreEnqueuePlugins()
		evs, err := fwk.EventsToRegister(ctx)
		if err != nil {
			return nil, err
		}
		m := queue.QueueingHintMap{}
		for _, pe := range evs {
			for _, e := range pe.Events {
				m[e.Event] = append(m[e.Event], queue.QueueingHintFunction{PluginName: pe.Plugin, QueueingHintFn: e.QueueingHintFn})
			}
		}
		hints[name] = m
	}
	nsInformer := s.factory.Namespaces()
	s.queue = queue.New(queue.Config{
		Clock: s.clock, Logger: s.logger, LessFunc: less,
		PodInitialBackoff: time.Duration(deref(cc.PodInitialBackoffSeconds, 1)) * time.Second,
		PodMaxBackoff:     time.Duration(deref(cc.PodMaxBackoffSeconds, 10)) * time.Second,
		PreEnqueuePlugins: preEnqueue,
		QueueingHints:     hints,
		Metrics:           s.registry,
		PodLister:         func(ns, name string) (*corev1.Pod, error) { return s.podLister.Namespace(ns).Get(name) },
		NamespaceLabels: func(ns string) labels.Set {
			if n, err := nsInformer.Lister().Get(ns); err == nil {
				return n.Labels
			}
			return nil
		},
	})
	for _, fwk := range s.profiles {
		fwk.SetPodNominator(s.queue)
		fwk.SetPodActivator(s.queue)
	}
	if err := s.addEventHandlers(ctx, podInformer, hints); err != nil {
		return nil, err
	}
	return s, nil
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// Client is the scheduler's API client.
func (s *Scheduler) Client() *client.Client { return s.client }

// Profiles names the profiles (schedulerNames).
func (s *Scheduler) Profiles() []string {
	out := make([]string, 0, len(s.profiles))
	for n := range s.profiles {
		out = append(out, n)
	}
	return out
}

// Run serves /healthz and /metrics, starts the informers, waits for
// their caches, and schedules (while leading, with leader election)
// until ctx ends. It returns nil after ctx ended,
// component.ErrLeaderElectionLost when leadership was lost, or the error
// that kept it from starting.
func (s *Scheduler) Run(ctx context.Context) error {
	// As upstream's kube-scheduler: /healthz with the leader election
	// watchdog (only when electing), /livez with ping only, /readyz with
	// the watchdog, shutdown and sched-handler-sync (the informers synced).
	le := s.cc.LeaderElection
	elect := deref(le.LeaderElect, true)
	watchdog := component.NewWatchdog()
	var fixed []component.HealthChecker
	if elect {
		fixed = append(fixed, watchdog)
	}
	var synced atomic.Bool
	var srv *component.Server
	if s.cfg.Serving.Enabled() {
		mux := component.NewMux(s.cfg.Serving, component.NewHealth(fixed...), s.gatherer)
		component.NewHealth().Install(mux, "/livez")
		ready := append(append([]component.HealthChecker(nil), fixed...), component.ShutdownCheck(ctx.Done()),
			component.NamedCheck("sched-handler-sync", func(*http.Request) error {
				if !synced.Load() {
					return errors.New("waiting for handlers to sync")
				}
				return nil
			}))
		component.NewHealth(ready...).Install(mux, "/readyz")
		var err error
		srv, err = component.NewServer(s.cfg.Serving, mux, s.clock, s.logger)
		if err != nil {
			return err
		}
	}
	return component.RunServing(ctx, srv, func(ctx context.Context) error {
		defer s.broadcaster.Shutdown()
		// Events are logged at debug level: without it, no watcher (each
		// would get its own copy of every event only to drop it).
		if s.logger.Enabled(ctx, slog.LevelDebug) {
			s.broadcaster.StartStructuredLogging(s.logger, slog.LevelDebug)
		}
		s.broadcaster.StartRecordingToSink(record.NewClientSink(s.client))
		s.factory.Start(ctx)
		defer s.factory.Shutdown()
		for typ, ok := range s.factory.WaitForCacheSync(ctx) {
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("informer of %v did not sync", typ)
			}
		}
		// As upstream's WaitForHandlersSync: the informers' stores are
		// full, but the cache and the queue have all the nodes and pods
		// only once the handlers ran on them (else the first pods meet
		// an empty or partial snapshot).
		if !s.waitForHandlersSync(ctx) {
			return nil
		}
		synced.Store(true)
		gauge, err := component.LeaderGauge(s.registry, component.SchedulerName)
		if err != nil {
			return err
		}
		return component.RunLeaderElected(ctx, component.LeaderElection{
			Config: component.LeaderElectionConfig{
				LeaderElect: elect, LeaseDuration: le.LeaseDuration.Duration, RenewDeadline: le.RenewDeadline.Duration,
				RetryPeriod: le.RetryPeriod.Duration, ResourceLock: le.ResourceLock, ResourceNamespace: le.ResourceNamespace,
				ResourceName: le.ResourceName, Identity: s.identity,
			}.WithDefaults(component.SchedulerName),
			Name: component.SchedulerName, Client: s.client,
			Recorder: s.broadcaster.NewRecorder(corev1.EventSource{Component: component.SchedulerName}),
			WatchDog: watchdog, IsLeader: gauge, Clock: s.clock, Logger: s.logger,
			// Upstream's scheduler gives the Lease up on exit.
			ReleaseOnCancel: true,
		}, s.schedule)
	})
}

// waitForHandlersSync waits until every informer handler has handled
// its informer's initial list; false when ctx ended first.
func (s *Scheduler) waitForHandlersSync(ctx context.Context) bool {
	for _, h := range s.handlers {
		select {
		case <-h.Synced():
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// schedule runs the queue and cache loops and the scheduling loop.
func (s *Scheduler) schedule(ctx context.Context) error {
	s.logger.Info("Starting scheduling", "profiles", s.Profiles())
	go s.queue.Run(ctx)
	go s.cache.Run(ctx)
	defer s.queue.Close()
	for ctx.Err() == nil {
		s.scheduleOne(ctx)
	}
	return nil
}

// ErrUnknownProfile is returned for a pod whose schedulerName has no
// profile (such pods are never queued).
var ErrUnknownProfile = errors.New("no profile for the pod's schedulerName")

// InProcess returns a function that runs a Scheduler with the
// configuration cc (nil: the default) and cfg against the API server of
// the kubeconfig it is given, until its context ends:
// testenv.Config.Scheduler takes it. Leader election and client-side
// throttling are off (one scheduler, a test's own API server).
func InProcess(cc *config.KubeSchedulerConfiguration, cfg Config) func(ctx context.Context, kubeconfigPath string) error {
	return func(ctx context.Context, kubeconfigPath string) error {
		c := cfg
		if cc == nil {
			cc = config.Default()
		}
		cc = cc.DeepCopy()
		off := false
		cc.ClientConnection.Kubeconfig, cc.ClientConnection.QPS, cc.LeaderElection.LeaderElect = kubeconfigPath, -1, &off
		c.ComponentConfig, c.ClientConfig = cc, nil
		if c.Identity == "" {
			c.Identity = "testenv"
		}
		s, err := New(ctx, c)
		if err != nil {
			return err
		}
		return s.Run(ctx)
	}
}
