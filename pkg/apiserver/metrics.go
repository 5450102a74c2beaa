package apiserver

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, with upstream's names.
type metrics struct {
	registry       *prometheus.Registry
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	storageObjects *prometheus.GaugeVec
	watchers       *prometheus.GaugeVec
	longRunning    *prometheus.GaugeVec
	// WebSocket pod streams: translated exec/attach sessions and
	// port-forward tunnels by code, and every WebSocket stream request by
	// where it was handled (upstream's pkg/util/proxy/metrics).
	streamTranslator   *prometheus.CounterVec
	streamTunnel       *prometheus.CounterVec
	websocketStreaming *prometheus.CounterVec
	handler            http.Handler
}

func newMetrics() *metrics {
	m := &metrics{registry: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_total",
		Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
	}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_duration_seconds",
		Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
		Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
	}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"})
	m.storageObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_storage_objects",
		Help: "Number of stored objects at the time of last check split by kind.",
	}, []string{"resource"})
	m.watchers = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_registered_watchers",
		Help: "Number of currently registered watchers for a given resources",
	}, []string{"group", "version", "kind"})
	m.longRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_longrunning_requests",
		Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.",
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"})
	m.streamTranslator = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_stream_translator_requests_total",
		Help: "Total number of requests that were handled by the StreamTranslatorProxy, which processes streaming RemoteCommand/V5",
	}, []string{"code"})
	m.streamTunnel = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_stream_tunnel_requests_total",
		Help: "Total number of requests that were handled by the StreamTunnelProxy, which processes streaming PortForward/V2",
	}, []string{"code"})
	m.websocketStreaming = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_websocket_streaming_requests_total",
		Help: "Total number of WebSocket streaming requests (exec/attach/portforward) routed by the API server, " +
			"labeled by subresource and proxy_type. proxy_type is proxied_to_kubelet when the kubelet " +
			"handles the request directly; otherwise translated_at_apiserver.",
	}, []string{"subresource", "proxy_type"})
	m.registry.MustRegister(m.requests, m.latency, m.storageObjects, m.watchers, m.longRunning,
		m.streamTranslator, m.streamTunnel, m.websocketStreaming,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

func scopeOf(info *RequestInfo) string {
	switch {
	case !info.IsResourceRequest:
		return ""
	case info.Name != "":
		return "resource"
	case info.Namespace != "":
		return "namespace"
	}
	return "cluster"
}

// observe records one finished request.
func (m *metrics) observe(info *RequestInfo, code int, d time.Duration) {
	if code == 0 {
		code = http.StatusOK
	}
	verb := info.Verb
	if verb == "watch" {
		verb = "WATCH"
	} else if info.IsResourceRequest {
		verb = map[string]string{"get": "GET", "list": "LIST", "create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE"}[verb]
	} else {
		verb = map[string]string{"get": "GET", "post": "POST", "put": "PUT", "delete": "DELETE", "head": "HEAD"}[verb]
	}
	dryRun := ""
	resource := info.Resource
	if !info.IsResourceRequest {
		resource = ""
	}
	m.requests.WithLabelValues(verb, dryRun, info.APIGroup, info.APIVersion, resource, info.Subresource, scopeOf(info), "apiserver", strconv.Itoa(code)).Inc()
	if info.Verb != "watch" {
		m.latency.WithLabelValues(verb, dryRun, info.APIGroup, info.APIVersion, resource, info.Subresource, scopeOf(info), "apiserver").Observe(d.Seconds())
	}
}

func (m *metrics) watchStarted(e *endpoint) {
	m.watchers.WithLabelValues(e.gvk.Group, e.gvk.Version, e.gvk.Kind).Inc()
	m.longRunning.WithLabelValues("WATCH", e.gvr.Group, e.gvr.Version, e.gvr.Resource, "", "", "apiserver").Inc()
}

func (m *metrics) watchEnded(e *endpoint) {
	m.watchers.WithLabelValues(e.gvk.Group, e.gvk.Version, e.gvk.Kind).Dec()
	m.longRunning.WithLabelValues("WATCH", e.gvr.Group, e.gvr.Version, e.gvr.Resource, "", "", "apiserver").Dec()
}

// observeStorage refreshes apiserver_storage_objects every minute.
func (m *metrics) observeStorage(ctx context.Context, s *Server) {
	t := s.cfg.Clock.NewTicker(time.Minute)
	defer t.Stop()
	for {
		for gr, st := range s.stores {
			if n, err := st.Storage.Count(ctx, st.Prefix); err == nil {
				m.storageObjects.WithLabelValues(gr.String()).Set(float64(n))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}
