// Package metricsserver is skiff's metrics-server: it serves the resource
// metrics API, metrics.k8s.io/v1beta1 (NodeMetrics and PodMetrics), from
// what every node's kubelet reports at /metrics/resource, so that
// `kubectl top nodes|pods` and the HPA controller work. It runs as
// upstream's metrics-server does: an aggregated API server behind the
// APIService v1beta1.metrics.k8s.io, which the API server proxies to.
//
// Scraping: every Resolution (15 s, metrics-server's --metric-resolution)
// each node with a Ready condition True is scraped at
// https://<InternalIP>:<kubelet port>/metrics/resource, with the client
// certificate of Config.KubeletTLS (the kubelet authenticates it against
// the cluster CA and authorizes nodes/metrics by SubjectAccessReview).
// The kubelet's samples carry their own timestamps: CPU usage is the rate
// between the last two samples of a series with different timestamps
// (the cumulative *_cpu_usage_seconds_total; a scrape bringing no newer
// sample, as a runtime's cached stats do, changes nothing), memory the
// last working set; the window is the time between the two samples, as
// metrics-server reports it. A series needs two samples before it has a
// figure; a container whose counter went backwards (restarted) starts
// over.
//
// Serving: /apis/metrics.k8s.io/v1beta1 (discovery), nodes and
// namespaces/<ns>/pods (get and list, with labelSelector matched against
// the Node's or Pod's labels, which the metrics carry, and
// fieldSelector metadata.name / metadata.namespace). Errors are
// metav1.Status as metrics-server's: `nodemetrics.metrics.k8s.io "x" not
// found`, `podmetrics.metrics.k8s.io "ns/x" not found`. Requests are
// accepted only with a client certificate of Config.RequestHeaderCA (the
// API server's front-proxy certificate): the API server authenticated
// and authorized the caller before proxying (its X-Remote-User is
// trusted, not checked again).
//
// Invariants: the metrics reflect only samples scraped from kubelets, never
// made up; a node or pod that stops reporting is dropped at the next
// scrape; all time comes from Config.Clock; the decision code (rates,
// filtering) is a function of stored samples that tests call directly.
package metricsserver
