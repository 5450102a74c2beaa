// Package component is what skiff's control-plane components besides the
// API server (the controller manager, the scheduler) share, as upstream's
// share k8s.io/apiserver's secure serving and client-go's leader election:
//
//   - Serving: ServingConfig (upstream's --secure-port, --bind-address,
//     --tls-cert-file/--tls-private-key-file, --client-ca-file,
//     --authentication-kubeconfig, --authorization-kubeconfig,
//     --authorization-always-allow-paths, --profiling; AddServingFlags adds
//     them), Health (/healthz in upstream's healthz handler format: fixed
//     checks such as the leader election watchdog, named checks of running
//     parts that Add/Fail/Remove, "ping" when there is no other check,
//     ?verbose and ?exclude; Install mounts one on /healthz, /livez or
//     /readyz; ShutdownCheck is /readyz's "shutdown"), NewMux (/healthz, /metrics, /debug/pprof/), Server (HTTPS with a self-signed
//     certificate unless one is given, behind delegated authentication —
//     client certificate of the client CA, else a TokenReview of a bearer
//     token, else system:anonymous — and authorization — always-allowed
//     paths, system:masters, else a SubjectAccessReview) and RunServing
//     (serve while the component runs).
//   - Leader election: LeaderElectionConfig (upstream's --leader-elect*;
//     AddLeaderElectionFlags adds them), RunLeaderElected (campaign on a
//     Lease, run only while leading, ErrLeaderElectionLost when leadership
//     is lost, optionally release the Lease on exit as kube-scheduler
//     does), NewWatchdog (the leaderElection health check) and
//     LeaderGauge (leader_election_master_status{name}).
//   - The client: ClientConnection (--kubeconfig, --kube-api-qps/-burst/
//     -content-type) and its NewClientConfig (explicit config, in-cluster,
//     or kubeconfig: LoadClientConfig), UserAgent; metrics: NewRegistry
//     (the Go and process collectors), RegisterOrShare.
//
// A component's Run is, in outline:
//
//	health := component.NewHealth(watchdog) // the watchdog only with leader election
//	srv, _ := component.NewServer(serving, component.NewMux(serving, health, gatherer), clk, logger)
//	return component.RunServing(ctx, srv, func(ctx context.Context) error {
//		return component.RunLeaderElected(ctx, component.LeaderElection{...}, work)
//	})
//
// What upstream 1.34 serves (observed on its binaries):
// kube-controller-manager serves /healthz only (no /healthz/<check>, no
// /livez or /readyz), its checks leaderElection (with --leader-elect) and
// one per started controller, ping only while there is no other check.
// kube-scheduler serves /healthz and /healthz/<check> (leaderElection with
// --leader-elect, else ping), /livez (ping) and /readyz (leaderElection,
// shutdown, sched-handler-sync).
//
// Invariants:
//   - No package-level mutable state: defaults come from functions, every
//     registry, clock, watchdog and health belongs to the caller.
//   - The package reaches the API server only through pkg/client (never
//     pkg/apiserver, pkg/registry or pkg/storage).
//   - The work guarded by leader election runs at most once per
//     RunLeaderElected and only while leading; RunLeaderElected never
//     returns before that work has returned, never keeps it running after
//     leadership is lost, and (ReleaseOnCancel) never releases the Lease
//     while it may still run.
//   - Every served path goes through authentication and authorization;
//     only the always-allowed paths and system:masters skip the review.
package component
