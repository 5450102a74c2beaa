// Package controllermanager is skiff's kube-controller-manager: it runs
// the controllers of pkg/controller/... in one process against an API
// server reached over HTTP through pkg/client, as upstream's does.
//
//	m, err := controllermanager.New(controllermanager.DefaultConfig()) // + Kubeconfig
//	err = m.Run(ctx)
//
// What a Manager does, in order:
//
//  1. Serves /healthz (as upstream's: checks "leaderElection" with leader
//     election and one per running controller, "ping" while there is no
//     other; no /healthz/<check>) and /metrics (Prometheus: client_golang's Go and process
//     collectors, the workqueue metrics under upstream's names —
//     workqueue_depth, workqueue_adds_total, ... labelled by queue name —
//     and leader_election_master_status) over HTTPS on
//     BindAddress:SecurePort (upstream's 0.0.0.0:10257) with a self-signed
//     certificate unless TLSCertFile/TLSKeyFile are given, behind
//     upstream's delegated authentication and authorization (Config.Serving,
//     served by pkg/component). SecurePort 0 turns serving off, as upstream.
//  2. With LeaderElection.LeaderElect, campaigns for the Lease
//     kube-system/kube-controller-manager (upstream's lock, durations
//     15s/10s/2s) and runs the controllers only while leading. Losing the
//     lease ends Run with ErrLeaderElectionLost (upstream exits): a
//     manager never keeps running controllers it no longer leads
//     (component.RunLeaderElected).
//  3. Builds one client (QPS/Burst 20/30, protobuf, as upstream's
//     --kube-api-* defaults), one SharedInformerFactory (its transform
//     drops managedFields, as upstream's, and interns pods: pods of one
//     template share their equal parts, pkg/client/intern), one event
//     broadcaster writing to the Events API, then calls the InitFunc of
//     every enabled controller of the table (Controllers), in table order,
//     then starts the informers and runs each controller's Run until the
//     context ends. Each controller gets its own client; with
//     UseServiceAccountCredentials (upstream's
//     --use-service-account-credentials, set by `skiff up` as kubeadm
//     does) it authenticates as upstream's service account for that
//     controller, kube-system/<ServiceAccountName>, created if missing and
//     holding tokens from the TokenRequest API, and records its events
//     with that identity (identities.go); the informers and leader
//     election keep the manager's identity. The accounts and their tokens
//     are requested through an unthrottled client of the manager's (at
//     upstream's 20 QPS they delayed every controller by ~4 s at start).
//
// The table (Controllers) lists upstream's controllers by their canonical
// names ("replicaset-controller", ...) with upstream's aliases
// ("replicaset"), default-disabled flag, worker-count flag
// (--concurrent-replicaset-syncs) and default; entries skiff does not
// implement yet have a nil Init and are skipped (logged). --controllers has
// upstream's syntax and semantics: "*" enables every controller not
// disabled by default, "foo" enables foo, "-foo" disables foo; a name
// that is neither a controller nor an alias is refused.
//
// Registering a controller: give its table entry an Init (in init.go) that
// maps the ControllerContext onto the controller package's Config —
// Client, Informers (ask for informers in New: the factory is started
// after every Init), Recorder (source component = the canonical name),
// Clock, Logger, Workers (the entry's --concurrent-*-syncs, added to
// `skiff controller-manager` from the table), MetricsProvider (pass it
// with the queue's upstream name to the workqueue config), Registry (for
// the controller's own metrics, upstream's names) — and returns
// the controller (or nil, nil to stay off, logged). Manager-wide knobs a
// controller needs (RootCAFile) are fields of Config, read through
// cc.Config. Tests get the whole manager with
// testenv.Config{ControllerManager: InProcess(Config{Controllers: ...})};
// a controller package's own tests import testenv, never this package
// (import cycle).
//
// Invariants:
//   - The package never imports the server (apiserver, registry,
//     storage): controllers talk to the API only through pkg/client.
//   - No package-level mutable state: the table is built by a function,
//     every clock, registry and random source belongs to a Manager.
//   - Controllers are started only after every enabled controller's Init
//     returned (so each registered its informers), and the informers are
//     started after that; an Init error stops the manager before any
//     controller runs, as upstream.
//   - Controllers never write to cached objects (DeepCopy first): pods
//     in the cache share parts (TestControllersLeaveCachedPodsUnchanged).
//   - A controller whose Run returns an error before the context ends is
//     reported by its /healthz check from then on (the others keep running).
package controllermanager
