// Package etcd3 is the etcd v3 storage.KV: every KV operation is one etcd
// request (writes are transactions comparing the key's mod revision), so the
// resourceVersion a client sees is etcd's revision. It also starts an etcd
// member inside the process for the all-in-one `skiff up` (listening only on
// unix sockets in its 0700 data directory; requests go through etcd's
// in-process client, watches through a gRPC client on the socket), and
// connects to external clusters for `skiff apiserver --etcd-servers`.
//
// Invariants: nothing is cached here; a failed compare returns the key's
// current value so callers retry without another read.
package etcd3
