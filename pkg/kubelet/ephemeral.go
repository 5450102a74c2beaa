package kubelet

// Ephemeral containers (kubectl debug), as upstream's kubelet runs them:
// added to a running pod through pods/ephemeralcontainers, started once
// each in the pod's sandbox (never restarted, whatever the restartPolicy),
// the PID namespace of their targetContainerName's running container
// joined (CRI NamespaceMode TARGET), killed with the pod, and reported in
// status.ephemeralContainerStatuses; they count neither for the pod's
// phase nor for its readiness.

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerTypeEphemeral is cri.AnnotationContainerType's value for an
// ephemeral container.
const containerTypeEphemeral = "ephemeral"

// ephemeralToStart are pod's ephemeral containers that never ran: neither
// the runtime (st: every sandbox of the pod) has one of that name nor has
// the API status seen it run. view is the newest sandbox's containers,
// where a target runs.
func ephemeralToStart(pod *corev1.Pod, st, view *podRuntimeStatus) []containerToStart {
	var out []containerToStart
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i]
		if st.latest(ec.Name) != nil || ephemeralRan(pod, ec.Name) {
			continue
		}
		s := containerToStart{Name: ec.Name, Type: containerTypeEphemeral}
		if ec.TargetContainerName != "" {
			if t := view.latest(ec.TargetContainerName); t != nil && t.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				s.TargetID = t.ID
			}
		}
		out = append(out, s)
	}
	return out
}

// ephemeralRan: the pod's API status shows the ephemeral container name
// running or terminated (its container may be gone from the runtime).
func ephemeralRan(pod *corev1.Pod, name string) bool {
	for _, cs := range pod.Status.EphemeralContainerStatuses {
		if cs.Name == name {
			return cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil
		}
	}
	return false
}

// ephemeralContainer is pod's ephemeral container name, nil when none.
func ephemeralContainer(pod *corev1.Pod, name string) *corev1.EphemeralContainer {
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return &pod.Spec.EphemeralContainers[i]
		}
	}
	return nil
}

// ephemeralTargetCheck: an ephemeral container whose target does not run
// cannot be created (upstream's message; a CreateContainerConfigError,
// tried again later).
func ephemeralTargetCheck(pod *corev1.Pod, c *corev1.Container, run containerRun) error {
	if run.Type != containerTypeEphemeral {
		return nil
	}
	if ec := ephemeralContainer(pod, c.Name); ec != nil && ec.TargetContainerName != "" && run.TargetID == "" {
		return fmt.Errorf("unable to find target container %v", ec.TargetContainerName)
	}
	return nil
}

// withTargetPID makes the container join the PID namespace of its
// target, as upstream's kubelet does for an ephemeral container with a
// target (unless the pod shares one PID namespace or the node's).
func withTargetPID(sc *runtimeapi.LinuxContainerSecurityContext, targetID string) {
	if targetID == "" || sc.NamespaceOptions == nil || sc.NamespaceOptions.Pid != runtimeapi.NamespaceMode_CONTAINER {
		return
	}
	sc.NamespaceOptions.Pid = runtimeapi.NamespaceMode_TARGET
	sc.NamespaceOptions.TargetId = targetID
}

// ephemeralStatuses are the pod's status.ephemeralContainerStatuses, as
// upstream's: waiting (PodInitializing in a pod with init containers,
// else ContainerCreating, or why it could not start), running or
// terminated; a terminated status stays when the runtime no longer has
// the container; never ready, no started flag; sorted by name. Added to a
// pod that had finished (oldPhase Succeeded or Failed), it gets none (as
// upstream's kubelet no longer syncs such a pod).
func (k *Kubelet) ephemeralStatuses(pod *corev1.Pod, oldPhase corev1.PodPhase, old []corev1.ContainerStatus, st *podRuntimeStatus, acts podActions, waiting map[string]waitingInfo, now time.Time) []corev1.ContainerStatus {
	finished := oldPhase == corev1.PodSucceeded || oldPhase == corev1.PodFailed
	if len(pod.Spec.EphemeralContainers) == 0 {
		return nil
	}
	defaultWaiting := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		defaultWaiting = "PodInitializing"
	}
	var out []corev1.ContainerStatus
	for i := range pod.Spec.EphemeralContainers {
		c := (*corev1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		if st.latest(c.Name) == nil {
			o := findStatus(old, c.Name)
			switch {
			case o != nil && (o.State.Terminated != nil || finished):
				out = append(out, *o)
				continue
			case finished:
				continue // added to a pod that had finished: it never runs
			}
		}
		cs := k.containerAPIStatus(pod, c, st, acts, waiting, defaultWaiting, now)
		cs.Started, cs.Ready = nil, false
		out = append(out, cs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func findStatus(list []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}
