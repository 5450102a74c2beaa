// Package kubelet is skiff's node agent: it registers a Node, renews its
// Lease, posts node status, and runs the pods bound to the node through a
// container runtime (pkg/kubelet/cri): the simulated runtime
// (pkg/kubelet/sim) today, containerd over CRI later, on the same code.
//
// Shape (upstream's, reduced to what the simulated runtime needs):
//   - a PodSource delivers the pods bound to the node (standalone: an
//     informer with the spec.nodeName=<node> field selector; many hollow
//     nodes in one process: one shared informer dispatching by nodeName;
//     the cached pods drop their managedFields and share their equal
//     parts through pkg/client/intern, so they are read-only);
//   - one pod worker per pod (a goroutine; updates of one pod are
//     serialised, a burst of updates coalesces into one sync);
//   - syncPod reads the pod's runtime state, asks computePodActions (a pure
//     function of pod, runtime state and time) what to do, does it, and
//     hands the resulting API status to the status manager;
//   - the PLEG relists the runtime every second and triggers the sync of
//     every pod whose sandboxes or containers changed (it keeps a hash of
//     each pod's sandbox and container IDs and states), and removes what
//     belongs to pods the kubelet no longer has;
//   - the status manager writes pods/status (a PUT guarded by the
//     resourceVersion the status was computed from, status.go) only when
//     the status changed (it remembers a written status until the pod
//     source delivers the write's result, then the source's copy serves),
//     and deletes a pod with grace period 0 (UID precondition) once a pod
//     being deleted has no running container left;
//   - the CRI configurations come from pure builders (config.go, env.go,
//     images.go) of the pod, what the node knows of itself and the
//     objects read through Lookups (configMaps and secrets by GET through
//     pkg/client, which the Node authorizer limits to the node's pods;
//     services from an informer): the container environment as upstream's
//     makeEnvironmentVariables (env, fieldRef, resourceFieldRef,
//     configMap/secret refs, envFrom, service variables, $(VAR)
//     expansion in env, command and args); an error there is the
//     container's CreateContainerConfigError. Volume mounts come from
//     Config.Mounts, by default the volume manager's;
//   - with Config.Volumes, the volume manager (pkg/kubelet/volume, under
//     Config.RootDir) sets up a pod's volumes before anything of it runs
//     (each failure is a FailedMount event on the pod, which stays
//     Pending and is retried after the sync error back-off), refreshes
//     their contents, releases them when the pod finished (Succeeded or
//     Failed, no container running; as upstream's syncTerminatedPod) and
//     tears them down once the pod is gone from the API server and its
//     containers and sandboxes are removed; every minute, once the pod
//     source has listed the pods, it removes pod directories of pods the
//     kubelet does not have (seen so in two rounds in a row), as
//     upstream's housekeeping; containers also get upstream's managed
//     /etc/hosts (<root>/pods/<uid>/etc-hosts: localhost entries, the
//     pod's IPs with its hostname and FQDN, hostAliases; the node's file
//     with host network) unless they mount /etc/hosts themselves; without
//     Config.Volumes (hollow nodes) there is no volume work and no hosts
//     file;
//   - images as upstream's image manager: the pull policy (defaulted
//     from the tag when empty), ImageStatus before pulling unless Always,
//     ":latest" added to untagged names, the pod's imagePullSecrets
//     (.dockerconfigjson/.dockercfg) matched to the image's registry as
//     upstream's keyring (docker.io defaults, globs, ports, paths) and
//     tried in turn as CRI AuthConfig, back-off per pod and image (10 s
//     doubling to 5 min); waiting reasons ErrImagePull, ImagePullBackOff,
//     ErrImageNeverPull, InvalidImageName with upstream's messages and
//     events (Pulling, Pulled, Failed, BackOff, ErrImageNeverPull);
//   - containers as upstream's generateContainerConfig: the effective
//     security context (pod values under the container's; runAsUser,
//     runAsGroup, capabilities, privileged, readOnlyRootFilesystem,
//     allowPrivilegeEscalation as no_new_privs, supplementalGroups and
//     fsGroup, seccomp with Config.SeccompDefault, moby's masked and
//     read-only paths unless procMount Unmasked, the image's user when
//     runAsUser is unset, the runAsNonRoot check with upstream's errors),
//     resources (CPU shares from the request min 2, CFS quota over 100 ms
//     from the limit, memory limit, oom_score_adj by QoS class; hugepages
//     ignored); sandboxes as generatePodSandboxConfig: hostname/subdomain
//     (setHostnameAsFQDN), DNS (ClusterFirst/Default/None/
//     ClusterFirstWithHostNet, dnsConfig merged, resolv.conf limits),
//     port mappings, host network/PID/IPC namespaces, sysctls, the pod's
//     summed resources, the log directory; RunPodSandbox gets the handler
//     of the pod's RuntimeClass. Cgroup parents
//     (/kubepods/<qos>/pod<uid>) only with Config.CgroupsPerQOS: the
//     runtime (runc, cgroupfs) creates the directories, the kubelet
//     writes no pod-level limits and removes the empty directories once
//     the pod is gone;
//   - with a volume manager (pods have a directory), containers also get
//     the managed /etc/hosts (<pod dir>/etc-hosts) and a termination
//     message file per run (<pod dir>/containers/<name>/<id>, mounted at
//     terminationMessagePath); an exited container's message is the
//     file's content, or with FallbackToLogsOnError the tail of its log;
//   - ephemeral containers (kubectl debug, ephemeral.go) as upstream's:
//     started once each in the pod's sandbox while it runs (also during
//     init, not in the sync that creates a sandbox), never restarted,
//     in their targetContainerName's PID namespace (NamespaceMode
//     TARGET; a target not running is a CreateContainerConfigError),
//     killed with the pod, reported in ephemeralContainerStatuses (no
//     effect on phase or readiness);
//   - the node status loop posts status on change or every
//     NodeStatusReportFrequency; the lease loop renews
//     kube-node-lease/<node> every leaseDuration/4 (10 s).
//
// Memory (a hollow agent runs 10,000 pods on 1,000 nodes in one process):
// the goroutines that live as long as a pod or a node wait on their own
// 2 KiB stacks and run each sync or tick on a shared set of goroutines
// (deep.go; Go never shrinks a stack a sync grew below 4 KiB again): a pod
// worker runs its syncs through its WorkPool and waits for each, so order and
// serialisation are its own; a node's periodic work runs from two
// goroutines (tasks.go), one for the lease and node status, one, once the
// pod source has given the pods, for the PLEG, garbage collection and
// eviction, each task on its own ticker, its runs never overlapping.
//
// Invariants: the kubelet reaches the API server only through pkg/client
// (test/arch); all time comes from Config.Clock; status conditions keep
// their lastTransitionTime while their status does not change; a pod's
// phase never leaves Succeeded or Failed; restart back-off is 10 s
// doubling to 5 min, computed from the runtime's restart count and finish
// time (a container that ran 10 min starts over), so it survives a
// kubelet restart.
//
// Probes run in pkg/kubelet/prober (one worker per probe); a result
// change syncs the pod; a container whose liveness or startup probe
// failed is killed (Killing "Container x failed liveness probe, will be
// restarted", the probe's terminationGracePeriodSeconds if set) and
// restarted per restartPolicy and back-off. Lifecycle hooks as
// upstream's: postStart (exec, httpGet, sleep) right after the start, a
// failure recorded as FailedPostStartHook and the container killed;
// preStop before each stop, within the grace period, StopContainer then
// getting what is left (at least 2 s). Containers stop in parallel, one
// goroutine each. Hollow nodes simulate probes and skip hooks
// (Config.SimulateHandlers: readiness after initialDelaySeconds).
//
// Garbage collection (pkg/kubelet/gc, upstream's policies): every minute
// dead containers beyond the newest per (pod, container name) and all of
// those of pods that are gone, evicted or deleted, then empty sandboxes
// and removable pods' log directories; every 5 minutes unused images
// (never the sandbox image, Config.SandboxImage) least recently used
// first when the image fs is 85 % full, down to 80 %. The filesystems,
// memory and PIDs come from Config.Machine: HostMachine for a real node
// (statfs, /proc), else a simulated machine of Config.Capacity whose usage
// is what the runtime reports.
//
// The pod CIDR (podcidr.go), as upstream's: a spec.podCIDRs the kubelet
// sees on its Node (registration, status posts; while the node is not
// Ready and has none, a read of the Node every status period) is passed
// to the runtime with UpdateRuntimeConfig when it changed; after
// registration a fast loop (100 ms, at most 2 min) posts the status as
// soon as the node can turn Ready. Node status is written as a merge
// patch of the status subresource (NodeRestriction refuses a kubelet's
// write carrying stale taints).
//
// Identity: the kubelet runs with its client's identity; `skiff up` gives
// its node system:node:<name> in system:nodes (pkg/cluster), standalone
// `skiff kubelet` uses its --kubeconfig's.
//
// Node-pressure eviction (pkg/kubelet/eviction, upstream's manager):
// every 10 s the signals (memory.available, nodefs/imagefs available and
// inodesFree, pid.available from Config.Machine; pods' usage from the
// runtime's container stats) are checked against Config.EvictionThresholds
// (upstream's default hard thresholds); the node's MemoryPressure,
// DiskPressure and PIDPressure conditions come from it (held 5 min after
// the pressure, upstream's reasons and messages); for a disk signal dead
// containers and unused images go first; else the first ranked pod that
// is not critical is evicted: a Warning Evicted event, its containers
// killed with 1 s (hard threshold), status Failed, reason Evicted,
// upstream's message and the DisruptionTarget condition. A pod the
// runtime holds nothing of is admitted through the eviction admit
// handler (BestEffort refused under MemoryPressure, all but critical
// pods under other pressure: Failed, reason Evicted, "The node had
// condition: [MemoryPressure]. ").
//
// Pods over their local storage limits (emptyDir sizeLimit,
// ephemeral-storage limits) are evicted too; a pod's disk usage is its
// writable layers (runtime stats), its containers' log files under
// PodLogDir and its emptyDirs under RootDir, walked at most once a
// minute.
//
// Not yet: allocatableMemory.available (upstream's threshold for
// --enforce-node-allocatable=pods), the memcg notifier.
//
// Container logs are rotated as upstream's container log manager does
// (logrotate.go): every 10 s a running container's log past
// ContainerLogMaxSize (10Mi) is renamed <log>.<timestamp> and reopened by
// the runtime, ContainerLogMaxFiles (5) kept in all; rotated files stay
// uncompressed (upstream gzips all but the newest).
//
// The kubelet's HTTPS API (pkg/kubelet/server) runs beside a Kubelet
// (pkg/kubelet/standalone, pkg/kubelet/hollow for a single node): the
// Kubelet is its Host (serverhost.go: pods by name with the status it
// last wrote) and reports the server's port as
// status.daemonEndpoints.kubeletEndpoint (Config.KubeletPort).
package kubelet
