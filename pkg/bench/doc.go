// Package bench measures a skiff API server the way a user sees it: from
// the client side, over HTTPS, with plain net/http and the k8s.io/api
// types. It backs `skiff bench apiserver`.
//
// Run spawns the server under test as a child process (`<skiff> up
// --data-dir <tmp> --secure-port <free> --storage <etcd|memory>`), so the
// server's memory can be read from /proc/<pid>/status without the
// benchmark's own allocations in it, and measures, in order:
//
//  1. cold start: spawn until the first HTTP 200 from GET /readyz, for
//     memory storage and for embedded etcd on a fresh data directory,
//     repeated (median reported);
//  2. pod create throughput and latency with 1, 16, 64, … concurrent
//     clients, each phase in its own namespace;
//  3. list latency of all pods, consistent (no resourceVersion) and from
//     the watch cache (resourceVersion=0), to the last byte and including
//     a decode into corev1.PodList;
//  4. watch fan-out: many watchers of one namespace's ConfigMaps while a
//     few writers create ConfigMaps; events delivered per second;
//  5. server RSS idle and after the pods exist, and bytes per stored pod.
//
// Each phase also reports the CPU time it used: the server process's
// (/proc/<pid>/stat), this process's (getrusage) and everybody else's
// (/proc/stat minus both), so results from a small shared machine can be
// read for what they are.
//
// RunControllers (`skiff bench controllers`) measures controller managers
// the same way: for each of skiff's (`<skiff> controller-manager`) and
// upstream's kube-controller-manager (a binary built by
// ../shared/tools/build-upstream.sh), a fresh `skiff up --storage=memory`
// with every skiff component disabled, the manager attached as a child
// process with client throttling off, Deployments × replicas created and
// timed until every pod's ADDED event arrived on a watch (pods/s), then
// more Deployments until MemoryPods pods exist, and the manager's RSS read
// idle, after each phase and at its peak. Both managers see the same API
// server, workload and flags; the report compares them with the targets
// (≥ 2× upstream's pods/s, ≤ ½ its memory).
//
// RunScheduler (`skiff bench scheduler`) measures schedulers on upstream's
// scheduler_perf SchedulingBasic shape: for each scheduler (skiff's
// `<Command> scheduler`, upstream's kube-scheduler; both command lines are
// data, SkiffArgs/UpstreamArgs) a fresh `skiff up --storage=memory` with
// every skiff component disabled, Nodes nodes (created concurrently over
// protobuf, the not-ready taint the API server puts on new nodes lifted)
// and Bound pods created already bound, the scheduler started as a child
// process (admin kubeconfig, a KubeSchedulerConfiguration with
// clientConnection qps/burst 5000, no leader election) and ready once it
// bound a warm-up pod; then Pods pending pods are created and a watch on
// their namespace's bound pods (field selector spec.nodeName!=) records
// when each was bound: pods/s (average, and
// p50/p90/p99 of the pods bound in each second), per-pod latency from
// create request to binding, the scheduler's attempt and SLI histograms
// from its /metrics (before/after difference), its RSS (ready, end, peak)
// and CPU. The affinity shape puts a required zone pod affinity and a zone
// spread constraint (maxSkew 1, DoNotSchedule) on every pod, and the run
// fails when the pods it placed violate that skew. With Precreate each
// scheduler is measured once more, beside (never instead of) the issue's
// runs, with every pending pod created before it starts: from its first
// binding to its last, the scheduler's throughput without pod creation
// competing for the machine. ProfileDir collects CPU profiles of the API
// server and the scheduler over each measured phase's first seconds.
//
// RunKubelet (`skiff bench kubelet`) measures pod start-up on skiff's
// kubelet: a fresh `skiff up` with every component disabled, skiff's
// controller manager (client throttling off) and scheduler
// (scheduler_perf's qps/burst 5000) as child processes, and the node agent
// as one more child: `<Command> kubelet --runtime=sim --nodes=N
// --record-events=false` (hollow nodes, Runtime "sim") or one `<Command>
// kubelet --container-runtime-endpoint` node on a containerd this process
// supervises through pkg/containerd with a CNI bridge and pkg/image's
// pause and busybox images imported (Runtime "containerd"; skipped when
// containerd, runc or ctr is missing, or not root). Once every node is
// Ready and untainted and a warm-up pod runs, Pods pods are created
// (Deployments of Replicas, or bare pods) while a protobuf watch of their
// namespace records when each pod was first seen, seen bound and seen
// Running: pods/s from the first create to the last Running, per-second
// throughput, start-up latency created → Running and created → bound
// (both as the watch saw them), the time to 1000 Running (kwok's CI gate)
// and the RSS and CPU of each process. With Compare "kwok", upstream's
// kwok (its kwokctl default stages, nodes created by the benchmark)
// replaces the kubelet on a second, fresh control plane. A containerd run
// deletes its pods through the API at the end and stops containerd with
// every remaining sandbox removed.
//
// The phase functions (CreatePods, ListPods, WatchFanout, …) take a
// Client, so Go benchmarks can drive an in-process pkg/testenv server with
// the same code.
//
// Invariants:
//   - Only time is measured, never asserted: Run fails on errors and on
//     wrong results (a watcher that misses, duplicates or reorders an
//     event; a list with the wrong number of items), never because
//     something was slow. Targets are reported as met or missed.
//   - The workload is deterministic: object names, labels, sizes, the
//     split of work between clients and writers depend only on Config.
//   - The server under test is a separate process that Run starts, stops
//     (SIGTERM, then kill) and whose data directory it removes unless
//     Config.Keep is set. The benchmark never reads server internals.
//   - All requests use JSON (Accept: application/json) over one HTTP/2
//     connection per client transport, as client-go does.
package bench
