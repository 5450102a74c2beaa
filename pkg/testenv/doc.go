// Package testenv starts a whole API server inside a Go test: memory
// storage, TLS with a throwaway CA, an admin client certificate and a
// kubeconfig, all in a few milliseconds and with nothing to download.
//
// With Config.ControllerManager (controllermanager.InProcess(cfg) for
// skiff's), a controller manager runs against the server from Start to
// Stop, so that a controller author's test gets the built-in controllers
// (default service accounts, kube-root-ca.crt, and whatever else the
// controller table implements) as on a real cluster. Like a real cluster,
// they act asynchronously: wait for what they create.
//
// With Config.RBAC the server authorizes as upstream's defaults
// (Node,RBAC) with upstream's bootstrap policy; the components then run
// with their own identities (system:kube-controller-manager — give the
// manager UseServiceAccountCredentials, as kubeadm does — and
// system:kube-scheduler), and Environment.Forbidden lists every request
// refused with 403 so far, so that a test can check that a component works
// with exactly its bootstrap permissions (RecordForbidden does the same
// for a server testenv does not start). Environment.UserCertificate issues
// a client certificate for any user and groups, to act as them.
//
// Invariants: every Environment is independent (its own storage, port and
// certificates); Stop (or the test's cleanup) ends the server and waits
// for it.
//
// Aggregated APIs: NewAggregatedServer runs a handler as an aggregated API
// server (its own serving CA, trusting the front-proxy client certificate
// the API server presents), and Environment.ServeAggregatedAPI registers
// one for a group/version and waits until it is Available, so that a
// controller reading metrics.k8s.io or another extension API can be tested
// against the real proxy path.
//
// Test hooks: Compact compacts the storage and makes the server's watch
// caches start over at the current revision, so that from then on a watch
// from any earlier resourceVersion gets a real 410 Gone from the server.
package testenv
