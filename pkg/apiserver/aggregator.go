package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/webhook"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/apiregistration"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// The aggregator serves the group/versions of APIServices that name a
// service (spec.service), as upstream's kube-aggregator does:
//
//   - Requests under /apis/<group>/<version> are authenticated and
//     authorized here, then proxied over TLS to a ready endpoint of the
//     service (the caBundle verifies the server as
//     <service>.<namespace>.svc), presenting the front-proxy client
//     certificate and the user in X-Remote-User, X-Remote-Group and
//     X-Remote-Extra-* headers; the caller's credentials are not
//     forwarded. An APIService that is not Available answers 503
//     "service unavailable".
//   - The availability check (on every APIService change, a change of a
//     Service or EndpointSlice of a service an APIService names, and
//     every 30 s) finds the service, its port and
//     a ready endpoint, then asks the server for the group/version's
//     discovery document as system:kube-aggregator in system:masters; the
//     Available condition carries upstream's reasons (ServiceNotFound,
//     ServicePortError, EndpointsNotFound, MissingEndpoints,
//     FailedDiscoveryCheck, Passed).
//   - Discovery is merged: /apis and /apis/<group> list the group/versions
//     of every such APIService (ordered by groupPriorityMinimum and
//     versionPriority), and the aggregated discovery document (kubectl's)
//     carries the resources each server last reported (Stale once it stops
//     answering).
//
// Endpoints are dialled directly (upstream's --enable-aggregator-routing),
// since a service's cluster IP needs a proxy on the node. Not yet: merging
// the servers' OpenAPI documents.

var grEndpointSlices = schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}

// Timing of the availability check, as upstream's.
const (
	aggregatorResync         = 30 * time.Second
	aggregatorDiscoveryLimit = 5 * time.Second
	aggregatorRetry          = time.Second
)

// remoteAPIService is one group/version served by another server.
type remoteAPIService struct {
	name                           string
	gv                             schema.GroupVersion
	groupPriority, versionPriority int32
	service                        apiregistrationv1.ServiceReference
	port                           int32
	transport                      *http.Transport
	transportErr                   error
	available                      bool
	// resources is the server's last discovery answer (nil before the
	// first); stale is set when the last check failed after one succeeded.
	resources *metav1.APIResourceList
	stale     bool
	// specKey identifies the spec the transport was built for.
	specKey string
}

// aggState is an immutable snapshot of the remote group/versions.
type aggState struct {
	byGV map[schema.GroupVersion]*remoteAPIService
}

// aggregator keeps the remote APIServices' state and proxies to them.
type aggregator struct {
	s     *Server
	poke  chan struct{}
	state atomic.Pointer[aggState]
	next  atomic.Uint64 // round-robin over ready endpoints
}

func newAggregator(s *Server) *aggregator {
	a := &aggregator{s: s, poke: make(chan struct{}, 1)}
	a.state.Store(&aggState{})
	return a
}

func (a *aggregator) wake() {
	select {
	case a.poke <- struct{}{}:
	default:
	}
}

// lookup returns the remote APIService serving the request path, if any.
func (a *aggregator) lookup(path string) *remoteAPIService {
	st := a.state.Load()
	if len(st.byGV) == 0 || !strings.HasPrefix(path, "/apis/") {
		return nil
	}
	parts := strings.SplitN(strings.TrimPrefix(path, "/apis/"), "/", 3)
	if len(parts) < 2 || parts[1] == "" {
		return nil
	}
	return st.byGV[schema.GroupVersion{Group: parts[0], Version: parts[1]}]
}

// run keeps the remote APIServices' state until ctx ends.
func (a *aggregator) run(ctx context.Context) {
	if st := a.s.stores[grAPIServices]; st != nil {
		go a.s.pokeOnEvents(ctx, st, func(runtime.Object) { a.wake() })
	}
	for _, gr := range []schema.GroupResource{grServices, grEndpointSlices} {
		if st := a.s.stores[gr]; st != nil {
			go a.s.pokeOnEvents(ctx, st, a.pokeForService)
		}
	}
	t := a.s.cfg.Clock.NewTicker(aggregatorResync)
	defer t.Stop()
	a.wake()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.poke:
		case <-t.C():
		}
		if err := a.sync(ctx); err != nil && ctx.Err() == nil {
			a.s.cfg.Logger.Debug("aggregator: sync failed", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-a.s.cfg.Clock.After(aggregatorRetry):
				a.wake()
			}
		}
	}
}

// sync checks every remote APIService, records its Available condition
// and publishes the new state (and discovery, when it changed).
func (a *aggregator) sync(ctx context.Context) error {
	st := a.s.stores[grAPIServices]
	if st == nil {
		return nil
	}
	objs, _, err := st.List(ctx, "", registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	old := a.state.Load()
	prev := map[string]*remoteAPIService{}
	for _, r := range old.byGV {
		prev[r.name] = r
	}
	var apis []*apiregistrationv1.APIService
	for _, o := range objs {
		if api := storage.Unwrap(o).(*apiregistrationv1.APIService); api.Spec.Service != nil {
			apis = append(apis, api)
		}
	}
	next := make([]*remoteAPIService, len(apis))
	errs := make([]error, len(apis))
	var wg sync.WaitGroup
	for i, api := range apis {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next[i], errs[i] = a.check(ctx, api, prev[api.Name])
		}()
	}
	wg.Wait()
	ns := &aggState{byGV: map[schema.GroupVersion]*remoteAPIService{}}
	for _, r := range next {
		if r != nil {
			ns.byGV[r.gv] = r
		}
	}
	for name, r := range prev {
		if !containsRemote(next, name) && r.transport != nil {
			r.transport.CloseIdleConnections()
		}
	}
	a.state.Store(ns)
	if discoveryChanged(old, ns) {
		a.s.republishDiscovery()
	}
	return errors.Join(errs...)
}

func containsRemote(rs []*remoteAPIService, name string) bool {
	for _, r := range rs {
		if r != nil && r.name == name {
			return true
		}
	}
	return false
}

// discoveryChanged reports whether the group/versions or resources
// discovery shows differ between two states.
func discoveryChanged(a, b *aggState) bool {
	if len(a.byGV) != len(b.byGV) {
		return true
	}
	for gv, ra := range a.byGV {
		rb := b.byGV[gv]
		if rb == nil || ra.groupPriority != rb.groupPriority || ra.versionPriority != rb.versionPriority || ra.stale != rb.stale || ra.resources != rb.resources {
			return true
		}
	}
	return false
}

// check looks at one APIService's service, endpoints and server, and
// updates its Available condition.
func (a *aggregator) check(ctx context.Context, api *apiregistrationv1.APIService, prev *remoteAPIService) (*remoteAPIService, error) {
	ref := *api.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	r := &remoteAPIService{
		name: api.Name, gv: schema.GroupVersion{Group: api.Spec.Group, Version: api.Spec.Version},
		groupPriority: api.Spec.GroupPriorityMinimum, versionPriority: api.Spec.VersionPriority,
		service: ref, port: port,
		specKey: fmt.Sprintf("%s/%s:%d|%t|%x", ref.Namespace, ref.Name, port, api.Spec.InsecureSkipTLSVerify, api.Spec.CABundle),
	}
	if prev != nil && prev.specKey == r.specKey {
		r.transport, r.transportErr = prev.transport, prev.transportErr
		r.resources = prev.resources
	} else {
		if prev != nil && prev.transport != nil {
			prev.transport.CloseIdleConnections()
		}
		r.transport, r.transportErr = a.s.proxyTransport(api)
	}
	remote, host, err := a.resolve(ctx, ref.Namespace, ref.Name, port)
	if err != nil {
		return prev, err
	}
	if remote.Addresses && r.transportErr == nil {
		list, derr := a.discover(ctx, r, host)
		remote.DiscoveryErr = derr
		if derr == nil {
			if prev == nil || prev.resources == nil || !sameResources(prev.resources, list) {
				r.resources = list
			}
		} else if r.resources != nil {
			r.stale = true
		}
	} else if remote.Addresses {
		remote.DiscoveryErr = r.transportErr
	}
	if !remote.Addresses && r.resources != nil {
		r.stale = true
	}
	r.available = remote.ServiceFound && remote.Port && remote.SlicesFound && remote.Addresses && remote.DiscoveryErr == nil
	return r, a.s.setRemoteStatus(ctx, api, remote)
}

func sameResources(a, b *metav1.APIResourceList) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// setRemoteStatus records an APIService's Available condition when it
// changed.
func (s *Server) setRemoteStatus(ctx context.Context, api *apiregistrationv1.APIService, r apiregistration.Remote) error {
	status := s.apiServiceStatusStore()
	if status == nil {
		return nil
	}
	now := metav1.NewTime(s.cfg.Clock.Now().Truncate(time.Second))
	if !apiregistration.SetRemoteAvailable(api.DeepCopy(), r, now) {
		return nil
	}
	_, _, err := status.Update(ctx, "", api.Name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		cur := storage.Unwrap(old).(*apiregistrationv1.APIService).DeepCopy()
		if cur.Spec.Service != nil {
			apiregistration.SetRemoteAvailable(cur, r, now)
		}
		return cur, nil
	}}, nil, nil, registry.UpdateOptions{NoCreate: true})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

// apiServiceStatusStore is the store behind apiservices/status.
func (s *Server) apiServiceStatusStore() *registry.Store {
	for _, e := range s.endpoints {
		if e.qualified == grAPIServices && e.version == nil {
			return e.status
		}
	}
	return nil
}

// resolve finds the service an APIService names and one ready endpoint
// (host:port) for the service port, as upstream's availability check and
// endpoint routing do (round robin over the endpoints). host is empty when
// there is none.
func (a *aggregator) resolve(ctx context.Context, ns, name string, port int32) (apiregistration.Remote, string, error) {
	eps, err := webhook.LookupService(ctx, a.s, ns, name, port)
	if err != nil {
		return apiregistration.Remote{}, "", err
	}
	r := apiregistration.Remote{ServiceFound: eps.ServiceFound, Port: eps.PortFound, PortName: eps.PortName,
		SlicesFound: eps.SlicesFound, Addresses: len(eps.Addresses) > 0}
	if !r.Addresses {
		return r, "", nil
	}
	return r, eps.Addresses[int(a.next.Add(1)%uint64(len(eps.Addresses)))], nil
}

// discover asks the server for the group/version's discovery document, as
// system:kube-aggregator in system:masters (as upstream's check).
func (a *aggregator) discover(ctx context.Context, r *remoteAPIService, host string) (*metav1.APIResourceList, error) {
	u := url.URL{Scheme: "https", Host: host, Path: "/apis/" + r.gv.Group + "/" + r.gv.Version}
	ctx, cancel := context.WithTimeout(ctx, aggregatorDiscoveryLimit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	setRemoteUser(req.Header, &User{Name: "system:kube-aggregator", Groups: []string{"system:masters"}})
	fail := func(err error) error { return fmt.Errorf("failing or missing response from %s: %w", u.String(), err) }
	resp, err := (&http.Client{Transport: r.transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return nil, fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil, fail(fmt.Errorf("bad status from %s: %d", u.String(), resp.StatusCode))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fail(err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(data, &list); err != nil {
		// The server answered: available, but without resources to show.
		return &metav1.APIResourceList{GroupVersion: r.gv.String()}, nil
	}
	return &list, nil
}

// proxyTransport is the TLS transport to an APIService's server: its CA
// bundle (or the system roots), the service's DNS name as the name to
// verify, and the front-proxy client certificate.
func (s *Server) proxyTransport(api *apiregistrationv1.APIService) (*http.Transport, error) {
	ref := api.Spec.Service
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: ref.Name + "." + ref.Namespace + ".svc"}
	if api.Spec.InsecureSkipTLSVerify {
		cfg.InsecureSkipVerify = true
	} else if len(api.Spec.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(api.Spec.CABundle) {
			return nil, fmt.Errorf("unable to load root certificates: unable to parse bytes as PEM block")
		}
		cfg.RootCAs = pool
	}
	if s.cfg.ProxyClientCert != nil {
		cfg.Certificates = []tls.Certificate{*s.cfg.ProxyClientCert}
	}
	return &http.Transport{
		TLSClientConfig:     cfg,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}, nil
}

// setRemoteUser writes the front-proxy identity headers of u, replacing
// any the caller sent.
func setRemoteUser(h http.Header, u *User) {
	for k := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Remote-") {
			delete(h, k)
		}
	}
	h.Set("X-Remote-User", u.Name)
	for _, g := range u.Groups {
		h.Add("X-Remote-Group", g)
	}
	keys := make([]string, 0, len(u.Extra))
	for k := range u.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range u.Extra[k] {
			h.Add("X-Remote-Extra-"+url.PathEscape(k), v)
		}
	}
}

// serveAggregated proxies a request to the server of a remote APIService.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, rem *remoteAPIService) {
	if !rem.available {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	if rem.transportErr != nil {
		http.Error(w, rem.transportErr.Error(), http.StatusInternalServerError)
		return
	}
	u, _ := r.Context().Value(userKey).(*User)
	if u == nil {
		http.Error(w, "missing user", http.StatusInternalServerError)
		return
	}
	_, host, err := s.agg.resolve(r.Context(), rem.service.Namespace, rem.service.Name, rem.port)
	if err != nil || host == "" {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "https", host
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			pr.Out.Host = host
			h := pr.Out.Header
			h.Del("Authorization")
			for k := range h {
				if strings.HasPrefix(http.CanonicalHeaderKey(k), "Impersonate-") {
					delete(h, k)
				}
			}
			setRemoteUser(h, u)
		},
		Transport:     rem.transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return
			}
			s.cfg.Logger.Debug("aggregator: proxying failed", "apiservice", rem.name, "err", err)
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		},
	}
	proxy.ServeHTTP(w, r)
}

// remoteGroups is what discovery shows of the remote APIServices: their
// group/versions (versions ordered by versionPriority, then kube-like
// version) and each group's priority (the highest groupPriorityMinimum).
func (st *aggState) remoteGroups() (versions map[string][]string, priority map[string]int32) {
	versions, priority = map[string][]string{}, map[string]int32{}
	vprio := map[schema.GroupVersion]int32{}
	for gv, r := range st.byGV {
		versions[gv.Group] = append(versions[gv.Group], gv.Version)
		vprio[gv] = r.versionPriority
		if r.groupPriority > priority[gv.Group] {
			priority[gv.Group] = r.groupPriority
		}
	}
	for g, vs := range versions {
		sort.Slice(vs, func(i, j int) bool {
			pi, pj := vprio[schema.GroupVersion{Group: g, Version: vs[i]}], vprio[schema.GroupVersion{Group: g, Version: vs[j]}]
			if pi != pj {
				return pi > pj
			}
			return versionLess(vs[i], vs[j])
		})
	}
	return versions, priority
}

// versionDiscovery is the aggregated discovery entry of a remote
// group/version, from the resources its server last reported (ok is false
// before it ever answered, as upstream leaves such a version out).
func (r *remoteAPIService) versionDiscovery() (apidiscoveryv2.APIVersionDiscovery, bool) {
	if r.resources == nil {
		return apidiscoveryv2.APIVersionDiscovery{}, false
	}
	vd := apidiscoveryv2.APIVersionDiscovery{Version: r.gv.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	if r.stale {
		vd.Freshness = apidiscoveryv2.DiscoveryFreshnessStale
	}
	kind := func(res metav1.APIResource) *metav1.GroupVersionKind {
		if res.Kind == "" {
			return nil
		}
		g, v := res.Group, res.Version
		if g == "" && v == "" {
			g, v = r.gv.Group, r.gv.Version
		}
		return &metav1.GroupVersionKind{Group: g, Version: v, Kind: res.Kind}
	}
	index := map[string]int{}
	for _, res := range r.resources.APIResources {
		if strings.Contains(res.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		index[res.Name] = len(vd.Resources)
		vd.Resources = append(vd.Resources, apidiscoveryv2.APIResourceDiscovery{
			Resource: res.Name, ResponseKind: kind(res), Scope: scope, SingularResource: res.SingularName,
			Verbs: res.Verbs, ShortNames: res.ShortNames, Categories: res.Categories,
		})
	}
	for _, res := range r.resources.APIResources {
		parent, sub, ok := strings.Cut(res.Name, "/")
		if !ok {
			continue
		}
		i, found := index[parent]
		if !found {
			continue
		}
		vd.Resources[i].Subresources = append(vd.Resources[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: kind(res), Verbs: res.Verbs,
		})
	}
	return vd, true
}

// republishDiscovery rebuilds the discovery documents after the remote
// group/versions changed.
func (s *Server) republishDiscovery() {
	s.publishMu.Lock()
	defer s.publishMu.Unlock()
	cur := s.crs.Load()
	next := *cur
	next.discovery = s.buildDiscovery(s.allEndpoints(cur))
	s.crs.Store(&next)
}

// pokeForService wakes the aggregator for a Service or EndpointSlice event
// only when a remote APIService names that service: the availability
// check asks every server for its discovery document, which endpoint churn
// elsewhere in the cluster must not cause.
func (a *aggregator) pokeForService(obj runtime.Object) {
	m, ok := obj.(metav1.Object)
	if !ok {
		a.wake() // a watch (re)started: look at everything again
		return
	}
	name := m.GetName()
	if _, ok := obj.(*discoveryv1.EndpointSlice); ok {
		name = m.GetLabels()[discoveryv1.LabelServiceName]
	}
	for _, r := range a.state.Load().byGV {
		if r.service.Namespace == m.GetNamespace() && r.service.Name == name {
			a.wake()
			return
		}
	}
}
