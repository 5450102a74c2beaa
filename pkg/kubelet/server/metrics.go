package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// metrics is /metrics: the kubelet_* metrics skiff has, read from the
// runtime when scraped, and the server's requests.
type metrics struct {
	s        *Server
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	handler  http.Handler
}

var (
	runningPodsDesc = prometheus.NewDesc("kubelet_running_pods",
		"[ALPHA] Number of pods that have a running pod sandbox", nil, nil)
	runningContainersDesc = prometheus.NewDesc("kubelet_running_containers",
		"[ALPHA] Number of containers currently running", []string{"container_state"}, nil)
	nodeNameDesc = prometheus.NewDesc("kubelet_node_name",
		"[ALPHA] The node's name. The count is always 1.", []string{"node"}, nil)
	desiredPodsDesc = prometheus.NewDesc("kubelet_desired_pods",
		"[ALPHA] The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.", []string{"static"}, nil)
)

func newMetrics(s *Server) *metrics {
	m := &metrics{s: s, reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubelet_http_requests_total",
		Help: "[ALPHA] Number of the http requests received since the server started"}, []string{"method", "path", "server_type", "long_running"})
	m.reg.MustRegister(m.requests, m, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}

// request counts one request by its first path segment, as upstream's
// metrics buckets do.
func (m *metrics) request(r *http.Request) {
	root, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch root {
	case "healthz", "pods", "stats", "metrics", "containerLogs", "exec", "attach", "portForward", "runningpods", "logs", "configz":
	default:
		root = "other"
	}
	if root == "metrics" && strings.HasPrefix(r.URL.Path, "/metrics/") {
		root = strings.TrimPrefix(r.URL.Path, "/")
	}
	long := strconv.FormatBool(root == "exec" || root == "attach" || root == "portForward" || root == "containerLogs" && r.URL.Query().Get("follow") == "true")
	m.requests.WithLabelValues(r.Method, root, "readwrite", long).Inc()
}

func (m *metrics) serve(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- runningPodsDesc
	ch <- runningContainersDesc
	ch <- nodeNameDesc
	ch <- desiredPodsDesc
}

// Collect implements prometheus.Collector: pods with a ready sandbox,
// containers by state, from the runtime.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	ctx := context.Background()
	rt := m.s.cfg.Runtime
	ch <- prometheus.MustNewConstMetric(nodeNameDesc, prometheus.GaugeValue, 1, m.s.cfg.NodeName)
	ch <- prometheus.MustNewConstMetric(desiredPodsDesc, prometheus.GaugeValue, float64(len(m.s.cfg.Host.GetPods())), "false")
	ch <- prometheus.MustNewConstMetric(desiredPodsDesc, prometheus.GaugeValue, 0, "true")
	if sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}}); err == nil {
		ch <- prometheus.MustNewConstMetric(runningPodsDesc, prometheus.GaugeValue, float64(len(sbs.GetItems())))
	}
	if cs, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{}); err == nil {
		counts := map[string]int{"created": 0, "running": 0, "exited": 0, "unknown": 0}
		for _, c := range cs.GetContainers() {
			switch c.State {
			case runtimeapi.ContainerState_CONTAINER_CREATED:
				counts["created"]++
			case runtimeapi.ContainerState_CONTAINER_RUNNING:
				counts["running"]++
			case runtimeapi.ContainerState_CONTAINER_EXITED:
				counts["exited"]++
			default:
				counts["unknown"]++
			}
		}
		for state, n := range counts {
			ch <- prometheus.MustNewConstMetric(runningContainersDesc, prometheus.GaugeValue, float64(n), state)
		}
	}
}

// serveResourceMetrics is /metrics/resource: upstream's resource metrics
// (the names metrics-server reads) from the summary, each sample with its
// time in milliseconds.
func (s *Server) serveResourceMetrics(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	family := func(name, help, typ string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	sample := func(name, labels string, v float64, ms int64) {
		if labels != "" {
			labels = "{" + labels + "}"
		}
		fmt.Fprintf(&b, "%s%s %s %d\n", name, labels, strconv.FormatFloat(v, 'g', -1, 64), ms)
	}
	q := strconv.Quote
	sum, err := s.summary(r.Context())
	if sum == nil {
		sum = &Summary{}
	}
	type ctr struct {
		ns, pod string
		c       ContainerStats
	}
	var ctrs []ctr
	for _, p := range sum.Pods {
		for _, c := range p.Containers {
			ctrs = append(ctrs, ctr{p.PodRef.Namespace, p.PodRef.Name, c})
		}
	}
	cl := func(c ctr) string {
		return "container=" + q(c.c.Name) + ",namespace=" + q(c.ns) + ",pod=" + q(c.pod)
	}
	family("container_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the container in core-seconds", "counter")
	for _, c := range ctrs {
		if c.c.CPU != nil && c.c.CPU.UsageCoreNanoSeconds != nil {
			sample("container_cpu_usage_seconds_total", cl(c), float64(*c.c.CPU.UsageCoreNanoSeconds)/1e9, c.c.CPU.Time.UnixMilli())
		}
	}
	family("container_memory_working_set_bytes", "[STABLE] Current working set of the container in bytes", "gauge")
	for _, c := range ctrs {
		if c.c.Memory != nil && c.c.Memory.WorkingSetBytes != nil {
			sample("container_memory_working_set_bytes", cl(c), float64(*c.c.Memory.WorkingSetBytes), c.c.Memory.Time.UnixMilli())
		}
	}
	family("container_start_time_seconds", "[STABLE] Start time of the container since unix epoch in seconds", "gauge")
	for _, c := range ctrs {
		sample("container_start_time_seconds", cl(c), float64(c.c.StartTime.UnixNano())/1e9, c.c.StartTime.UnixMilli())
	}
	n := sum.Node
	family("node_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the node in core-seconds", "counter")
	if n.CPU != nil && n.CPU.UsageCoreNanoSeconds != nil {
		sample("node_cpu_usage_seconds_total", "", float64(*n.CPU.UsageCoreNanoSeconds)/1e9, n.CPU.Time.UnixMilli())
	}
	family("node_memory_working_set_bytes", "[STABLE] Current working set of the node in bytes", "gauge")
	if n.Memory != nil && n.Memory.WorkingSetBytes != nil {
		sample("node_memory_working_set_bytes", "", float64(*n.Memory.WorkingSetBytes), n.Memory.Time.UnixMilli())
	}
	pl := func(p PodStats) string { return "namespace=" + q(p.PodRef.Namespace) + ",pod=" + q(p.PodRef.Name) }
	family("pod_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the pod in core-seconds", "counter")
	for _, p := range sum.Pods {
		if p.CPU != nil && p.CPU.UsageCoreNanoSeconds != nil {
			sample("pod_cpu_usage_seconds_total", pl(p), float64(*p.CPU.UsageCoreNanoSeconds)/1e9, p.CPU.Time.UnixMilli())
		}
	}
	family("pod_memory_working_set_bytes", "[STABLE] Current working set of the pod in bytes", "gauge")
	for _, p := range sum.Pods {
		if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			sample("pod_memory_working_set_bytes", pl(p), float64(*p.Memory.WorkingSetBytes), p.Memory.Time.UnixMilli())
		}
	}
	family("resource_scrape_error", "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", "gauge")
	scrapeErr := 0.0
	if err != nil {
		scrapeErr = 1
	}
	fmt.Fprintf(&b, "resource_scrape_error %g\n", scrapeErr)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
