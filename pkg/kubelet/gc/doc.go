// Package gc is the kubelet's garbage collection of containers, sandboxes
// and images, as upstream's containerGC and imageGCManager, over the CRI
// interfaces of pkg/kubelet/cri.
//
// Containers (every ContainerGCPeriod, 1 min): dead containers (exited or
// unknown; a CREATED one only when a newer container of its name exists)
// older than Policy.MinAge are grouped by (pod UID, container name); all of
// them go for pods whose content is removable (unknown to the kubelet,
// evicted, or deleted and terminated — PodState), else the newest
// MaxPerPodContainer (1) of each group stay, which is what `kubectl logs
// --previous` reads; MaxContainers (-1: off) bounds the node's total.
// Removing a container removes its log file. Then sandboxes that are not
// ready and hold no container go: all of a removable pod's, all but the
// newest of another's. Then the log directories
// (<PodLogDir>/<ns>_<name>_<uid>) of removable pods. The kubelet's PLEG
// removes the runtime state of a pod the moment it disappears; this pass
// is what stays behind for running pods and the backstop for the rest.
//
// Images (every ImageGCPeriod, 5 min): images seen are recorded with when
// they were first detected and last used by a container (any state).
// When the image filesystem's usage (FsStats of ImageFsInfo's
// filesystem: capacity and available bytes) is at or above
// HighThresholdPercent (85), unused images are removed least recently
// used first, skipping those detected less than MinAge (2 min) ago, those
// pinned and the sandbox image, until LowThresholdPercent (80) would be
// reached; falling short records FreeDiskSpaceFailed, two failed passes
// in a row ImageGCFailed (Warning events about the node). MaxAge is not
// implemented.
//
// Invariants: a running container and a ready sandbox are never removed;
// all time comes from the injected clock; nothing here knows the API
// server (events go through a callback).
package gc
