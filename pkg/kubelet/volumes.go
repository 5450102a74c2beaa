package kubelet

import (
	"context"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
)

// DefaultRootDir is the kubelet's root directory unless Config.RootDir
// says otherwise (upstream's is /var/lib/kubelet).
const DefaultRootDir = "/var/lib/skiff/kubelet"

// newVolumeManager makes the volume manager from Config.Volumes (nil: no
// volume work), filling what the kubelet knows.
func (k *Kubelet) newVolumeManager() (*volume.Manager, error) {
	if k.cfg.Volumes == nil {
		return nil, nil
	}
	vc := *k.cfg.Volumes
	if vc.Client == nil {
		vc.Client = k.cfg.Client
	}
	if vc.RootDir == "" {
		vc.RootDir = k.cfg.RootDir
	}
	if vc.Clock == nil {
		vc.Clock = k.cfg.Clock
	}
	if vc.Logger == nil {
		vc.Logger = k.log
	}
	if vc.NodeAllocatable == nil {
		vc.NodeAllocatable = k.allocatable(k.capacity())
	}
	return volume.New(vc)
}

// volumeMounts is the container configuration's mounts hook when the
// kubelet manages volumes.
func (k *Kubelet) volumeMounts(ctx context.Context, pod *corev1.Pod, c *corev1.Container, env map[string]string) ([]*runtimeapi.Mount, error) {
	return k.volumes.MountsEnv(pod, c, env)
}

// setUpVolumes sets up the volumes of a pod that is to run (upstream's
// WaitForAttachAndMount before the runtime's SyncPod): on failure each
// problem is a FailedMount event on the pod, and the pod's worker does
// nothing else but report status until a retry succeeds.
func (k *Kubelet) setUpVolumes(ctx context.Context, pod *corev1.Pod) error {
	if k.volumes == nil || podIsDone(pod) || len(pod.Spec.Volumes) == 0 {
		return nil
	}
	err := k.volumes.SetUp(ctx, pod)
	if err != nil {
		for _, msg := range volume.Messages(err) {
			k.event(pod, "", corev1.EventTypeWarning, "FailedMount", msg)
		}
	}
	return err
}

// tearDownVolumes removes what the volume manager made for a pod whose
// containers and sandboxes are gone.
func (k *Kubelet) tearDownVolumes(ctx context.Context, w *podWorker) error {
	if k.volumes == nil {
		return nil
	}
	return k.volumes.TearDown(ctx, w.uid)
}

// releaseVolumes tears down the volumes of a pod that finished (phase
// Succeeded or Failed) once none of its containers runs, as upstream's
// syncTerminatedPod unmounts them.
func (k *Kubelet) releaseVolumes(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase, st *podRuntimeStatus) {
	if k.volumes == nil || (phase != corev1.PodSucceeded && phase != corev1.PodFailed) || anyActive(st) {
		return
	}
	if err := k.volumes.Release(ctx, pod.UID); err != nil {
		k.log.Warn("tearing down the volumes of a finished pod", "pod", klogPod(pod), "err", err)
	}
}

// orphanCleanupPeriod is how often pod directories without a pod are
// looked for.
const orphanCleanupPeriod = time.Minute

// cleanupOrphanedVolumes removes, every orphanCleanupPeriod, the pod
// directories under the root dir of pods the kubelet does not have (left
// by a kubelet that stopped before tearing them down), as upstream's
// housekeeping (cleanupOrphanedPodDirs) does once its pod sources are
// ready: only after the pod source has listed the pods, and only a
// directory found orphaned in two rounds in a row (so that a pod being
// delivered is never mistaken for an orphan).
func (k *Kubelet) cleanupOrphanedVolumes(ctx context.Context) {
	synced := func() bool {
		if s, ok := k.cfg.PodSource.(interface{ HasSynced() bool }); ok {
			return s.HasSynced()
		}
		return false
	}
	t := k.clock.NewTicker(orphanCleanupPeriod)
	defer t.Stop()
	suspects := map[types.UID]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if !synced() {
			continue
		}
		next := map[types.UID]bool{}
		err := k.volumes.CleanupOrphans(ctx, func(uid types.UID) bool {
			k.mu.Lock()
			_, known := k.workers[uid]
			k.mu.Unlock()
			if known {
				return true
			}
			if !suspects[uid] {
				next[uid] = true
				return true
			}
			k.log.Info("removing the volumes of an orphaned pod", "podUID", uid)
			return false
		})
		if err != nil {
			k.log.Warn("removing orphaned pod directories", "err", err)
		}
		suspects = next
	}
}

func defaultRootDir(dir string) string {
	if dir == "" {
		return DefaultRootDir
	}
	return filepath.Clean(dir)
}
