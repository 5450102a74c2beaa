package controllermanager

import (
	"context"
	"errors"
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/leaderelection"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
)

// ErrLeaderElectionLost ends Run when the manager stops leading while its
// context is still live (upstream's "leaderelection lost" exit).
var ErrLeaderElectionLost = errors.New("leaderelection lost")

// Manager runs the controllers.
type Manager struct {
	cfg       Config
	client    *client.Client
	clientCfg client.Config
	enabled   []string
	identity  string
	rand      func() float64

	registry prometheus.Registerer
	gatherer prometheus.Gatherer
	metrics  workqueue.MetricsProvider
	isLeader prometheus.Gauge

	watchdog *leaderelection.HealthzAdaptor
	health   *health
}

// New validates cfg and builds the manager's client and metrics; nothing
// runs until Run.
func New(cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	enabled, _ := EnabledControllers(cfg.Descriptors, cfg.Controllers)
	var ccfg *client.Config
	if cfg.ClientConfig != nil {
		c := *cfg.ClientConfig
		ccfg = &c
	} else {
		var err error
		// As upstream: no --kubeconfig inside a pod means the pod's
		// service account.
		if cfg.Kubeconfig == "" && os.Getenv(client.KubeconfigEnv) == "" {
			if ccfg, err = client.InClusterConfig(); err != nil && !errors.Is(err, client.ErrNotInCluster) {
				return nil, err
			}
		}
		if ccfg == nil {
			if ccfg, err = client.LoadKubeconfig(cfg.Kubeconfig, ""); err != nil {
				return nil, fmt.Errorf("kubeconfig: %w", err)
			}
		}
	}
	ccfg.QPS, ccfg.Burst, ccfg.ContentType = cfg.KubeAPIQPS, cfg.KubeAPIBurst, cfg.KubeAPIContentType
	if ccfg.UserAgent == "" {
		ccfg.UserAgent = Component + "/v0.0.0 (skiff)"
	}
	if ccfg.Clock == nil {
		ccfg.Clock = cfg.Clock
	}
	if ccfg.Logger == nil {
		ccfg.Logger = cfg.Logger
	}
	c, err := client.New(ccfg)
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, client: c, clientCfg: *ccfg, enabled: enabled, rand: cfg.Rand}
	if m.rand == nil {
		m.rand = rand.Float64
	}
	m.identity = cfg.LeaderElection.Identity
	if m.identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("unable to get hostname: %w", err)
		}
		m.identity = host + "_" + string(uuid.NewUUID())
	}
	m.registry, m.gatherer = cfg.Registry, cfg.Gatherer
	if m.registry == nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		m.registry = reg
	}
	if m.gatherer == nil {
		if g, ok := m.registry.(prometheus.Gatherer); ok {
			m.gatherer = g
		}
	}
	if m.metrics, err = workqueue.NewPrometheusMetricsProvider(m.registry); err != nil {
		return nil, err
	}
	leader := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"})
	if leader, err = registerOrShare(m.registry, leader); err != nil {
		return nil, err
	}
	m.isLeader = leader.WithLabelValues(Component)
	m.watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second) // upstream's timeout
	m.health = newHealth(m.watchdog)
	return m, nil
}

func registerOrShare[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// Client is the manager's API client.
func (m *Manager) Client() *client.Client { return m.client }

// Identity is the manager's leader election identity.
func (m *Manager) Identity() string { return m.identity }

// Enabled lists the canonical names of the enabled controllers (those
// without an implementation included).
func (m *Manager) Enabled() []string { return append([]string(nil), m.enabled...) }

// Run serves /healthz and /metrics, then runs the controllers (while
// leading, with leader election) until ctx ends. It returns nil after ctx
// ended and every controller returned, ErrLeaderElectionLost when
// leadership was lost, or the error that kept it from starting.
func (m *Manager) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serveErr := make(chan error, 1)
	var serving sync.WaitGroup
	if m.cfg.SecurePort != 0 || m.cfg.Listener != nil {
		srv, err := m.newServer()
		if err != nil {
			return err
		}
		serving.Go(func() { serveErr <- srv.serve(ctx) })
	}
	defer serving.Wait()
	runErr := make(chan error, 1)
	go func() { runErr <- m.run(ctx) }()
	select {
	case err := <-runErr:
		return err
	case err := <-serveErr:
		cancel()
		<-runErr
		return err
	}
}

func (m *Manager) run(ctx context.Context) error {
	// One event broadcaster for the manager's life: the controllers'
	// events and the leader election's (on the Lease, as upstream's).
	broadcaster := record.NewBroadcaster(record.WithClock(m.cfg.Clock), record.WithLogger(m.cfg.Logger))
	defer broadcaster.Shutdown()
	broadcaster.StartStructuredLogging(m.cfg.Logger, slog.LevelDebug)
	broadcaster.StartRecordingToSink(record.NewClientSink(m.client))
	le := m.cfg.LeaderElection
	if !le.LeaderElect {
		return m.runControllers(ctx, broadcaster)
	}
	lock := leaderelection.NewLeaseLock(m.client, le.ResourceNamespace, le.ResourceName, m.identity)
	lock.LockConfig.EventRecorder = broadcaster.NewRecorder(corev1.EventSource{Component: Component})
	// A controller that fails to start ends the campaign (electCtx).
	electCtx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu         sync.Mutex
		running    chan struct{} // closed when the controllers have returned
		ended      bool          // elector.Run returned: start nothing more
		controlErr error
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		Name: Component, Clock: m.cfg.Clock, Rand: m.rand, Logger: m.cfg.Logger, WatchDog: m.watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				mu.Lock()
				if ended {
					mu.Unlock()
					return
				}
				done := make(chan struct{})
				running = done
				mu.Unlock()
				defer close(done)
				m.isLeader.Set(1)
				m.cfg.Logger.Info("became leader, starting controllers", "identity", m.identity)
				if err := m.runControllers(lctx, broadcaster); err != nil {
					mu.Lock()
					controlErr = err
					mu.Unlock()
					stop()
				}
			},
			OnStoppedLeading: func() { m.isLeader.Set(0) },
			OnNewLeader: func(id string) {
				if id != m.identity {
					m.cfg.Logger.Info("new leader elected", "identity", id)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	m.watchdog.SetLeaderElection(elector)
	elector.Run(electCtx)
	mu.Lock()
	ended = true
	r := running
	mu.Unlock()
	if r != nil {
		<-r
	}
	mu.Lock()
	err = controlErr
	mu.Unlock()
	switch {
	case err != nil:
		return err
	case ctx.Err() != nil:
		return nil
	}
	m.cfg.Logger.Error("leaderelection lost")
	return ErrLeaderElectionLost
}

// stripManagedFields is the shared informers' transform, as upstream's
// kube-controller-manager: no controller reads managedFields, and they are
// a large part of every cached object.
func stripManagedFields(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok && o.GetManagedFields() != nil {
		o.SetManagedFields(nil)
	}
	return obj, nil
}

// runControllers builds the shared pieces and the enabled controllers and
// runs them until ctx ends.
func (m *Manager) runControllers(ctx context.Context, broadcaster record.EventBroadcaster) error {
	resync := time.Duration(float64(m.cfg.MinResyncPeriod) * (1 + m.rand()))
	factory := informers.NewSharedInformerFactory(m.client, resync, informers.WithTransform(stripManagedFields))
	defer factory.Shutdown()

	type started struct {
		name string
		c    Controller
	}
	var ctrls []started
	for _, name := range m.enabled {
		d, _ := lookup(m.cfg.Descriptors, name)
		if d.Init == nil {
			m.cfg.Logger.Debug("Skipping a controller skiff does not implement yet", "controller", name)
			continue
		}
		// Each controller has its own client, so its own token bucket, as
		// upstream's client builder gives each controller: one busy
		// controller does not throttle the others.
		ccfg := m.clientCfg
		ccfg.UserAgent = m.clientCfg.UserAgent + "/" + name
		cl, err := client.New(&ccfg)
		if err != nil {
			return err
		}
		cc := ControllerContext{
			Name: name, Client: cl, ClientConfig: ccfg, Informers: factory,
			Recorder:    broadcaster.NewRecorder(corev1.EventSource{Component: name}),
			Broadcaster: broadcaster, MetricsProvider: m.metrics, Registry: m.registry, Workers: m.cfg.workers(d),
			Clock: m.cfg.Clock, Logger: m.cfg.Logger.With("controller", name), Config: &m.cfg,
		}
		c, err := d.Init(cc)
		if err != nil {
			return fmt.Errorf("error starting controller %q: %w", name, err)
		}
		if c == nil {
			m.cfg.Logger.Warn("Controller is disabled by its configuration", "controller", name)
			continue
		}
		ctrls = append(ctrls, started{name, c})
	}
	var wg sync.WaitGroup
	for _, s := range ctrls {
		m.health.add(s.name)
		wg.Go(func() {
			m.cfg.Logger.Info("Started controller", "controller", s.name)
			if err := s.c.Run(ctx); err != nil && ctx.Err() == nil {
				m.cfg.Logger.Error("Controller failed", "controller", s.name, "err", err)
				m.health.fail(s.name, err)
			}
		})
	}
	factory.Start(ctx)
	<-ctx.Done()
	wg.Wait()
	for _, s := range ctrls {
		m.health.remove(s.name)
	}
	return nil
}

// InProcess returns a function that runs a Manager configured by cfg
// against the API server of the kubeconfig it is given, until its context
// ends: testenv.Config.ControllerManager takes it. The zero Config runs
// every default controller without leader election or serving;
// client-side throttling is off unless cfg sets KubeAPIQPS.
func InProcess(cfg Config) func(ctx context.Context, kubeconfigPath string) error {
	return func(ctx context.Context, kubeconfigPath string) error {
		cfg := cfg
		cfg.ClientConfig, cfg.Kubeconfig = nil, kubeconfigPath
		if cfg.KubeAPIQPS == 0 {
			cfg.KubeAPIQPS = -1
		}
		m, err := New(cfg)
		if err != nil {
			return err
		}
		return m.Run(ctx)
	}
}
