// Package server is the kubelet's HTTPS API (upstream's :10250), what the
// API server reaches for `kubectl logs`, `exec`, `attach`, `port-forward`,
// and what metrics-server and `kubectl get --raw
// /api/v1/nodes/<n>/proxy/...` read:
//
//   - /healthz (ping, log, syncloop), /pods (a v1 PodList), /logs/ (the
//     files of Config.SystemLogDir, /var/log for a real node, as upstream's
//     system log handler; authorized as nodes/log);
//   - /containerLogs/<ns>/<pod>/<container>?follow&previous&tailLines&
//     limitBytes&sinceSeconds&sinceTime&timestamps&stream: the container's
//     CRI-format log file (`<RFC3339Nano> <stdout|stderr> <P|F> <msg>`,
//     partial lines joined), the container chosen from the pod's status
//     as upstream's validateContainerLogStatus does (its error messages);
//     following polls every LogPollInterval, moves to the new file when
//     the log is rotated (the file at the path replaced) and ends when the
//     container is no longer running; a container whose runtime keeps no
//     log file (the simulated runtime: empty LogPath) has an empty log;
//   - /exec|/attach/<ns>/<pod>[/<uid>]/<container>?command&input&output&
//     error&tty (also stdin/stdout/stderr) and /portForward/<ns>/<pod>
//     [/<uid>]?port: the runtime's Exec/Attach/PortForward gives the
//     streaming URL, the client's upgrade request (SPDY or WebSocket) is
//     proxied there and the upgraded connections spliced
//     (pkg/upgradeproxy); a runtime error is upstream's answer (404 for
//     cri.ErrNotFound, else 500 with the error, e.g. the simulated
//     runtime's "not supported by this runtime"), a request that is not
//     an upgrade 400 "Upgrade request required";
//   - /stats/summary (the stats/v1alpha1 Summary JSON, types defined here
//     with upstream's field names), /metrics/resource (upstream's resource
//     metrics: container_/pod_/node_ cpu_usage_seconds_total and
//     memory_working_set_bytes, container_start_time_seconds,
//     resource_scrape_error), both from the runtime's container stats (a
//     pod is the sum of its running containers; the node the sum of its
//     pods unless Config.NodeStats measures the machine — MachineStats:
//     the root cgroup's CPU and the host's memory, which
//     pkg/kubelet/standalone uses), and /metrics
//     (kubelet_node_name, kubelet_desired_pods, kubelet_running_pods,
//     kubelet_running_containers,
//     kubelet_http_requests_total, Go and process metrics).
//
// Authentication and authorization as upstream's kubelet with
// authentication.x509.clientCAFile, webhook authentication and Webhook
// authorization: a client certificate of Config.ClientCA, else a bearer
// token the Authenticator accepts (NewWebhook: TokenReview, cached 2 min),
// else system:anonymous only when Config.Anonymous (off, as the kubelet
// configuration's default that kubeadm uses); no user is a 401
// "Unauthorized" — on every path, /healthz included (upstream installs its
// auth filter on the whole :10250 server; the unauthenticated health port
// is a separate plain-HTTP listener, Config.HealthzAddress, upstream's
// 127.0.0.1:10248, serving /healthz only). Then
// SubjectAccessReviews (NewWebhook; allowed cached 5 min, denied 30 s)
// with upstream's attributes: verb from the HTTP method (GET get, POST
// create, PUT update, PATCH patch, DELETE delete), resource nodes, name
// the node, subresource by path with 1.34's fine-grained authorization
// (/stats stats, /metrics metrics, /logs log, /healthz healthz then proxy,
// /pods pods then proxy, anything else proxy), the first that allows
// wins; none is a 403 "Forbidden (user=<u>, verb=<v>, resource=nodes,
// subresource(s)=[<subs>])". A nil Authorizer allows everything
// (upstream's AlwaysAllow).
//
// The serving certificate is Config's, else a self-signed pair as
// upstream's kubelet makes without TLS bootstrap ("<host>@<time>" signed by
// "<host>-ca@<time>", kept as kubelet.crt/.key in CertDirectory); the API
// server does not verify it unless given the CA (upstream's
// --kubelet-certificate-authority).
//
// Invariants: the server reaches the API server only for reviews, through
// pkg/client; it never changes the pods or the runtime's state (reads and
// streaming sessions only); the kubelet side it needs is the narrow Host
// interface (pods by name with their newest status), the rest comes from
// the runtime (cri.RuntimeService).
package server
