package apiserver

import (
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/policy"
	"github.com/skiff-sh/skiff/pkg/apiserver/fieldmanager"
	"github.com/skiff-sh/skiff/pkg/apiserver/openapi"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	"github.com/skiff-sh/skiff/pkg/auth/node"
	"github.com/skiff-sh/skiff/pkg/auth/rbac"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/flowcontrol"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/storage/cacher"
)

// Config configures the API server.
type Config struct {
	// KV is the storage backend (etcd3 or memory).
	KV storage.KV
	// Definitions are the resources to serve (see registry/builtin).
	Definitions []*registry.Definition
	// Listener, if set, is used instead of listening on BindAddress:SecurePort.
	Listener    net.Listener
	BindAddress string
	SecurePort  int
	// TLS is the serving configuration (certificate, client CA). Required
	// unless Listener is a plain test listener and Insecure is set.
	TLS *tls.Config
	// Insecure serves plain HTTP (in-process tests only).
	Insecure bool
	// Authenticator decides who a request is; nil allows everyone (tests).
	Authenticator Authenticator
	// AnonymousAuth makes a request without credentials system:anonymous
	// (group system:unauthenticated), then authorized like any other
	// (upstream's --anonymous-auth, default true there); off, it gets 401
	// (except the health and version paths, served to anyone).
	AnonymousAuth bool
	// Authorizer decides what a user may do. nil with no
	// AuthorizationModes allows everything (tests).
	Authorizer authorizer.Authorizer
	// AuthorizationModes builds the authorizer when Authorizer is nil:
	// upstream's --authorization-mode names in order (RBAC, Node,
	// AlwaysAllow, AlwaysDeny), system:masters always allowed first.
	AuthorizationModes []string

	// MaxRequestsInFlight and MaxMutatingRequestsInFlight cap concurrent
	// requests (429 beyond); 0 means the upstream defaults 400 and 200.
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// RequestTimeout bounds non-watch requests (default 60 s); watches last
	// a random time in [MinRequestTimeout, 2*MinRequestTimeout).
	RequestTimeout    time.Duration
	MinRequestTimeout time.Duration
	// Profiling serves Go's profiles under /debug/pprof/ (upstream's
	// --profiling, on by default there; the cluster package turns it on),
	// behind authentication and authorization like every path.
	Profiling bool
	// MaxRequestBodyBytes is the body size limit (default 3 MiB).
	MaxRequestBodyBytes int64

	// ServiceClusterIPRange is the CIDR service IPs come from (10.96.0.0/12).
	ServiceClusterIPRange string
	// ServiceNodePortRange is the node port range (30000-32767).
	ServiceNodePortRange string
	// AdvertiseAddress is the address clients are told to use (discovery).
	AdvertiseAddress string
	// EndpointAddress is the address the "kubernetes" service's endpoints
	// point at; it must not be loopback (pods cannot reach it). Empty means
	// AdvertiseAddress, and no endpoints when that is loopback.
	EndpointAddress string

	// ServiceAccountSigner signs service account tokens (TokenRequest) and
	// verifies them as bearer tokens; nil disables both.
	ServiceAccountSigner crypto.Signer
	// ServiceAccountIssuer is the tokens' issuer and API audience.
	ServiceAccountIssuer string
	// EnableBootstrapTokenAuth accepts bootstrap tokens (Secrets
	// kube-system/bootstrap-token-<id>) as bearer tokens, as upstream's
	// --enable-bootstrap-token-auth (off by default there; kubeadm turns
	// it on). Needs an Authenticator.
	EnableBootstrapTokenAuth bool

	// ComponentHealthz overrides the health endpoints componentstatuses
	// probes (name → URL; default: the scheduler's and controller manager's secure ports on this host).
	ComponentHealthz map[string]string

	// ClientCAPEM is the CA client certificates are checked against,
	// published as kube-system/extension-apiserver-authentication.
	ClientCAPEM []byte
	// ProxyClientCert is the client certificate the API server presents to
	// aggregated API servers (upstream's --proxy-client-cert-file and
	// --proxy-client-key-file); RequestHeaderCAPEM is the CA that signed it
	// and RequestHeaderAllowedNames the common names it may carry, published
	// with upstream's X-Remote-* header names in
	// extension-apiserver-authentication so that those servers trust the
	// identity headers it sends.
	ProxyClientCert           *tls.Certificate
	RequestHeaderCAPEM        []byte
	RequestHeaderAllowedNames []string

	// KubeletClientCert is the client certificate the API server presents
	// to kubelets for logs, exec, attach, port-forward and nodes/proxy
	// (upstream's --kubelet-client-certificate/--kubelet-client-key; kubeadm
	// issues CN kube-apiserver-kubelet-client); nil: none. KubeletCAPEM
	// verifies the kubelets' serving certificates
	// (--kubelet-certificate-authority); nil: not verified, as upstream
	// without that flag.
	KubeletClientCert *tls.Certificate
	KubeletCAPEM      []byte
	// KubeletPreferredAddressTypes is the order in which a node's addresses
	// are tried to reach its kubelet (--kubelet-preferred-address-types;
	// default InternalIP, ExternalIP, Hostname, as kubeadm sets it).
	KubeletPreferredAddressTypes []string

	// CompactionInterval is how often old revisions are compacted (5 min).
	CompactionInterval time.Duration

	// EnableAdmissionPlugins and DisableAdmissionPlugins change upstream's
	// default admission plugins (--enable-admission-plugins,
	// --disable-admission-plugins); see admission.EnabledPlugins.
	EnableAdmissionPlugins  []string
	DisableAdmissionPlugins []string
	// PodTopologyLabelsAdmission is upstream's alpha feature gate of that
	// name (off by default in 1.34): it turns on the PodTopologyLabels
	// admission plugin and makes a binding copy its labels onto the pod.
	PodTopologyLabelsAdmission bool

	Clock  clock.Clock
	Rand   *rand.Rand
	Logger *slog.Logger
}

func (c *Config) complete() error {
	if c.KV == nil {
		return errors.New("apiserver: no storage")
	}
	if c.MaxRequestsInFlight == 0 {
		c.MaxRequestsInFlight = 400
	}
	if c.MaxMutatingRequestsInFlight == 0 {
		c.MaxMutatingRequestsInFlight = 200
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 60 * time.Second
	}
	if c.MinRequestTimeout == 0 {
		c.MinRequestTimeout = 30 * time.Minute
	}
	if c.MaxRequestBodyBytes == 0 {
		c.MaxRequestBodyBytes = 3 << 20
	}
	if c.ServiceClusterIPRange == "" {
		c.ServiceClusterIPRange = "10.96.0.0/12"
	}
	if c.ServiceNodePortRange == "" {
		c.ServiceNodePortRange = "30000-32767"
	}
	if c.AdvertiseAddress == "" {
		c.AdvertiseAddress = "127.0.0.1"
	}
	if c.SecurePort == 0 {
		c.SecurePort = 6443
	}
	if c.BindAddress == "" {
		c.BindAddress = "127.0.0.1"
	}
	if c.ServiceAccountIssuer == "" {
		c.ServiceAccountIssuer = DefaultServiceAccountIssuer
	}
	if c.CompactionInterval == 0 {
		c.CompactionInterval = 5 * time.Minute
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5eed))
	}
	// Handlers draw uids and names concurrently: serialise the source.
	c.Rand = rand.New(&lockedSource{src: c.Rand})
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// endpoint is one served group/version/resource.
type endpoint struct {
	def     *registry.Definition
	gvr     schema.GroupVersionResource
	gvk     schema.GroupVersionKind
	listGVK schema.GroupVersionKind
	store   *registry.Store // in the storage version
	status  *registry.Store // nil without a status subresource
	// subs are the update subresources by name (status among them).
	subs map[string]*registry.Store
	// actions are the action subresources by name (pods/binding, ...).
	actions   map[string]actionFunc
	version   *registry.VersionDef
	newObj    func() runtime.Object
	newList   func() runtime.Object
	verbs     map[string]bool
	qualified schema.GroupResource
	// review is set for answered-not-stored resources (access reviews).
	review *review
	// computed marks a read-only resource computed on each request
	// (componentstatuses).
	computed bool
	// fieldLabels are the field selector keys the resource supports.
	fieldLabels map[string]bool
	// cr is set for custom resources.
	cr *crEndpoint
}

// toStorage converts an object of this endpoint's version to storage form.
func (e *endpoint) toStorage(obj runtime.Object) (runtime.Object, error) {
	if e.version == nil || e.version.ToStorage == nil {
		return obj, nil
	}
	return e.version.ToStorage(obj)
}

// fromStorage converts a stored object to this endpoint's version.
func (e *endpoint) fromStorage(obj runtime.Object) (runtime.Object, error) {
	if e.version == nil || e.version.FromStorage == nil {
		return obj, nil
	}
	out, err := e.version.FromStorage(storage.Unwrap(obj))
	if err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(e.gvk)
	return out, nil
}

// Server is the Kubernetes API server.
type Server struct {
	cfg       Config
	scheme    *runtime.Scheme
	codecs    *codecs
	env       *registry.Env
	endpoints map[schema.GroupVersionResource]*endpoint

	// kubeletRT is the transport to kubelets (podstreams.go), made once.
	kubeletOnce sync.Once
	kubeletRT   *http.Transport
	kubeletErr  error

	// byGroupResource finds the storage Store of a resource.
	stores    map[schema.GroupResource]*registry.Store
	cachers   []*cacher.Cacher
	admission *admission.Chain
	// policyTypes type-checks ValidatingAdmissionPolicies (policies_status.go).
	policyTypes *policy.TypeChecker
	openapi     *openapi.Handler
	// kinds finds the endpoint of a served kind; fields are the field
	// managers (managedFields, server-side apply).
	kinds   map[schema.GroupVersionKind]*endpoint
	fields  *fieldmanager.Managers
	metrics *metrics
	handler http.Handler
	// crs is the immutable snapshot of the served custom resources, the
	// router's second lookup after the built-in endpoints; the CRD
	// controller swaps it (see customresources.go).
	crs  atomic.Pointer[crState]
	crds *crdController
	// apiServices keeps the local APIServices in step (apiservices.go).
	apiServices *apiServiceController
	// agg serves the APIServices of other servers (aggregator.go).
	agg *aggregator
	// publishMu orders the swaps of crs that rebuild discovery (the CRD
	// controller's and the aggregator's).
	publishMu sync.Mutex
	// apf classifies requests by the flowcontrol configuration (rebuilt
	// by the status loop; nil until the first build).
	apf atomic.Pointer[flowcontrol.Classifier]

	inflight         chan struct{}
	inflightMutating chan struct{}

	// authorizer is nil when everything is allowed; ruleResolver answers
	// SelfSubjectRulesReview; the RBAC index is filled before the first
	// request is authorized (authzSynced) and kept in step with the watch
	// caches (authz.go).
	authorizer   authorizer.Authorizer
	ruleResolver authorizer.RuleResolver
	rbacIndex    *rbac.Index
	rbac         *rbac.Authorizer
	authzSynced  chan struct{}
	// nodeGraph and nodeAuthz exist when the Node mode is on (nodeauthz.go).
	nodeGraph *node.Graph
	nodeAuthz *node.Authorizer

	// active counts requests being served (for graceful shutdown).
	active activeRequests

	readyOnce sync.Once
	ready     chan struct{}
	stopping  chan struct{}
}

// New builds the API server; Run serves it.
func New(cfg Config) (*Server, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:              cfg,
		scheme:           NewScheme(),
		env:              &registry.Env{Clock: cfg.Clock, Rand: cfg.Rand},
		endpoints:        map[schema.GroupVersionResource]*endpoint{},
		stores:           map[schema.GroupResource]*registry.Store{},
		inflight:         make(chan struct{}, cfg.MaxRequestsInFlight),
		inflightMutating: make(chan struct{}, cfg.MaxMutatingRequestsInFlight),
		ready:            make(chan struct{}),
		stopping:         make(chan struct{}),
	}
	s.codecs = newCodecs(s.scheme)
	if err := s.setupAuthorization(); err != nil {
		return nil, err
	}
	if cfg.EnableBootstrapTokenAuth && cfg.Authenticator != nil {
		s.cfg.Authenticator = UnionAuthenticator{s.cfg.Authenticator, &bootstrapTokenAuthenticator{s: s}}
	}
	if cfg.ServiceAccountSigner != nil && cfg.Authenticator != nil {
		s.cfg.Authenticator = UnionAuthenticator{s.cfg.Authenticator, &saTokenAuthenticator{s: s}}
	}
	s.metrics = newMetrics()
	for _, def := range cfg.Definitions {
		if err := s.install(def); err != nil {
			return nil, err
		}
	}
	if err := s.installHooks(); err != nil {
		return nil, err
	}
	s.installComponentStatuses()
	if err := s.installActions(); err != nil {
		return nil, err
	}
	for _, rv := range reviews() {
		rv := rv
		s.endpoints[rv.gvr] = &endpoint{
			def: &registry.Definition{Group: rv.gvr.Group, Version: rv.gvr.Version, Resource: rv.gvr.Resource,
				Kind: rv.kind, Namespaced: rv.namespaced, New: rv.newObj, Strategy: &registry.Strategy{}},
			gvr: rv.gvr, gvk: rv.gvr.GroupVersion().WithKind(rv.kind), newObj: rv.newObj,
			verbs: map[string]bool{"create": true}, qualified: rv.gvr.GroupResource(), review: rv,
		}
	}
	var err error
	s.crs.Store(&crState{})
	if s.admission, err = s.newAdmission(); err != nil {
		return nil, err
	}
	if s.openapi, err = openapi.New(openapi.Info{Title: "Kubernetes", Version: gitVersion}, s.openAPIResources(s.endpoints)); err != nil {
		return nil, fmt.Errorf("building OpenAPI: %w", err)
	}
	s.kinds = map[schema.GroupVersionKind]*endpoint{}
	for _, e := range s.endpoints {
		if e.review == nil && !e.computed {
			s.kinds[e.gvk] = e
		}
	}
	s.fields = s.newFieldManagers()
	s.agg = newAggregator(s)
	s.crs.Store(&crState{discovery: s.buildDiscovery(s.endpoints)})
	s.crds = newCRDController(s)
	s.apiServices = newAPIServiceController(s)
	s.handler = s.buildHandlerChain()
	return s, nil
}

// install creates the storage and endpoints of one resource.
func (s *Server) install(def *registry.Definition) error {
	prefix := def.StoragePrefix()
	gr := schema.GroupResource{Group: def.Group, Resource: def.Resource}
	st := storage.NewStore(storage.StoreConfig{
		KV:      s.cfg.KV,
		Codec:   storage.JSONCodec{Typer: s.scheme},
		NewFunc: def.New,
		Prefix:  prefix,
	})
	rs := &registry.Store{
		Resource:   gr,
		Kind:       schema.GroupKind{Group: def.Group, Kind: def.Kind},
		Namespaced: def.Namespaced,
		Prefix:     prefix,
		NewFunc:    def.New,
		NewList:    def.NewList,
		Strategy:   def.Strategy,
		Env:        s.env,
	}
	c := cacher.New(cacher.Config{
		Storage:  st,
		Prefix:   prefix,
		NewFunc:  def.New,
		KeyFunc:  rs.KeyOf,
		GetAttrs: rs.Attrs,
		Clock:    s.cfg.Clock,
		Logger:   s.cfg.Logger,
	})
	rs.Storage = c
	s.cachers = append(s.cachers, c)
	s.stores[gr] = rs
	var status *registry.Store
	if def.ValidateStatus != nil {
		st := *rs
		st.Strategy = registry.StatusStrategy(def.Strategy, def.ValidateStatus)
		if prep := def.PrepareStatus; prep != nil {
			copyAll := st.Strategy.PrepareForUpdate
			st.Strategy.PrepareForUpdate = func(obj, old runtime.Object) {
				copyAll(obj, old)
				prep(obj, old)
			}
		}
		status = &st
	}
	subs := map[string]*registry.Store{}
	if status != nil {
		subs["status"] = status
	}
	for _, sub := range def.Subresources {
		st := *rs
		st.Strategy = registry.SubresourceStrategy(def.Strategy, sub)
		subs[sub.Name] = &st
	}
	verbs := map[string]bool{}
	vs := def.Verbs
	if vs == nil {
		vs = registry.AllVerbs
	}
	for _, v := range vs {
		verbs[v] = true
	}
	add := func(version string, vd *registry.VersionDef, newObj, newList func() runtime.Object) {
		group := def.Group
		if vd != nil && vd.Group != "" {
			group = vd.Group
		}
		gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: def.Resource}
		s.endpoints[gvr] = &endpoint{
			def:       def,
			gvr:       gvr,
			gvk:       schema.GroupVersionKind{Group: group, Version: version, Kind: def.Kind},
			listGVK:   schema.GroupVersionKind{Group: group, Version: version, Kind: def.ListKind},
			store:     rs,
			status:    status,
			subs:      subs,
			version:   vd,
			newObj:    newObj,
			newList:   newList,
			verbs:     verbs,
			qualified: gr,
		}
	}
	add(def.Version, nil, def.New, def.NewList)
	for i := range def.Extra {
		vd := &def.Extra[i]
		add(vd.Version, vd, vd.New, vd.NewList)
	}
	for _, e := range s.endpoints {
		if e.def == def {
			e.fieldLabels = supportedFields(e)
		}
	}
	return nil
}

// installHooks gives every resource whose Definition has hooks its Hooks,
// once every store exists (a Service's hooks use the IPAddress store). The
// main store runs them all; subresource stores only the delete hook (a
// status update never allocates, and must not release).
func (s *Server) installHooks() error {
	env := &registry.HookEnv{
		Store: func(gr schema.GroupResource) *registry.Store { return s.stores[gr] },
		RawStorage: func(prefix string, newFunc func() runtime.Object) storage.Interface {
			return storage.NewStore(storage.StoreConfig{KV: s.cfg.KV, Codec: storage.JSONCodec{Typer: s.scheme}, NewFunc: newFunc, Prefix: prefix})
		},
		Clock: s.cfg.Clock, Rand: s.cfg.Rand,
		ServiceClusterIPRange: s.cfg.ServiceClusterIPRange, ServiceNodePortRange: s.cfg.ServiceNodePortRange,
		Authorizer: s.authorizer, RBACRules: s.rbac,
	}
	for _, def := range s.cfg.Definitions {
		if def.NewHooks == nil {
			continue
		}
		h, err := def.NewHooks(env)
		if err != nil {
			return fmt.Errorf("%s: %w", def.Resource, err)
		}
		gr := schema.GroupResource{Group: def.Group, Resource: def.Resource}
		s.stores[gr].Hooks = h
		for _, e := range s.endpoints {
			if e.qualified != gr {
				continue
			}
			for _, st := range e.subs {
				st.Hooks = &registry.Hooks{AfterDelete: h.AfterDelete}
			}
		}
	}
	return nil
}

// Repair runs every store's Repair hook once, as the periodic loop does
// every registry.RepairInterval.
func (s *Server) Repair(ctx context.Context) error {
	for gr, st := range s.stores {
		if st.Hooks == nil || st.Hooks.Repair == nil {
			continue
		}
		if err := st.Hooks.Repair(ctx); err != nil {
			return fmt.Errorf("repairing %s: %w", gr, err)
		}
	}
	return nil
}

// repairLoop runs the Repair hooks every registry.RepairInterval.
func (s *Server) repairLoop(ctx context.Context) {
	t := s.cfg.Clock.NewTicker(registry.RepairInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if err := s.Repair(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("repair failed", "err", err)
		}
	}
}

// Store returns the registry store of a resource (for admission and
// bootstrapping inside the server).
func (s *Server) Store(gr schema.GroupResource) *registry.Store { return s.storeFor(gr) }

// storeFor finds the store of a built-in or custom resource.
func (s *Server) storeFor(gr schema.GroupResource) *registry.Store {
	if st := s.stores[gr]; st != nil {
		return st
	}
	return s.crs.Load().stores[gr]
}

// Get implements admission.Getter: a read of any stored object.
func (s *Server) Get(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error) {
	st := s.storeFor(gr)
	if st == nil {
		return nil, fmt.Errorf("unknown resource %s", gr)
	}
	return s.getFresh(ctx, st, ns, name)
}

// GetConsistent implements admission.Getter: a read from storage.
func (s *Server) GetConsistent(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error) {
	st := s.storeFor(gr)
	if st == nil {
		return nil, fmt.Errorf("unknown resource %s", gr)
	}
	return st.Get(ctx, ns, name, metav1.GetOptions{})
}

// List implements admission.Getter: the objects of a resource in ns.
func (s *Server) List(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	st := s.storeFor(gr)
	if st == nil {
		return nil, fmt.Errorf("unknown resource %s", gr)
	}
	objs, _, err := st.List(ctx, ns, registry.ListOptions{ResourceVersion: "0"})
	for i := range objs {
		objs[i] = storage.Unwrap(objs[i])
	}
	return objs, err
}

// ListConsistent implements admission.Getter: the objects of a resource
// in ns as storage holds them now (a consistent list).
func (s *Server) ListConsistent(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	st := s.storeFor(gr)
	if st == nil {
		return nil, fmt.Errorf("unknown resource %s", gr)
	}
	objs, _, err := st.List(ctx, ns, registry.ListOptions{})
	for i := range objs {
		objs[i] = storage.Unwrap(objs[i])
	}
	return objs, err
}

// Handler is the server's full HTTP handler chain (for in-process use).
func (s *Server) Handler() http.Handler { return s.handler }

// Start starts the watch caches and background work without serving;
// Run calls it. It returns once the caches are filled and the system
// objects exist.
func (s *Server) Start(ctx context.Context) error {
	for _, c := range s.cachers {
		go c.Run(ctx)
	}
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	if err := s.startRBACIndex(ctx); err != nil {
		return err
	}
	go s.compactLoop(ctx)
	go s.repairLoop(ctx)
	s.startIdentity(ctx, s.identityHolder())
	go s.crds.run(ctx)
	go s.apiServices.run(ctx)
	go s.agg.run(ctx)
	go s.statusLoop(ctx)
	go s.metrics.observeStorage(ctx, s)
	s.readyOnce.Do(func() { close(s.ready) })
	return nil
}

// Run serves until ctx ends, then shuts down gracefully: new requests are
// refused, in-flight ones finish, watches end cleanly.
func (s *Server) Run(ctx context.Context) error {
	ln := s.cfg.Listener
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(s.cfg.BindAddress, fmt.Sprint(s.cfg.SecurePort)))
		if err != nil {
			return err
		}
	}
	if !s.cfg.Insecure {
		if s.cfg.TLS == nil {
			return errors.New("apiserver: TLS configuration required")
		}
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelDebug),
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if err := s.Start(runCtx); err != nil {
		srv.Close()
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	close(s.stopping) // watches end now
	// Stop accepting, let in-flight requests finish (up to a minute), then
	// close what is left (idle keep-alive and HTTP/2 connections) at once
	// rather than waiting for clients to hang up.
	shutdownCtx, done := context.WithTimeout(context.Background(), 60*time.Second)
	defer done()
	shutdownDone := make(chan struct{})
	go func() {
		srv.Shutdown(shutdownCtx)
		close(shutdownDone)
	}()
	s.active.waitIdle(shutdownCtx)
	// Every handler has returned. A request that reached a connection just
	// as the shutdown began may not have reached its handler yet: give the
	// connections a moment (Shutdown has sent HTTP/2 clients a GOAWAY, so
	// nothing new arrives on them), then wait for any such request too.
	// Waiting for Shutdown itself would cost a second per HTTP/2 client:
	// after its GOAWAY the server keeps an idle connection open that long
	// for the client to close it.
	grace, graceDone := context.WithTimeout(shutdownCtx, shutdownGrace)
	defer graceDone()
	select {
	case <-shutdownDone:
	case <-grace.Done():
	}
	s.active.waitIdle(shutdownCtx)
	err := srv.Close()
	cancel()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// shutdownGrace is how long Run waits, once no handler is running, for
// requests already on their way to reach a handler.
const shutdownGrace = 100 * time.Millisecond

// compactLoop compacts storage history older than CompactionInterval, as
// upstream's API server does for etcd.
func (s *Server) compactLoop(ctx context.Context) {
	t := s.cfg.Clock.NewTicker(s.cfg.CompactionInterval)
	defer t.Stop()
	var prev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		rev, err := s.stores[schema.GroupResource{Resource: "namespaces"}].Storage.CurrentRevision(ctx)
		if err != nil {
			continue
		}
		if prev > 0 {
			if err := s.cfg.KV.Compact(ctx, prev); err != nil && !errors.Is(err, storage.ErrCompacted) {
				s.cfg.Logger.Warn("compaction failed", "rev", prev, "err", err)
			}
		}
		prev = int64(rev)
	}
}

// resourceList returns the endpoints of a group version, sorted.
func resourceList(endpoints map[schema.GroupVersionResource]*endpoint, gv schema.GroupVersion) []*endpoint {
	var out []*endpoint
	for gvr, e := range endpoints {
		if gvr.GroupVersion() == gv {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].gvr.Resource < out[j].gvr.Resource })
	return out
}

func notFound() error {
	return apierrors.NewNotFound(schema.GroupResource{}, "")
}

// objectName returns obj's namespace and name.
func objectName(obj runtime.Object) (string, string) {
	m, err := meta.Accessor(storage.Unwrap(obj))
	if err != nil {
		return "", ""
	}
	return m.GetNamespace(), m.GetName()
}

func hasPrefixAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Ready is closed once the server serves with its caches filled and
// system objects in place.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// lockedSource makes a random source safe for concurrent use.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (l *lockedSource) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src.Uint64()
}

// activeRequests counts requests in flight; unlike a WaitGroup it may be
// incremented while someone waits for it to reach zero (a request that
// arrives during shutdown).
type activeRequests struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while n == 0
}

func (a *activeRequests) begin() {
	a.mu.Lock()
	if a.n == 0 {
		a.idle = make(chan struct{})
	}
	a.n++
	a.mu.Unlock()
}

func (a *activeRequests) end() {
	a.mu.Lock()
	a.n--
	if a.n == 0 {
		close(a.idle)
		a.idle = nil
	}
	a.mu.Unlock()
}

// waitIdle returns once no request is in flight, or when ctx ends.
func (a *activeRequests) waitIdle(ctx context.Context) {
	for {
		a.mu.Lock()
		idle := a.idle
		a.mu.Unlock()
		if idle == nil {
			return
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return
		}
	}
}
