// Package standalone runs one kubelet on a real container runtime: it
// dials the CRI endpoint (pkg/kubelet/remote), records upstream's pod
// events through the Events API, and runs pkg/kubelet's Kubelet for one
// node until the context ends. `skiff kubelet --container-runtime-endpoint`
// and the node of `skiff up` use it; the simulated nodes use
// pkg/kubelet/hollow instead. With Config.Server it also serves the
// kubelet's HTTPS API (pkg/kubelet/server) on the runtime, stopping the
// kubelet if that server cannot serve.
//
// Invariants: the runtime connection is closed and the event broadcaster
// shut down when Run returns; Run fails at once when the runtime does not
// answer CRI Version within DialTimeout (as upstream's kubelet refuses to
// start), never retrying silently.
package standalone
