// Package cluster assembles runnable control planes from the components:
// Up is the all-in-one `skiff up` (PKI, kubeconfig, embedded etcd or memory
// storage, API server), APIServer is the standalone `skiff apiserver`.
//
// Invariants: cmd/skiff only fills these Configs; everything a cluster
// keeps across restarts (PKI, etcd data, kubeconfig) lives in DataDir and
// is reused, never regenerated while still valid.
package cluster
