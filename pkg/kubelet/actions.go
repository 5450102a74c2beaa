package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Restart back-off, as upstream's kubelet: 10 s doubling to 5 min, and a
// container that ran 10 min starts over.
const (
	backOffInitial = 10 * time.Second
	backOffMax     = 5 * time.Minute
	backOffReset   = 10 * time.Minute
)

// containerToStart names a container of the spec to create and start.
type containerToStart struct {
	Name string
	// Type is "init", "sidecar", "regular" or "ephemeral"
	// (cri.AnnotationContainerType).
	Type    string
	Attempt uint32
	// TargetID, for an ephemeral container with a targetContainerName, is
	// the target's running container, whose PID namespace it joins (""
	// when the target does not run: the start fails).
	TargetID string
}

// podActions is what syncPod does to bring the runtime to the pod's spec.
type podActions struct {
	// KillPod: stop every container (the pod is being deleted, or done).
	KillPod bool
	// KillGrace overrides the pod's grace period for KillPod (eviction).
	KillGrace *int64
	// CreateSandbox: (re)create the sandbox with SandboxAttempt; old
	// sandboxes are stopped first.
	CreateSandbox  bool
	SandboxAttempt uint32
	// ContainersToStart, in order.
	ContainersToStart []containerToStart
	// ContainersToKill are runtime container IDs to stop.
	ContainersToKill []string
	// BackOff: containers waiting to restart, with the time left.
	BackOff map[string]time.Duration
	// KillReasons: the Killing event's message for some of
	// ContainersToKill (by ID), e.g. a failed liveness probe.
	KillReasons map[string]string
}

// nextSync is when the pod must be synced again without a runtime event
// (0: not needed).
func (a podActions) nextSync() time.Duration {
	var d time.Duration
	for _, left := range a.BackOff {
		if d == 0 || left < d {
			d = left
		}
	}
	return d
}

// backOffDelay is how long after it finished the container c may restart.
func backOffDelay(c *containerStatus) time.Duration {
	if c.Attempt == 0 || !c.StartedAt.IsZero() && c.FinishedAt.Sub(c.StartedAt) >= backOffReset {
		return 0
	}
	d := backOffInitial
	for i := uint32(1); i < c.Attempt && d < backOffMax; i++ {
		d *= 2
	}
	return min(d, backOffMax)
}

// backOffLeft is the back-off time left at now before c restarts.
func backOffLeft(c *containerStatus, now time.Time) time.Duration {
	return c.FinishedAt.Add(backOffDelay(c)).Sub(now)
}

func shouldRestart(policy corev1.RestartPolicy, c *containerStatus) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return c.ExitCode != 0
	}
	return true
}

func exited(c *containerStatus) bool {
	return c != nil && c.State == runtimeapi.ContainerState_CONTAINER_EXITED
}

func active(c *containerStatus) bool {
	return c != nil && (c.State == runtimeapi.ContainerState_CONTAINER_RUNNING || c.State == runtimeapi.ContainerState_CONTAINER_CREATED)
}

// podIsDone: the pod's API phase is terminal, or it is being deleted.
func podIsDone(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// computePodActions decides what to do for pod given its runtime state at
// now: upstream's computePodActions reduced to sandbox creation, init
// containers one at a time (sidecars started in order and kept running),
// regular containers, restarts per restartPolicy with back-off, ephemeral
// containers (started once, never restarted), and killing.
func computePodActions(pod *corev1.Pod, st *podRuntimeStatus, now time.Time) podActions {
	var a podActions
	if st == nil {
		st = &podRuntimeStatus{}
	}
	if podIsDone(pod) {
		a.KillPod = true
		return a
	}
	policy := restartPolicy(pod)
	attempt := func(name string) uint32 {
		if c := st.latest(name); c != nil {
			return c.Attempt + 1
		}
		return 0
	}
	view := st.inSandbox()
	if st.SandboxID == "" || !st.SandboxReady {
		// A pod that ran to completion is not started again in a new sandbox.
		if st.SandboxID != "" && policy != corev1.RestartPolicyAlways && allRegularDone(pod, st, policy) {
			return a
		}
		a.CreateSandbox = true
		if st.SandboxID != "" {
			a.SandboxAttempt = st.SandboxAttempt + 1
		}
		view = &podRuntimeStatus{}
	}
	start := func(c *corev1.Container, typ string) {
		a.ContainersToStart = append(a.ContainersToStart, containerToStart{Name: c.Name, Type: typ, Attempt: attempt(c.Name)})
	}
	// restartOrWait starts an exited container again unless back-off holds it.
	restartOrWait := func(c *corev1.Container, cs *containerStatus, typ string) {
		if left := backOffLeft(cs, now); left > 0 {
			if a.BackOff == nil {
				a.BackOff = map[string]time.Duration{}
			}
			a.BackOff[c.Name] = left
			return
		}
		start(c, typ)
	}
	known := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		known[pod.Spec.InitContainers[i].Name] = true
	}
	for i := range pod.Spec.Containers {
		known[pod.Spec.Containers[i].Name] = true
	}
	for i := range pod.Spec.EphemeralContainers {
		known[pod.Spec.EphemeralContainers[i].Name] = true
	}
	for _, c := range view.Containers {
		if !known[c.Name] && active(c) {
			a.ContainersToKill = append(a.ContainersToKill, c.ID)
		}
	}
	// A container whose liveness or startup probe failed is killed; once
	// it has exited, restartPolicy and back-off decide as for any exit.
	for i := range view.Containers {
		c := view.Containers[i]
		if c.Unhealthy != "" && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING && view.latest(c.Name) == c {
			a.ContainersToKill = append(a.ContainersToKill, c.ID)
			if a.KillReasons == nil {
				a.KillReasons = map[string]string{}
			}
			a.KillReasons[c.ID] = c.Unhealthy
		}
	}

	// Ephemeral containers start even while init containers run (not in
	// the sync that creates the sandbox), once each.
	if !a.CreateSandbox {
		a.ContainersToStart = append(a.ContainersToStart, ephemeralToStart(pod, st, view)...)
	}

	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs := view.latest(c.Name)
		if isSidecar(c) {
			switch {
			case cs == nil:
				start(c, "sidecar")
				return a // the next init container waits for it to run
			case exited(cs):
				restartOrWait(c, cs, "sidecar") // it ran before: the others go on
			case cs.State == runtimeapi.ContainerState_CONTAINER_CREATED:
				return a
			}
			continue
		}
		switch {
		case cs == nil:
			start(c, "init")
			return a
		case !exited(cs):
			return a
		case cs.ExitCode == 0:
			continue
		case policy == corev1.RestartPolicyNever:
			a.KillPod = true // the pod failed
			a.ContainersToStart = nil
			return a
		default:
			restartOrWait(c, cs, "init")
			return a
		}
	}

	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := view.latest(c.Name)
		switch {
		case cs == nil:
			start(c, "regular")
		case exited(cs) && shouldRestart(policy, cs):
			restartOrWait(c, cs, "regular")
		}
	}
	// Once every regular container is done for good, sidecars stop.
	if policy != corev1.RestartPolicyAlways && len(pod.Spec.Containers) > 0 && allRegularDone(pod, view, policy) {
		for i := range pod.Spec.InitContainers {
			if c := &pod.Spec.InitContainers[i]; isSidecar(c) {
				if cs := view.latest(c.Name); active(cs) {
					a.ContainersToKill = append(a.ContainersToKill, cs.ID)
				}
				delete(a.BackOff, c.Name)
			}
		}
		kept := a.ContainersToStart[:0]
		for _, s := range a.ContainersToStart {
			if s.Type != "sidecar" {
				kept = append(kept, s)
			}
		}
		a.ContainersToStart = kept
	}
	return a
}

// allRegularDone: every regular container exited and will not restart.
func allRegularDone(pod *corev1.Pod, st *podRuntimeStatus, policy corev1.RestartPolicy) bool {
	for i := range pod.Spec.Containers {
		cs := st.latest(pod.Spec.Containers[i].Name)
		if !exited(cs) || shouldRestart(policy, cs) {
			return false
		}
	}
	return true
}
