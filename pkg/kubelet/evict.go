package kubelet

import (
	"context"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/eviction"
	"github.com/skiff-sh/skiff/pkg/kubelet/volume"
)

// podFailure ends a pod that is not to run (evicted, or refused at
// admission): its containers are killed with gracePeriod and its status
// is Failed with reason and message (and the DisruptionTarget condition
// when condition).
type podFailure struct {
	reason, message string
	gracePeriod     int64
	condition       bool
}

// newEvictionManager is the kubelet's eviction manager (nil when no
// threshold is configured).
func (k *Kubelet) newEvictionManager() (*eviction.Manager, error) {
	th := k.cfg.EvictionThresholds
	if th == nil {
		th = eviction.DefaultThresholds()
	}
	cg, ig := k.newGC()
	return eviction.New(eviction.Config{Thresholds: th, PressureTransitionPeriod: k.cfg.EvictionPressureTransitionPeriod,
		MaxPodGracePeriodSeconds: k.cfg.EvictionMaxPodGracePeriod, Clock: k.clock, Logger: k.log,
		Observe: k.observe, ActivePods: k.activePods,
		ReclaimDisk: []func(context.Context) error{cg.DeleteAllUnusedContainers, ig.DeleteUnusedImages},
		Evict: func(_ context.Context, pod *corev1.Pod, grace int64, message string, disruptionTarget bool) error {
			k.failPod(pod.UID, &podFailure{reason: eviction.Reason, message: message, gracePeriod: grace, condition: disruptionTarget})
			return nil
		},
		LocalStorageCapacityIsolation: true,
		Event: func(pod *corev1.Pod, eventtype, reason, message string) {
			if pod == nil {
				k.nodeEvent(eventtype, reason, message)
			} else {
				k.event(pod, "", eventtype, reason, message)
			}
		}})
}

// failPod makes the worker of uid end its pod with f.
func (k *Kubelet) failPod(uid types.UID, f *podFailure) {
	k.mu.Lock()
	w := k.workers[uid]
	k.mu.Unlock()
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.failure == nil {
		w.failure = f
	}
	w.mu.Unlock()
	w.poke()
}

// activePods are the pods the kubelet runs that have not terminated.
func (k *Kubelet) activePods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range k.runningPods() {
		if terminalPhase(p) {
			continue
		}
		k.mu.Lock()
		w := k.workers[p.UID]
		k.mu.Unlock()
		if w != nil {
			w.mu.Lock()
			failed := w.failure != nil
			w.mu.Unlock()
			if failed {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func bytesQ(v uint64) *resource.Quantity { return resource.NewQuantity(int64(v), resource.BinarySI) }
func countQ(v uint64) *resource.Quantity { return resource.NewQuantity(int64(v), resource.DecimalSI) }
func fsObs(avail, capacity uint64) eviction.Observation {
	return eviction.Observation{Available: bytesQ(min(avail, capacity)), Capacity: bytesQ(capacity)}
}

// observe gathers the eviction signals from Config.Machine and the pods'
// usage from the runtime's container stats. A signal that cannot be read
// is left out (its thresholds are not evaluated, as upstream's).
func (k *Kubelet) observe(ctx context.Context) (eviction.Observations, eviction.StatsFunc, error) {
	m := k.cfg.Machine
	obs := eviction.Observations{}
	if capacity, ws, err := m.Memory(ctx); err == nil {
		obs[eviction.SignalMemoryAvailable] = fsObs(capacity-min(ws, capacity), capacity)
	} else {
		k.log.Info("eviction: memory", "err", err)
	}
	if fs, err := m.NodeFs(ctx); err == nil {
		obs[eviction.SignalNodeFsAvailable] = fsObs(fs.AvailableBytes, fs.CapacityBytes)
		if fs.Inodes > 0 {
			obs[eviction.SignalNodeFsInodesFree] = eviction.Observation{Available: countQ(min(fs.InodesFree, fs.Inodes)), Capacity: countQ(fs.Inodes)}
		}
	} else {
		k.log.Info("eviction: node fs", "err", err)
	}
	if info, err := k.cfg.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{}); err == nil && len(info.ImageFilesystems) > 0 {
		if fs, err := m.ImageFs(ctx, info.ImageFilesystems[0]); err == nil {
			obs[eviction.SignalImageFsAvailable] = fsObs(fs.AvailableBytes, fs.CapacityBytes)
			if fs.Inodes > 0 {
				obs[eviction.SignalImageFsInodesFree] = eviction.Observation{Available: countQ(min(fs.InodesFree, fs.Inodes)), Capacity: countQ(fs.Inodes)}
			}
		}
	}
	if max, running, err := m.PIDs(ctx); err == nil && max > 0 {
		obs[eviction.SignalPIDAvailable] = eviction.Observation{Available: countQ(max - min(running, max)), Capacity: countQ(max)}
	}
	resp, err := k.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		return nil, nil, err
	}
	byPod := map[types.UID]*eviction.PodStats{}
	for _, s := range resp.Stats {
		uid := types.UID(s.GetAttributes().GetLabels()[cri.LabelPodUID])
		if uid == "" {
			continue
		}
		ps := byPod[uid]
		if ps == nil {
			ps = &eviction.PodStats{Memory: bytesQ(0)}
			byPod[uid] = ps
		}
		mem := s.GetMemory().GetWorkingSetBytes().GetValue()
		ps.Memory.Add(*bytesQ(mem))
		ps.Containers = append(ps.Containers, eviction.ContainerStats{Name: s.GetAttributes().GetMetadata().GetName(),
			Memory: bytesQ(mem), Rootfs: bytesQ(s.GetWritableLayer().GetUsedBytes().GetValue()), Logs: bytesQ(0),
			RootfsInodes: countQ(s.GetWritableLayer().GetInodesUsed().GetValue()), LogsInodes: countQ(0)})
	}
	done := map[types.UID]bool{}
	stats := func(p *corev1.Pod) (eviction.PodStats, bool) {
		ps, ok := byPod[p.UID]
		if !ok {
			return eviction.PodStats{}, false
		}
		if !done[p.UID] {
			done[p.UID] = true
			k.addLocalUsage(p, ps)
		}
		return *ps, true
	}
	return obs, stats, nil
}

// addLocalUsage adds what the runtime's stats lack on a real node: the
// containers' log files (under Config.PodLogDir) and the pod's emptyDir
// volumes on disk (under Config.RootDir, when the kubelet manages
// volumes), walked at most once a minute each.
func (k *Kubelet) addLocalUsage(p *corev1.Pod, ps *eviction.PodStats) {
	if dir := k.podCfg.podLogDir(p); dir != "" {
		for i := range ps.Containers {
			c := &ps.Containers[i]
			bytes, inodes := k.du.usage(filepath.Join(dir, c.Name), k.clock.Now())
			c.Logs, c.LogsInodes = bytesQ(bytes), countQ(inodes)
		}
	}
	if k.volumes == nil {
		return
	}
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir == nil || v.EmptyDir.Medium == corev1.StorageMediumMemory {
			continue
		}
		bytes, inodes := k.du.usage(k.volumes.VolumeDir(p.UID, volume.PluginEmptyDir, v.Name), k.clock.Now())
		if ps.VolumeUsage == nil {
			ps.VolumeUsage = map[string]*resource.Quantity{}
			ps.Volumes, ps.VolumeInodes = bytesQ(0), countQ(0)
		}
		ps.VolumeUsage[v.Name] = bytesQ(bytes)
		ps.Volumes.Add(*bytesQ(bytes))
		ps.VolumeInodes.Add(*countQ(inodes))
	}
}

// duCache remembers directory usage for a minute (upstream measures
// volumes periodically too).
type duCache struct {
	mu      sync.Mutex
	entries map[string]duEntry
}

type duEntry struct {
	at            time.Time
	bytes, inodes uint64
}

const duCacheTTL = time.Minute

// usage is the bytes and inodes under dir (0 when it does not exist).
func (c *duCache) usage(dir string, now time.Time) (uint64, uint64) {
	c.mu.Lock()
	if e, ok := c.entries[dir]; ok && now.Sub(e.at) < duCacheTTL {
		c.mu.Unlock()
		return e.bytes, e.inodes
	}
	c.mu.Unlock()
	var bytes, inodes uint64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		inodes++
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				bytes += uint64(info.Size())
			}
		}
		return nil
	})
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]duEntry{}
	}
	for k, e := range c.entries {
		if now.Sub(e.at) >= duCacheTTL {
			delete(c.entries, k)
		}
	}
	c.entries[dir] = duEntry{now, bytes, inodes}
	c.mu.Unlock()
	return bytes, inodes
}

// admit is the eviction admit handler for a pod the kubelet has not
// started: refused, the pod fails with the handler's reason and message
// and a Warning event, as upstream's rejectPod.
func (k *Kubelet) admit(w *podWorker, pod *corev1.Pod) {
	if k.evictions == nil {
		return
	}
	if ok, reason, msg := k.evictions.Admit(pod); !ok {
		k.event(pod, "", corev1.EventTypeWarning, reason, msg)
		w.mu.Lock()
		if w.failure == nil {
			w.failure = &podFailure{reason: reason, message: msg}
		}
		w.mu.Unlock()
	}
}

// applyFailure makes status what failure says.
func applyFailure(pod *corev1.Pod, status *corev1.PodStatus, f *podFailure, now time.Time) {
	status.Phase, status.Reason, status.Message = corev1.PodFailed, f.reason, f.message
	if !f.condition {
		return
	}
	for i := range status.Conditions {
		if status.Conditions[i].Type == corev1.DisruptionTarget {
			return
		}
	}
	status.Conditions = append(status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: corev1.PodReasonTerminationByKubelet, Message: f.message, ObservedGeneration: pod.Generation,
		LastTransitionTime: mt(now)})
}

// pressureCondition is the node condition t from the eviction manager, with
// upstream's reasons and messages.
func (k *Kubelet) pressureCondition(t corev1.NodeConditionType) (corev1.ConditionStatus, string, string) {
	under := k.evictions != nil && k.evictions.Under(t)
	switch t {
	case corev1.NodeMemoryPressure:
		if under {
			return corev1.ConditionTrue, "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"
		}
		return corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"
	case corev1.NodeDiskPressure:
		if under {
			return corev1.ConditionTrue, "KubeletHasDiskPressure", "kubelet has disk pressure"
		}
		return corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"
	default:
		if under {
			return corev1.ConditionTrue, "KubeletHasInsufficientPID", "kubelet has insufficient PID available"
		}
		return corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"
	}
}

func (w *podWorker) failed() *podFailure {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failure
}

// admitNew runs the admit handler for a pod the runtime holds nothing of
// (a pod already running when the kubelet starts is not refused).
func (k *Kubelet) admitNew(ctx context.Context, w *podWorker, pod *corev1.Pod) {
	if k.evictions == nil || podIsDone(pod) {
		return
	}
	if st, err := k.podStatusFromRuntime(ctx, w.uid); err != nil || st.SandboxID != "" || len(st.Containers) > 0 {
		return
	}
	k.admit(w, pod)
}

// failedStatus is the status of a failed pod: Failed with the failure's
// reason and message; once the runtime holds nothing of it (garbage
// collection removes an evicted pod's containers) the status last written
// stays.
func (k *Kubelet) failedStatus(pod *corev1.Pod, st *podRuntimeStatus, status corev1.PodStatus, f *podFailure) corev1.PodStatus {
	if cached, ok := k.status.lastWritten(pod); ok && cached.Phase == corev1.PodFailed && len(st.Containers) == 0 && st.SandboxID == "" {
		return cached
	}
	applyFailure(pod, &status, f, k.clock.Now())
	if !anyActive(st) {
		terminateStatuses(&status)
	}
	return status
}

// terminateStatuses is upstream's TerminatePod: once the pod is
// initialized, a container of a terminated pod that has no terminated
// state (it never ran, or is gone) reads as failed.
func terminateStatuses(status *corev1.PodStatus) {
	initialized := true
	for _, c := range status.Conditions {
		if c.Type == corev1.PodInitialized && c.Status != corev1.ConditionTrue {
			initialized = false
		}
	}
	if !initialized {
		return
	}
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		if cs.State.Terminated == nil {
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "ContainerStatusUnknown",
				Message: "The container could not be located when the pod was terminated", ExitCode: 137}}
			cs.Ready = false
		}
	}
}
