// Package hollow runs many simulated nodes in one process: N kubelets
// (pkg/kubelet), each with its own in-memory runtime (pkg/kubelet/sim),
// sharing one API client and one pod informer that dispatches pods by
// spec.nodeName (so N nodes cost one watch, not N).
//
// Node i (0-based) is named <NamePrefix><i>, has InternalIP
// 10.255.<(i+1)/256>.<(i+1)%256> and hands out pod IPs from
// 10.<64+i/256>.<i%256>.0/24 (up to 16384 nodes), and carries the label
// skiff.sh/runtime=sim. A single node may be given its own Name.
//
// With Config.Server the nodes serve their kubelet HTTPS APIs
// (pkg/kubelet/server) so that the API server (logs, nodes/proxy) and
// metrics-server reach them: a single node on its own listener, reporting
// Config.NodeIP (default 127.0.0.1); many nodes on one shared listener,
// node i reporting LoopbackIP(i) = 127.1.<(i+1)/256>.<(i+1)%256> (all of
// 127.0.0.0/8 is this host on Linux), the listener telling the nodes apart
// by the address a connection was made to. Simulated containers have
// empty logs and refuse exec, attach and port-forward (the simulated
// runtime's ErrUnsupported, a 500 with its message as upstream's kubelet
// answers an unsupported runtime call).
//
// Invariants: every kubelet shares the client's identity, the
// --kubeconfig's of `skiff kubelet` (per-node system:node:<name>
// certificates would need one client, and one connection, per node; skiff
// up's own node has one); hollow nodes keep their own pod subnets unless
// a pod CIDR from node IPAM reaches them through a status post; Run returns when ctx ends, after
// every kubelet has stopped, or at the first kubelet that fails to start.
//
// Memory: BenchmarkAgentMemory (memory_test.go) runs the nodes in a child
// process against an in-process API server and reports its resident
// memory, heap, stacks and CPU, with its heap profile
// (SKIFF_HOLLOW_MEMORY_NODES/PODS/OUT; go test ./pkg/kubelet/hollow/ -run
// XXX -bench AgentMemory -benchtime 1x).
package hollow
