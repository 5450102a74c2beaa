package controllermanager

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/intern"
	"github.com/skiff-sh/skiff/pkg/client/leaderelection"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/component"
)

// ErrLeaderElectionLost ends Run when the manager stops leading while its
// context is still live (upstream's "leaderelection lost" exit).
var ErrLeaderElectionLost = component.ErrLeaderElectionLost

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
	health   *component.Health
	mux      *http.ServeMux

	// transformed, when set (by tests), sees every object the shared
	// informers cache, after the transform.
	transformed func(any)
}

// New validates cfg and builds the manager's client and metrics; nothing
// runs until Run.
func New(cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	enabled, _ := EnabledControllers(cfg.Descriptors, cfg.Controllers)
	conn := component.ClientConnection{Kubeconfig: cfg.Kubeconfig, QPS: cfg.KubeAPIQPS, Burst: cfg.KubeAPIBurst, ContentType: cfg.KubeAPIContentType}
	ccfg, err := conn.NewClientConfig(cfg.ClientConfig, component.UserAgent(Component), cfg.Clock, cfg.Logger)
	if err != nil {
		return nil, err
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
		if m.identity, err = component.NewIdentity(); err != nil {
			return nil, err
		}
	}
	m.registry, m.gatherer = cfg.Registry, cfg.Gatherer
	if m.registry == nil {
		m.registry = component.NewRegistry()
	}
	if m.gatherer == nil {
		if g, ok := m.registry.(prometheus.Gatherer); ok {
			m.gatherer = g
		}
	}
	if m.metrics, err = workqueue.NewPrometheusMetricsProvider(m.registry); err != nil {
		return nil, err
	}
	if m.isLeader, err = component.LeaderGauge(m.registry, Component); err != nil {
		return nil, err
	}
	m.watchdog = component.NewWatchdog()
	// Upstream's checks: leaderElection with leader election, one per
	// started controller, ping while there is no other; on /healthz only
	// (upstream's manager serves no /healthz/<check>).
	if cfg.LeaderElection.LeaderElect {
		m.health = component.NewHealth(m.watchdog)
	} else {
		m.health = component.NewHealth()
	}
	m.mux = component.NewMux(m.cfg.Serving, nil, m.gatherer)
	m.mux.Handle("/healthz", m.health.Handler("/healthz"))
	return m, nil
}

// Client is the manager's API client.
func (m *Manager) Client() *client.Client { return m.client }

// Identity is the manager's leader election identity.
func (m *Manager) Identity() string { return m.identity }

// Enabled lists the canonical names of the enabled controllers (those
// without an implementation included).
func (m *Manager) Enabled() []string { return append([]string(nil), m.enabled...) }

// Handler is the manager's HTTP handler, without authentication and
// authorization: /healthz, /metrics and, with profiling, /debug/pprof/.
func (m *Manager) Handler() http.Handler { return m.mux }

// Run serves /healthz and /metrics, then runs the controllers (while
// leading, with leader election) until ctx ends. It returns nil after ctx
// ended and every controller returned, ErrLeaderElectionLost when
// leadership was lost, or the error that kept it from starting.
func (m *Manager) Run(ctx context.Context) error {
	var srv *component.Server
	if m.cfg.Serving.Enabled() {
		var err error
		if srv, err = component.NewServer(m.cfg.Serving, m.mux, m.cfg.Clock, m.cfg.Logger); err != nil {
			return err
		}
	}
	return component.RunServing(ctx, srv, m.run)
}

func (m *Manager) run(ctx context.Context) error {
	// One event broadcaster for the manager's life: the controllers'
	// events and the leader election's (on the Lease, as upstream's).
	broadcaster := record.NewBroadcaster(record.WithClock(m.cfg.Clock), record.WithLogger(m.cfg.Logger))
	defer broadcaster.Shutdown()
	broadcaster.StartStructuredLogging(m.cfg.Logger, slog.LevelDebug)
	broadcaster.StartRecordingToSink(record.NewClientSink(m.client))
	le := m.cfg.LeaderElection
	le.Identity = m.identity
	return component.RunLeaderElected(ctx, component.LeaderElection{
		Config: le, Name: Component, Client: m.client,
		Recorder: broadcaster.NewRecorder(corev1.EventSource{Component: Component}),
		WatchDog: m.watchdog, IsLeader: m.isLeader,
		Clock: m.cfg.Clock, Rand: m.rand, Logger: m.cfg.Logger,
	}, func(ctx context.Context) error { return m.runControllers(ctx, broadcaster) })
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
	// Pods share their equal parts (pkg/client/intern): the pod cache is
	// most of the manager's memory, and the pods of one ReplicaSet differ
	// in little more than their names.
	in := intern.New()
	transform := func(obj any) (any, error) {
		obj, _ = stripManagedFields(obj)
		obj, err := in.Transform(obj)
		if m.transformed != nil {
			m.transformed(obj)
		}
		return obj, err
	}
	factory := informers.NewSharedInformerFactory(m.client, resync, informers.WithTransform(transform))
	defer factory.Shutdown()

	// The controllers' identities are set up through a client of the
	// manager's own that is not throttled: making ~35 service accounts and
	// their first tokens at 20 QPS would hold every controller back by
	// seconds (upstream's manager pays that; skiff starts them at once).
	idCfg := m.clientCfg
	idCfg.QPS = -1
	idClient, err := client.New(&idCfg)
	if err != nil {
		return err
	}
	ids := &identities{root: idClient, base: m.clientCfg, useSA: m.cfg.UseServiceAccountCredentials, clock: m.cfg.Clock}
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
		// With UseServiceAccountCredentials, its own identity too
		// (identities.go).
		ccfg, err := ids.clientConfig(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil // stopped while starting
			}
			return fmt.Errorf("error starting controller %q: %w", name, err)
		}
		cl, err := client.New(&ccfg)
		if err != nil {
			return err
		}
		// A controller with its own identity records its events with it,
		// through a broadcaster of its own, as upstream's controllers do.
		events := broadcaster
		if ccfg.TokenSource != nil {
			own := record.NewBroadcaster(record.WithClock(m.cfg.Clock), record.WithLogger(m.cfg.Logger))
			defer own.Shutdown()
			own.StartStructuredLogging(m.cfg.Logger, slog.LevelDebug)
			own.StartRecordingToSink(record.NewClientSink(cl))
			events = own
		}
		cc := ControllerContext{
			Name: name, Client: cl, ClientConfig: ccfg, Informers: factory,
			Recorder:    events.NewRecorder(corev1.EventSource{Component: name}),
			Broadcaster: events, MetricsProvider: m.metrics, Registry: m.registry, Workers: m.cfg.workers(d),
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
		m.health.Add(s.name)
		wg.Go(func() {
			m.cfg.Logger.Info("Started controller", "controller", s.name)
			if err := s.c.Run(ctx); err != nil && ctx.Err() == nil {
				m.cfg.Logger.Error("Controller failed", "controller", s.name, "err", err)
				m.health.Fail(s.name, err)
			}
		})
	}
	factory.Start(ctx)
	<-ctx.Done()
	wg.Wait()
	for _, s := range ctrls {
		m.health.Remove(s.name)
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
