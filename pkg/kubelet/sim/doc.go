// Package sim is an in-memory container runtime ("hollow" runtime, as
// kubemark's and kwok's): it implements pkg/kubelet/cri's RuntimeService
// and ImageService without processes, so that one skiff process can run
// thousands of simulated nodes whose kubelets go through the real pod
// lifecycle.
//
// Sandboxes are READY as soon as they are run and get a pod IP from the
// runtime's pod subnet. Containers go CREATED → RUNNING → EXITED with CRI
// timestamps from the injected clock. States are computed lazily from the
// clock: nothing runs in the background, a relist at time t sees what a
// real runtime would have at t, and tests with a fake clock are
// deterministic.
//
// Conventions (what makes a simulated container end):
//   - StartContainer takes Config.StartLatency: the container is CREATED
//     until then, RUNNING after.
//   - StopContainer makes the container exit after Config.StopLatency,
//     bounded by the request's timeout (the grace period): exit code 143
//     (SIGTERM) when it stops within the timeout, 137 (SIGKILL) otherwise.
//   - An init container (annotation skiff.sh/container-type=init, which
//     the kubelet sets) exits 0 Config.InitRunDuration after it started.
//   - A regular container runs to completion when its pod's annotation
//     sim.skiff.sh/run-duration (a Go duration, e.g. "5s") is set, or
//     else when the pod's restartPolicy (annotation
//     skiff.sh/pod-restart-policy, set by the kubelet) is OnFailure or
//     Never — Jobs — after Config.RunDuration (skiff kubelet
//     --sim-run-duration). It exits with the pod annotation
//     sim.skiff.sh/exit-code (default 0). Sidecars (init containers with
//     restartPolicy Always) and containers of restartPolicy Always pods
//     without the annotation run until stopped. An ephemeral container
//     (kubectl debug; container-type ephemeral) runs to completion as a
//     Job's container does, exit 0.
//
// Network: pod IPs come from Config.PodSubnet, replaced by the node's pod
// CIDR when the kubelet calls UpdateRuntimeConfig (new pods get IPs from
// it; the first IPv4 CIDR of a dual-stack list). With
// Config.WaitForPodCIDR (skiff up's node) Status reports NetworkReady=false
// (NetworkPluginNotReady) until then, as a CNI runtime whose network
// config is written from the pod CIDR, so the node turns Ready only once
// node IPAM gave it one.
//
// Usage: a running container uses the pod annotations
// sim.skiff.sh/cpu-usage (default 1m) and sim.skiff.sh/memory-usage
// (default 4Mi), reported by the CRI stats calls, so that `kubectl top`
// and the HPA work on simulated nodes. ExecSync succeeds in a running
// container (exec probes and hooks pass); Exec, Attach and PortForward
// fail with cri.ErrUnsupported (there is no process to stream from).
//
// Memory: a runtime keeps its own copy of the labels and annotations a
// sandbox or container was created with (equal annotations, as those of
// the pods of one template, share one copy among all the runtimes of the
// process), and the results of the list and
// status calls share them (and the metadata and image specs) instead of
// copying them per call: a relist of every node every second would
// otherwise copy every pod's maps. Callers treat results as read-only (as
// the kubelet does with what it gets from any runtime).
//
// Invariants: every method is safe for concurrent use; IDs are unique for
// the runtime's life; a removed sandbox removes its containers and frees
// its IP; errors for unknown IDs wrap cri.ErrNotFound.
package sim
