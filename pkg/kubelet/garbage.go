package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/gc"
)

// DefaultSandboxImage is the pause image pkg/image builds (never
// garbage collected).
const DefaultSandboxImage = "localhost/skiff/pause:3.10"

// newGC builds the container and image collectors (pkg/kubelet/gc) with
// upstream's default policies, once: the periodic collections and the
// eviction manager's disk reclaim share them (as upstream's).
func (k *Kubelet) newGC() (*gc.ContainerGC, *gc.ImageGC) {
	if k.containerGC != nil {
		return k.containerGC, k.imageGC
	}
	cg := &gc.ContainerGC{Runtime: k.cfg.Runtime, Policy: gc.DefaultContainerPolicy(), Pods: k, Clock: k.clock, PodLogDir: k.cfg.PodLogDir}
	ig := &gc.ImageGC{Runtime: k.cfg.Runtime, Images: k.cfg.Images, Policy: gc.DefaultImagePolicy(), Clock: k.clock,
		SandboxImage: k.cfg.SandboxImage, FsStats: func(ctx context.Context, fs *runtimeapi.FilesystemUsage) (gc.FsStats, error) {
			return k.cfg.Machine.ImageFs(ctx, fs)
		}, Event: k.nodeEvent}
	k.containerGC, k.imageGC = cg, ig
	return cg, ig
}

// gcTasks run container GC every minute and image GC every 5 minutes of
// the kubelet's clock.
func (k *Kubelet) gcTasks() []task {
	cg, ig := k.newGC()
	return []task{
		{period: gc.ContainerGCPeriod, run: func(ctx context.Context) { cg.Collect(ctx, k.nodeEvent, k.log) }},
		{period: gc.ImageGCPeriod, run: func(ctx context.Context) { ig.Collect(ctx, k.log) }},
	}
}

// nodeEvent records an event about the node (upstream's nodeRef: the
// node's name as UID).
func (k *Kubelet) nodeEvent(eventtype, reason, message string) {
	if k.cfg.Recorder == nil {
		return
	}
	k.cfg.Recorder.Event(&corev1.ObjectReference{Kind: "Node", Name: k.cfg.NodeName, UID: types.UID(k.cfg.NodeName)}, eventtype, reason, message)
}

// podView is the pod of a worker with the status last written, nil when
// the kubelet has no worker for uid (or the pod was removed).
func (k *Kubelet) podView(uid types.UID) *corev1.Pod {
	k.mu.Lock()
	w := k.workers[uid]
	k.mu.Unlock()
	if w == nil {
		return nil
	}
	w.mu.Lock()
	p, removed := w.pod, w.removed
	w.mu.Unlock()
	if p == nil || removed {
		return nil
	}
	if st, ok := k.status.cached(uid); ok {
		p = p.DeepCopy()
		p.Status = st
	}
	return p
}

func terminalPhase(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// ShouldPodContentBeRemoved implements gc.PodState: the pod is unknown,
// evicted, or deleted and terminated.
func (k *Kubelet) ShouldPodContentBeRemoved(uid types.UID) bool {
	p := k.podView(uid)
	return p == nil || p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted" ||
		p.DeletionTimestamp != nil && terminalPhase(p)
}

// ShouldPodRuntimeBeRemoved implements gc.PodState: the pod is unknown or
// terminated.
func (k *Kubelet) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	p := k.podView(uid)
	return p == nil || terminalPhase(p)
}
