// Package eviction is the kubelet's node-pressure eviction, as upstream's
// eviction manager.
//
// Decide is a pure function of (thresholds, observations, active pods with
// their usage, the previous pass's State, now): the thresholds met (the
// signal's available amount below the threshold's quantity or percentage
// of capacity; one met stays met until the signal is back above it plus
// its minimum reclaim), the node conditions (MemoryPressure, DiskPressure,
// PIDPressure), reported for PressureTransitionPeriod (5 min) after the
// last pass that saw the pressure, the thresholds whose grace period
// elapsed (hard ones: at once) with memory first, and for the first of
// them the pods ranked as upstream's rank functions (memory: usage above
// requests first, then lower priority, then usage minus requests; disk:
// the same with ephemeral storage — writable layers, logs, local volumes —
// or inodes; PIDs: lower priority, then more processes; pods without
// stats first) and the first that is not critical (static, mirror, or
// priority ≥ 2000000000) with upstream's message ("The node was low on
// resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container
// app was using 90Mi, request is 0, has larger consumption of memory. ")
// and grace period (1 s for a hard threshold, else
// min(MaxPodGracePeriodSeconds, the pod's)).
//
// Thresholds parse upstream's flag syntax (ParseLangleMap for
// --eviction-hard/--eviction-soft, ParseEqualsMap for the soft grace
// periods and minimum reclaims; ParseThresholds checks them as upstream);
// DefaultEvictionHard is upstream's memory.available<100Mi,
// nodefs.available<10%, imagefs.available<15%, nodefs.inodesFree<5%,
// imagefs.inodesFree<5%. Signals: memory.available, nodefs.*, imagefs.*,
// pid.available (allocatableMemory.available parses but is never
// observed; containerfs.* is not supported).
//
// Admit is upstream's admit handler: under MemoryPressure alone
// BestEffort pods not tolerating node.kubernetes.io/memory-pressure are
// refused, under any other pressure every pod but critical ones; reason
// Evicted, message "The node had condition: [MemoryPressure]. ".
//
// Manager is the I/O shell (Config: Observe, ActivePods, ReclaimDisk,
// Evict, Event): every MonitoringInterval (10 s) it observes, decides,
// records EvictionThresholdMet on the node, tries the disk reclaim
// functions (dead containers, unused images) for a disk signal and stops
// there if they bring every threshold back, else records Evicted on the
// pod and evicts it. Unlike upstream it does not wait for the evicted pod
// to be cleaned up before the next pass (an evicted pod is no longer
// active at once) and has no memcg threshold notifier (the 10 s loop
// only). With LocalStorageCapacityIsolation (upstream's default) each
// pass first evicts the pods over a local storage limit
// (LocalStorageEvictions, upstream's order and messages: an emptyDir over
// its sizeLimit, the pod's ephemeral storage over its containers' summed
// limits, a container's writable layer and logs over its limit), 1 s
// grace, no DisruptionTarget.
//
// Invariants: no I/O in Decide, Rank, Message or Admit; all time comes
// from the caller (Decide's now, the manager's clock); the package knows
// nothing of the API server, the client, the runtime or the kubelet.
package eviction
