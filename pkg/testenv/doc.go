// Package testenv starts a whole API server inside a Go test: memory
// storage, TLS with a throwaway CA, an admin client certificate and a
// kubeconfig, all in a few milliseconds and with nothing to download.
//
// Invariants: every Environment is independent (its own storage, port and
// certificates); Stop (or the test's cleanup) ends the server and waits
// for it.
package testenv
