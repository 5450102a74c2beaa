// Package volume is the kubelet's volume manager: it sets up the volumes
// of the pods of its node under the kubelet's root directory, in
// upstream's layout pods/<uid>/volumes/<plugin>/<name> (plugin
// kubernetes.io~empty-dir, ~configmap, ~secret, ~projected,
// ~downward-api), gives the container runtime the CRI mounts of each
// container, keeps the written contents up to date, and tears it all
// down when the pod is gone.
//
// Only the volumes some container (init, regular, ephemeral) mounts are
// set up, as upstream's desired-state populator ignores the others.
//
// Volume types, as upstream's plugins:
//   - emptyDir: a directory (mode 0777); medium Memory mounts a tmpfs
//     whose size is the node's allocatable memory, the pod's memory limit
//     or the volume's sizeLimit, whichever is lowest (upstream's
//     calculateEmptyDirMemorySize). sizeLimit of a disk emptyDir is not
//     enforced here: as upstream's, the eviction manager
//     (pkg/kubelet/eviction's local storage limits) evicts the pod.
//   - hostPath: the host path itself, with upstream's type checks and
//     messages (DirectoryOrCreate makes the directory 0755, FileOrCreate
//     the file 0644; Directory, File, Socket, CharDevice, BlockDevice
//     must exist and be one); a path with ".." is refused (invalid
//     HostPath).
//   - configMap, secret, downwardAPI, projected (configMap, secret,
//     downwardAPI and serviceAccountToken sources; clusterTrustBundle and
//     podCertificate are refused with an error): files written atomically
//     as upstream's AtomicWriter (a timestamped "..<ts>" directory, the
//     "..data" symlink swapped with rename(2), one symlink per top-level
//     name), with items (key → path, mode), defaultMode and optional;
//     mounted read-only. Missing objects fail with upstream's messages
//     (`configmap "x" not found`, `secret "x" not found`,
//     `configmap references non-existent config key: k`).
//   - serviceAccountToken: requested through the TokenRequest API
//     (serviceaccounts/<sa>/token) with the projection's audience and
//     expirationSeconds (3607 for the kube-api-access volume the API
//     server injects), bound to the pod (boundObjectRef); replaced when
//     80% of its lifetime passed or it is older than 24 h (upstream's
//     token manager, without its jitter); a failed refresh keeps the
//     valid token.
//   - persistentVolumeClaim: followed to its PV (bound, claimRef UID
//     matching), which must be hostPath or local; until then SetUp fails
//     with upstream's "Unable to attach or mount volumes: ... failed to
//     process volumes=[x]: error processing PVC ns/claim: PVC is not
//     bound". Containers mount the PV's path directly (upstream
//     bind-mounts a local PV into the pod's directory first).
//
// fsGroup: emptyDir, local PVs and the written volumes get upstream's
// SetVolumeOwnership (chgrp to fsGroup, g+rw — g+r for read-only volumes —
// and setgid on directories; failures are ignored, as upstream's). Only
// local PVs honour fsGroupChangePolicy OnRootMismatch (skipped when the
// root already matches); emptyDir and the written volumes are always
// walked, as upstream's.
//
// Contents are refreshed every ResyncPeriod (1 min, so configMap and
// secret updates reach running pods within about a minute as upstream's
// pod sync does); a refresh reads each configMap and secret once (GET by
// name: the Node authorizer lets a kubelet read only the objects of its
// pods, never list them) and rewrites a volume only when its payload
// changed. SetUp reads through a cache of CacheTTL (5 s) so that pods
// starting together share a GET. downwardAPI contents are rewritten when
// SetUp sees the pod's labels or annotations change. A subPath mount of a
// configMap key resolves to the file itself and, as upstream's, does not
// see updates.
//
// Release tears down the volumes of a pod that finished (upstream unmounts
// the volumes of terminated pods: a tmpfs gives its memory back); SetUp
// does nothing for a released pod. TearDown is for a pod that is gone.
// CleanupOrphans tears down pod directories of pods the caller does not
// know (the kubelet calls it once its pod source has listed the pods).
//
// Invariants: SetUp is idempotent (a set-up volume is never set up again;
// a tmpfs is mounted only when not mounted yet, so a restarted kubelet
// re-adopts its pods' volumes); TearDown unmounts every mount under the
// pod's directory before removing it, and removes nothing if an unmount
// fails; all API access goes through pkg/client; all time comes from
// Config.Clock.
//
// Not done: SELinux relabelling, subPath bind mounts of their own
// (upstream's volume-subpaths/ safe bind mounts: here the resolved path is
// handed to the runtime after a containment check), ephemeral and CSI
// volumes, block-mode volumes, attach/detach, image volumes.
package volume
