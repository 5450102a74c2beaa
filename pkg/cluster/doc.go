// Package cluster assembles runnable control planes from the components:
// Up is the all-in-one `skiff up` (PKI, kubeconfig, embedded etcd or memory
// storage, API server, controller manager), APIServer is the standalone
// `skiff apiserver`.
//
// Up runs the controller manager in-process (unless
// --disable=controller-manager) over the same HTTPS client path as a
// standalone one, authenticated as system:kube-controller-manager (its
// kubeconfig is written to DataDir/controller-manager.kubeconfig), started
// once the API server is ready and stopped before it. It runs without
// leader election: one `skiff up` owns its data directory (locked), so no
// second instance can share its cluster, and an election would only add a
// Lease write every 2 s and delay the controllers' start by up to a retry
// period. (k3s elects because several servers share one datastore; skiff
// up has no such mode.) A standalone `skiff controller-manager` elects by
// default, as upstream.
//
// Up runs a node of its own (component "kubelet", node.go) unless
// --disable=kubelet: one in-process kubelet named after the host
// (lowercase), as system:node:<host> in system:nodes with a client
// certificate of the cluster CA (DataDir/kubelet/pki, kubeconfig
// DataDir/kubelet.kubeconfig); Up enables NodeRestriction admission for it
// (as kubeadm does), the default --authorization-mode has the Node
// authorizer. It serves the kubelet API on --kubelet-port (10250, or a
// free port when that one is taken). Its runtime: the CRI runtime at
// --container-runtime-endpoint; else, when containerd, runc and ctr are
// installed and skiff runs as root (or --container-runtime=containerd), a
// containerd skiff supervises under DataDir/containerd (pkg/containerd)
// with skiff's pause image imported and the CNI network
// DataDir/cni/net.d/10-skiff.conflist (bridge cni0, host-local IPAM over
// the node's pod CIDR, portmap; cni.go) written when the kubelet passes
// the pod CIDR on (UpdateRuntimeConfig), its containers removed on stop
// only with --storage=memory; else (or with --container-runtime=sim) the
// simulated runtime, labelled skiff.sh/runtime=sim, and Up's output says
// so; its network waits for the node's pod CIDR when the in-process
// controller manager assigns one.
//
// Up's controller manager allocates node pod CIDRs (node IPAM, on as k3s
// has it) from --cluster-cidr, default 10.42.0.0/16 (k3s's; kubeadm has no
// default and the common network plugin choice is 10.244.0.0/16), /24 per
// node, with the service range 10.96.0.0/12 kept out.
//
// Up runs a metrics-server (pkg/metricsserver; --disable=metrics-server
// leaves it out) as upstream's is deployed: an aggregated API server for
// metrics.k8s.io/v1beta1, installed with the objects of upstream's
// manifest (ClusterRoles system:metrics-server and
// system:aggregated-metrics-reader, the binding, the selectorless Service
// kube-system/metrics-server with an EndpointSlice at the host's
// non-loopback IPv4 address, the APIService with the cluster CA as
// caBundle). It scrapes kubelets as user system:metrics-server with a
// client certificate of the cluster CA. Without a non-loopback address it
// is not started, and skiff up logs why. Its port is chosen once and kept
// in <data-dir>/metrics-server.port: a restart serves on it again (the
// Service and EndpointSlice stay as they were) unless it is taken, when
// skiff up logs so and keeps a new one.
//
// Up accepts bootstrap tokens (--enable-bootstrap-token-auth, on as kubeadm
// sets it) and creates kubeadm's ClusterRoleBindings for joining nodes
// (kubeadm.go: kubeadm:kubelet-bootstrap, kubeadm:node-autoapprove-bootstrap
// for group system:bootstrappers:kubeadm:default-node-token,
// kubeadm:node-autoapprove-certificate-rotation for system:nodes), so that a
// kubelet given a token of `skiff token create` gets its client
// certificate through a CSR the controller manager approves and signs.
//
// Invariants: cmd/skiff only fills these Configs; everything a cluster
// keeps across restarts (PKI, etcd data, kubeconfig) lives in DataDir and
// is reused, never regenerated while still valid.
package cluster
