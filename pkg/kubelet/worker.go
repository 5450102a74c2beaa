package kubelet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/prober"
)

// podWorker serialises the syncs of one pod: updates coalesce into one
// pending signal; the goroutine syncs the newest pod it was given.
type podWorker struct {
	k   *Kubelet
	uid types.UID

	mu      sync.Mutex
	pod     *corev1.Pod
	removed bool
	failure *podFailure // evicted or refused at admission (evict.go)

	signal chan struct{}
	done   chan struct{}

	// Owned by the worker goroutine:
	stopping map[string]bool        // container IDs already asked to stop (under mu)
	stops    sync.WaitGroup         // stops in progress
	waiting  map[string]waitingInfo // start failures per container name
	deleted  bool                   // the final delete was sent
	admitted bool                   // the admit handlers ran
	// backOffReported: exited containers whose BackOff event was recorded.
	backOffReported map[string]bool
}

type waitingInfo struct{ reason, message string }

// syncErrorBackOff is when a pod whose container could not start (image
// pull, configuration) is synced again.
const syncErrorBackOff = 10 * time.Second

func (k *Kubelet) workerFor(uid types.UID) *podWorker {
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.workers[uid]
	if w == nil {
		// The maps are made when first written (most pods never need
		// them): a hollow agent has a worker for each of its many pods.
		w = &podWorker{k: k, uid: uid, signal: make(chan struct{}, 1), done: make(chan struct{})}
		k.workers[uid] = w
		go w.run(k.ctx)
	}
	return w
}

func (w *podWorker) update(pod *corev1.Pod, removed bool) {
	w.mu.Lock()
	if pod != nil {
		w.pod = pod
	}
	if removed {
		w.removed = true
	}
	w.mu.Unlock()
	w.poke()
}

func (w *podWorker) poke() {
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *podWorker) run(ctx context.Context) {
	defer close(w.done)
	defer w.stops.Wait()
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var tc <-chan time.Time
		if timer != nil {
			tc = timer.C()
		}
		select {
		case <-ctx.Done():
			return
		case <-w.signal:
		case <-tc:
		}
		w.mu.Lock()
		pod, removed := w.pod, w.removed
		w.mu.Unlock()
		var next time.Duration
		var finished bool
		w.k.pool.run(func() { next, finished = w.k.syncPod(ctx, w, pod, removed) })
		if finished {
			w.k.mu.Lock()
			if w.k.workers[w.uid] == w {
				delete(w.k.workers, w.uid)
			}
			w.k.mu.Unlock()
			return
		}
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		if next > 0 {
			timer = w.k.clock.NewTimer(next)
		}
	}
}

func gracePeriod(pod *corev1.Pod) int64 {
	if pod.DeletionGracePeriodSeconds != nil {
		return *pod.DeletionGracePeriodSeconds
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// syncPod brings the runtime to pod's spec and reports its status. It
// returns when to sync again without an event, and whether the worker is
// finished (the pod is gone and so is what the runtime held for it).
func (k *Kubelet) syncPod(ctx context.Context, w *podWorker, pod *corev1.Pod, removed bool) (time.Duration, bool) {
	if removed {
		if err := k.removePodFromRuntime(ctx, w.uid); err != nil {
			k.log.Warn("removing pod from the runtime", "pod", klogPod(pod), "err", err)
			return time.Second, false
		}
		if err := k.tearDownVolumes(ctx, w); err != nil {
			k.log.Warn("tearing down the pod's volumes", "pod", klogPod(pod), "err", err)
			return time.Second, false
		}
		k.status.forget(w.uid)
		k.imageBackOff.forget(string(w.uid) + "_")
		if k.cfg.CgroupsPerQOS {
			removePodCgroups(k.cgroupRoot(), w.uid)
		}
		if k.probes != nil {
			k.probes.Remove(w.uid)
		}
		return 0, true
	}
	if !w.admitted {
		w.admitted = true
		k.admitNew(ctx, w, pod)
	}
	failure := w.failed()
	// Volumes first (nothing starts before they are ready).
	var mountErr error
	if failure == nil {
		mountErr = k.setUpVolumes(ctx, pod)
	}
	var st *podRuntimeStatus
	var acts podActions
	for i := 0; ; i++ {
		var err error
		st, err = k.podStatusFromRuntime(ctx, w.uid)
		if err != nil {
			k.log.Warn("reading pod status from the runtime", "pod", klogPod(pod), "err", err)
			return time.Second, false
		}
		k.updateProbes(pod, st)
		acts = computePodActions(pod, st, k.clock.Now())
		if failure != nil {
			acts = podActions{KillPod: true, KillGrace: &failure.gracePeriod}
		}
		if mountErr != nil || i == 10 || !k.execute(ctx, w, pod, st, acts) {
			break
		}
	}
	for name := range acts.BackOff {
		if cs := st.latest(name); cs != nil && !w.backOffReported[cs.ID] {
			if w.backOffReported == nil {
				w.backOffReported = map[string]bool{}
			}
			w.backOffReported[cs.ID] = true
			k.event(pod, name, corev1.EventTypeWarning, "BackOff",
				fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", name, pod.Name, pod.Namespace, pod.UID))
		}
	}
	status := k.generateAPIStatus(pod, st, acts, w.waiting)
	if failure != nil {
		status = k.failedStatus(pod, st, status, failure)
	}
	if err := k.status.set(ctx, pod, status); err != nil {
		k.log.Warn("updating pod status", "pod", klogPod(pod), "err", err)
		return time.Second, false
	}
	k.releaseVolumes(ctx, pod, status.Phase, st)
	next := acts.nextSync()
	if r := readinessDue(pod, st, k.clock.Now()); k.probes == nil && r > 0 && (next == 0 || r < next) {
		next = r
	}
	// A container that could not start is tried again after the pod
	// workers' back-off (upstream's 10 s); so is a sandbox that could not
	// be created.
	if (len(w.waiting) > 0 || mountErr != nil || acts.CreateSandbox) && !podIsDone(pod) && (next == 0 || next > syncErrorBackOff) {
		next = syncErrorBackOff
	}
	if pod.DeletionTimestamp != nil && !w.deleted && !anyActive(st) {
		if err := k.status.deletePod(ctx, pod); err != nil {
			k.log.Warn("deleting pod", "pod", klogPod(pod), "err", err)
			return time.Second, false
		}
		w.deleted = true
	}
	return next, false
}

// updateProbes gives the prober the pod's running containers (none when
// the pod is done) and marks in st the containers it found unhealthy.
func (k *Kubelet) updateProbes(pod *corev1.Pod, st *podRuntimeStatus) {
	if k.probes == nil {
		return
	}
	running := map[string]prober.Running{}
	view := st.inSandbox()
	if !podIsDone(pod) {
		for _, c := range view.Containers {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING && view.latest(c.Name) == c {
				running[c.Name] = prober.Running{ID: c.ID, StartedAt: c.StartedAt}
			}
		}
	}
	ip := ""
	if len(st.IPs) > 0 {
		ip = st.IPs[0]
	}
	if pod.Spec.HostNetwork {
		ip = k.cfg.NodeIP
	}
	k.probes.Update(k.ctx, pod, ip, running)
	for _, c := range st.Containers {
		if _, ok := running[c.Name]; ok && running[c.Name].ID == c.ID {
			if sc := specContainer(pod, c.Name); sc != nil {
				c.Unhealthy = k.probes.Unhealthy(sc, c.ID)
			}
		}
	}
}

func anyActive(st *podRuntimeStatus) bool {
	for _, c := range st.Containers {
		if active(c) {
			return true
		}
	}
	return false
}

// execute carries out acts; it reports whether it did anything that
// changes the runtime state at once (so that actions are computed again).
func (k *Kubelet) execute(ctx context.Context, w *podWorker, pod *corev1.Pod, st *podRuntimeStatus, acts podActions) bool {
	did := false
	// Containers stop in parallel, each in a goroutine of its own (its
	// preStop hook and StopContainer may take the whole grace period); the
	// worker syncs again when one is done.
	stop := func(id string, grace int64) {
		w.mu.Lock()
		if w.stopping[id] {
			w.mu.Unlock()
			return
		}
		if w.stopping == nil {
			w.stopping = map[string]bool{}
		}
		w.stopping[id] = true
		w.mu.Unlock()
		did = true
		name := containerName(st, id)
		msg := "Stopping container " + name
		if r := acts.KillReasons[id]; r != "" {
			msg = r
		}
		w.stops.Add(1)
		go func() {
			defer w.stops.Done()
			err := k.stopContainer(ctx, pod, specContainer(pod, name), id, msg, grace, st.IPs)
			if err != nil {
				// Asked again at the next sync.
				w.mu.Lock()
				delete(w.stopping, id)
				w.mu.Unlock()
			}
			w.poke()
		}()
	}
	if acts.KillPod {
		for _, c := range st.Containers {
			if active(c) {
				g := gracePeriod(pod)
				if acts.KillGrace != nil {
					g = *acts.KillGrace
				}
				stop(c.ID, g)
			}
		}
		if !anyActive(st) && st.SandboxReady {
			if _, err := k.cfg.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: st.SandboxID}); err != nil {
				k.log.Warn("stopping sandbox", "pod", klogPod(pod), "err", err)
			}
			did = true
		}
		return did
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	for _, id := range acts.ContainersToKill {
		g := grace
		if acts.KillReasons[id] != "" {
			g = probeGrace(specContainer(pod, containerName(st, id)), grace)
		}
		stop(id, g)
	}
	sandboxID, podIPs := st.SandboxID, st.IPs
	if len(acts.ContainersToStart) == 0 && !acts.CreateSandbox {
		return did
	}
	sandboxCfg, dnsWarnings, err := k.podCfg.sandboxConfig(pod, acts.SandboxAttempt)
	if err != nil {
		k.event(pod, "", corev1.EventTypeWarning, "FailedCreatePodSandBox", fmt.Sprintf("Failed to create pod sandbox: %v", err))
		k.log.Warn("generating sandbox config", "pod", klogPod(pod), "err", err)
		return did
	}
	if acts.CreateSandbox {
		for _, dw := range dnsWarnings {
			msg := dw.Message
			if dw.Node {
				k.nodeEvent(corev1.EventTypeWarning, dw.Reason, msg)
				msg = fmt.Sprintf("pod: %q. %s", podString(pod), msg)
			}
			k.event(pod, "", corev1.EventTypeWarning, dw.Reason, msg)
		}
	}
	if acts.CreateSandbox {
		if st.SandboxID != "" && st.SandboxReady {
			k.cfg.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: st.SandboxID})
		}
		handler, err := k.podCfg.runtimeHandler(ctx, pod)
		var resp *runtimeapi.RunPodSandboxResponse
		if err == nil {
			resp, err = k.cfg.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxCfg, RuntimeHandler: handler})
		}
		if err != nil {
			k.event(pod, "", corev1.EventTypeWarning, "FailedCreatePodSandBox", fmt.Sprintf("Failed to create pod sandbox: %v", err))
			k.log.Warn("creating sandbox", "pod", klogPod(pod), "err", err)
			return false
		}
		sandboxID, did = resp.PodSandboxId, true
		podIPs = nil
		if s, err := k.cfg.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sandboxID}); err == nil {
			if ip := s.GetStatus().GetNetwork().GetIp(); ip != "" {
				podIPs = append(podIPs, ip)
			}
			for _, a := range s.GetStatus().GetNetwork().GetAdditionalIps() {
				podIPs = append(podIPs, a.GetIp())
			}
		}
	}
	if pod.Spec.HostNetwork {
		podIPs = k.podCfg.HostIPs
	}
	for _, s := range acts.ContainersToStart {
		c := specContainer(pod, s.Name)
		if c == nil {
			continue
		}
		if reason, msg, err := k.startContainer(ctx, pod, sandboxID, sandboxCfg, podIPs, c, s); err != nil {
			if w.waiting == nil {
				w.waiting = map[string]waitingInfo{}
			}
			w.waiting[s.Name] = waitingInfo{reason, msg}
			k.event(pod, s.Name, corev1.EventTypeWarning, "Failed", "Error: "+err.Error())
			k.log.Warn("starting container", "pod", klogPod(pod), "container", s.Name, "reason", reason, "err", msg)
			continue
		}
		delete(w.waiting, s.Name)
		did = true
	}
	return did
}

// probeGrace is the grace period of a container killed for a failed
// liveness or startup probe: the probe's terminationGracePeriodSeconds
// when set, else the pod's.
func probeGrace(c *corev1.Container, pod int64) int64 {
	if c == nil {
		return pod
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.StartupProbe} {
		if p != nil && p.TerminationGracePeriodSeconds != nil {
			return *p.TerminationGracePeriodSeconds
		}
	}
	return pod
}

// Reasons of a container that could not start, as upstream's.
var (
	errCreateContainerConfig = errors.New("CreateContainerConfigError")
	errCreateContainer       = errors.New("CreateContainerError")
	errRunContainer          = errors.New("RunContainerError")
)

// startContainer pulls c's image if needed, creates and starts it. On
// failure it returns the container's waiting reason and message, and the
// error whose text follows "Error: " in the Failed event.
func (k *Kubelet) startContainer(ctx context.Context, pod *corev1.Pod, sandboxID string, sandboxCfg *runtimeapi.PodSandboxConfig, podIPs []string, c *corev1.Container, s containerToStart) (string, string, error) {
	imageRef, msg, err := k.ensureImage(ctx, pod, c, sandboxCfg)
	if err != nil {
		return err.Error(), msg, err
	}
	user, err := k.imageUser(ctx, imageRef)
	if err == nil {
		var cfg *runtimeapi.ContainerConfig
		cfg, err = k.podCfg.containerConfig(ctx, pod, c, containerRun{Type: s.Type, Attempt: s.Attempt, PodIPs: podIPs, ImageRef: imageRef, ImageUser: user, TargetID: s.TargetID})
		if err == nil {
			return k.createAndStart(ctx, pod, sandboxID, sandboxCfg, c, cfg)
		}
	}
	return errCreateContainerConfig.Error(), err.Error(), err
}

// imageUser is the user image runs as, from the runtime's image status.
func (k *Kubelet) imageUser(ctx context.Context, image string) (imageUser, error) {
	st, err := k.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return imageUser{}, err
	}
	if img := st.GetImage(); img != nil {
		if img.Uid != nil {
			uid := img.Uid.Value
			return imageUser{UID: &uid}, nil
		}
		return imageUser{Username: img.Username}, nil
	}
	return imageUser{}, nil
}

// createAndStart creates the container of cfg and starts it.
func (k *Kubelet) createAndStart(ctx context.Context, pod *corev1.Pod, sandboxID string, sandboxCfg *runtimeapi.PodSandboxConfig, c *corev1.Container, cfg *runtimeapi.ContainerConfig) (string, string, error) {
	resp, err := k.cfg.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID,
		Config: cfg, SandboxConfig: sandboxCfg})
	if err != nil {
		return errCreateContainer.Error(), err.Error(), err
	}
	k.event(pod, c.Name, corev1.EventTypeNormal, "Created", "Created container: "+c.Name)
	if _, err := k.cfg.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: resp.ContainerId}); err != nil {
		return errRunContainer.Error(), err.Error(), err
	}
	k.event(pod, c.Name, corev1.EventTypeNormal, "Started", "Started container "+c.Name)
	if c.Lifecycle != nil && c.Lifecycle.PostStart != nil && !k.cfg.SimulateHandlers {
		if msg := k.runHook(ctx, pod, c, resp.ContainerId, k.sandboxIP(ctx, sandboxID), c.Lifecycle.PostStart, 0); msg != "" {
			k.event(pod, c.Name, corev1.EventTypeWarning, reasonFailedPostStartHook, msg)
			k.stopContainer(ctx, pod, c, resp.ContainerId, reasonFailedPostStartHook, gracePeriod(pod), nil)
			return "PostStartHookError", msg, errors.New(msg)
		}
	}
	return "", "", nil
}

func specContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	if ec := ephemeralContainer(pod, name); ec != nil {
		return (*corev1.Container)(&ec.EphemeralContainerCommon)
	}
	return nil
}

// removePodFromRuntime kills what is left of a pod that is gone from the
// API server and removes its sandboxes.
func (k *Kubelet) removePodFromRuntime(ctx context.Context, uid types.UID) error {
	st, err := k.podStatusFromRuntime(ctx, uid)
	if err != nil {
		return err
	}
	for _, c := range st.Containers {
		if active(c) {
			if _, err := k.cfg.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.ID}); err != nil {
				return err
			}
		}
	}
	for _, id := range append(st.OtherSandboxes, st.SandboxID) {
		if id == "" {
			continue
		}
		if _, err := k.cfg.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			return err
		}
		if _, err := k.cfg.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			return err
		}
	}
	return nil
}

func klogPod(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	return pod.Namespace + "/" + pod.Name
}

func containerName(st *podRuntimeStatus, id string) string {
	for _, c := range st.Containers {
		if c.ID == id {
			return c.Name
		}
	}
	return ""
}

// event records an event about container name of pod (fieldPath
// spec.containers{name}, spec.initContainers{name} or
// spec.ephemeralContainers{name}, as upstream's;
// name "": the pod itself).
func (k *Kubelet) event(pod *corev1.Pod, name, eventtype, reason, message string) {
	if k.cfg.Recorder == nil {
		return
	}
	field := "spec.containers{" + name + "}"
	switch {
	case name == "":
		field = "" // about the pod
	case isInit(pod, name):
		field = "spec.initContainers{" + name + "}"
	case ephemeralContainer(pod, name) != nil:
		field = "spec.ephemeralContainers{" + name + "}"
	}
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		ResourceVersion: pod.ResourceVersion, FieldPath: field}
	k.cfg.Recorder.Event(ref, eventtype, reason, message)
}
