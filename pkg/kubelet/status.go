package kubelet

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
)

// Condition reasons as upstream's kubelet writes them.
const (
	reasonContainersNotInitialized = "ContainersNotInitialized"
	reasonContainersNotReady       = "ContainersNotReady"
	reasonPodCompleted             = "PodCompleted"
	reasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
)

func mt(t time.Time) metav1.Time {
	if t.IsZero() {
		return metav1.Time{}
	}
	return metav1.NewTime(t.Truncate(time.Second))
}

// generateAPIStatus is the pod's API status from its runtime state (at
// the kubelet's clock), as upstream's generateAPIPodStatus.
func (k *Kubelet) generateAPIStatus(pod *corev1.Pod, st *podRuntimeStatus, acts podActions, waiting map[string]waitingInfo) corev1.PodStatus {
	now := k.clock.Now()
	// What the status manager last wrote is newer than the informer's
	// copy (as upstream's kubelet, which starts from its status cache).
	old := pod.Status
	if cached, ok := k.status.cached(pod.UID); ok {
		old = cached
	}
	s := corev1.PodStatus{QOSClass: old.QOSClass, NominatedNodeName: old.NominatedNodeName, Resize: old.Resize,
		ResourceClaimStatuses: old.ResourceClaimStatuses, ObservedGeneration: pod.Generation}
	s.HostIP = k.cfg.NodeIP
	s.HostIPs = []corev1.HostIP{{IP: k.cfg.NodeIP}}
	ips := st.IPs
	if pod.Spec.HostNetwork {
		ips = []string{k.cfg.NodeIP}
	}
	if len(ips) == 0 && len(old.PodIPs) > 0 {
		for _, ip := range old.PodIPs {
			ips = append(ips, ip.IP)
		}
	}
	if len(ips) > 0 {
		s.PodIP = ips[0]
		for _, ip := range ips {
			s.PodIPs = append(s.PodIPs, corev1.PodIP{IP: ip})
		}
	}
	s.StartTime = old.StartTime
	if s.StartTime == nil {
		t := mt(now)
		s.StartTime = &t
	}
	initialized := true
	var incomplete []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs := k.containerAPIStatus(pod, c, st, acts, waiting, "PodInitializing", now)
		if isSidecar(c) {
			// A sidecar that has started counts, also once it stops at
			// the pod's end.
			if !(cs.Started != nil && *cs.Started) && cs.State.Terminated == nil && cs.LastTerminationState.Terminated == nil {
				initialized = false
				incomplete = append(incomplete, c.Name)
			}
		} else if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
			initialized = false
			incomplete = append(incomplete, c.Name)
		}
		s.InitContainerStatuses = append(s.InitContainerStatuses, cs)
	}
	regularWaiting := "ContainerCreating"
	if !initialized {
		regularWaiting = "PodInitializing"
	}
	for i := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, k.containerAPIStatus(pod, &pod.Spec.Containers[i], st, acts, waiting, regularWaiting, now))
	}
	sort.Slice(s.ContainerStatuses, func(i, j int) bool { return s.ContainerStatuses[i].Name < s.ContainerStatuses[j].Name })
	s.EphemeralContainerStatuses = k.ephemeralStatuses(pod, old.Phase, old.EphemeralContainerStatuses, st, acts, waiting, now)

	terminal := pod.DeletionTimestamp != nil && !anyActive(st)
	s.Phase = podPhase(pod, &s, initialized, terminal)
	if old.Phase == corev1.PodSucceeded || old.Phase == corev1.PodFailed {
		s.Phase = old.Phase // never leaves a terminal phase
	}
	s.Conditions = k.conditions(pod, old, &s, st, incomplete, now)
	if old.Phase == s.Phase {
		s.Reason, s.Message = old.Reason, old.Message
	}
	return s
}

func (k *Kubelet) containerID(id string) string { return k.runtimeID + "://" + id }

func (k *Kubelet) terminatedState(c *containerStatus) *corev1.ContainerStateTerminated {
	reason := c.Reason
	if reason == "" {
		reason = "Completed"
		if c.ExitCode != 0 {
			reason = "Error"
		}
	}
	return &corev1.ContainerStateTerminated{ExitCode: c.ExitCode, Reason: reason, Message: c.Message,
		StartedAt: mt(c.StartedAt), FinishedAt: mt(c.FinishedAt), ContainerID: k.containerID(c.ID)}
}

func (k *Kubelet) containerAPIStatus(pod *corev1.Pod, c *corev1.Container, st *podRuntimeStatus, acts podActions, waiting map[string]waitingInfo, defaultWaiting string, now time.Time) corev1.ContainerStatus {
	out := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: new(bool)}
	cs := st.latest(c.Name)
	if cs == nil {
		reason, msg := defaultWaiting, ""
		if w, ok := waiting[c.Name]; ok {
			reason, msg = w.reason, w.message
		}
		out.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
		return out
	}
	out.RestartCount = int32(cs.Attempt)
	out.ImageID = cs.ImageRef
	out.ContainerID = k.containerID(cs.ID)
	if prev := st.previous(c.Name); prev != nil && exited(prev) {
		out.LastTerminationState.Terminated = k.terminatedState(prev)
	}
	switch cs.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		out.State.Running = &corev1.ContainerStateRunning{StartedAt: mt(cs.StartedAt)}
		if k.probes != nil {
			*out.Started = k.probes.Started(c, cs.ID)
			out.Ready = k.probes.Ready(c, cs.ID)
		} else {
			*out.Started = true
			out.Ready = readinessLeft(c, cs, now) <= 0
		}
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		if left, ok := acts.BackOff[c.Name]; ok {
			out.LastTerminationState.Terminated = k.terminatedState(cs)
			out.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", backOffDelay(cs), c.Name, pod.Name, pod.Namespace, pod.UID)}
			_ = left
		} else {
			out.State.Terminated = k.terminatedState(cs)
			if !isSidecar(c) && cs.ExitCode == 0 && isInit(pod, c.Name) {
				out.Ready = true // a completed init container reads ready, as upstream
			}
		}
	default:
		out.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return out
}

func isInit(pod *corev1.Pod, name string) bool {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return true
		}
	}
	return false
}

// podPhase is upstream's getPhase.
func podPhase(pod *corev1.Pod, s *corev1.PodStatus, initialized, terminal bool) corev1.PodPhase {
	policy := restartPolicy(pod)
	if !initialized {
		for i, cs := range s.InitContainerStatuses {
			if !isSidecar(&pod.Spec.InitContainers[i]) && policy == corev1.RestartPolicyNever &&
				cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0 {
				return corev1.PodFailed
			}
		}
		return corev1.PodPending
	}
	var running, waiting, stopped, succeeded int
	for _, cs := range s.ContainerStatuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped > 0:
		if policy == corev1.RestartPolicyAlways && !terminal {
			return corev1.PodRunning
		}
		if stopped == succeeded {
			return corev1.PodSucceeded
		}
		if policy == corev1.RestartPolicyNever || terminal {
			return corev1.PodFailed
		}
		return corev1.PodRunning
	}
	return corev1.PodPending
}

func (k *Kubelet) conditions(pod *corev1.Pod, old corev1.PodStatus, s *corev1.PodStatus, st *podRuntimeStatus, incomplete []string, now time.Time) []corev1.PodCondition {
	var out []corev1.PodCondition
	oldCond := func(t corev1.PodConditionType) *corev1.PodCondition {
		for i := range old.Conditions {
			if old.Conditions[i].Type == t {
				return &old.Conditions[i]
			}
		}
		return nil
	}
	add := func(c corev1.PodCondition) {
		c.LastTransitionTime = mt(now)
		if o := oldCond(c.Type); o != nil && o.Status == c.Status {
			c.LastTransitionTime = o.LastTransitionTime
		}
		c.ObservedGeneration = pod.Generation
		out = append(out, c)
	}
	// Conditions others own (PodScheduled, DisruptionTarget, readiness
	// gates...) are kept.
	for _, c := range pod.Status.Conditions { // others' conditions: the informer's copy
		if !kubeletConditions[c.Type] {
			out = append(out, c)
		}
	}
	done := s.Phase == corev1.PodSucceeded || s.Phase == corev1.PodFailed

	ready := corev1.ConditionFalse
	if st.SandboxReady && (len(st.IPs) > 0 || pod.Spec.HostNetwork) {
		ready = corev1.ConditionTrue
	}
	add(corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: ready})

	switch {
	case len(pod.Spec.InitContainers) == 0:
		add(corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue})
	case s.Phase == corev1.PodSucceeded:
		add(corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, Reason: reasonPodCompleted})
	case len(incomplete) > 0:
		add(corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: reasonContainersNotInitialized,
			Message: fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(incomplete, " "))})
	default:
		add(corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue})
	}

	var unready []string
	for i, cs := range s.InitContainerStatuses {
		if isSidecar(&pod.Spec.InitContainers[i]) && !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	for i := range pod.Spec.Containers {
		for _, cs := range s.ContainerStatuses {
			if cs.Name == pod.Spec.Containers[i].Name && !cs.Ready {
				unready = append(unready, cs.Name)
			}
		}
	}
	var cr corev1.PodCondition
	switch {
	case s.Phase == corev1.PodSucceeded:
		cr = corev1.PodCondition{Status: corev1.ConditionFalse, Reason: reasonPodCompleted}
	case len(unready) > 0:
		cr = corev1.PodCondition{Status: corev1.ConditionFalse, Reason: reasonContainersNotReady,
			Message: fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))}
	case done:
		cr = corev1.PodCondition{Status: corev1.ConditionFalse, Reason: reasonContainersNotReady}
	default:
		cr = corev1.PodCondition{Status: corev1.ConditionTrue}
	}
	cr.Type = corev1.ContainersReady
	add(cr)
	r := cr
	r.Type = corev1.PodReady
	if r.Status == corev1.ConditionTrue {
		var msgs []string
		for _, g := range pod.Spec.ReadinessGates {
			c := oldCond(g.ConditionType)
			switch {
			case c == nil:
				msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
			case c.Status != corev1.ConditionTrue:
				msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, c.Status))
			}
		}
		if len(msgs) > 0 {
			r = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonReadinessGatesNotReady, Message: strings.Join(msgs, ", ")}
		}
	}
	add(r)
	scheduled := false
	for _, c := range pod.Status.Conditions {
		scheduled = scheduled || c.Type == corev1.PodScheduled
	}
	if !scheduled {
		// A pod bound without the scheduler (spec.nodeName set at
		// creation) is scheduled all the same, as upstream's kubelet says;
		// first, where it stays once the informer has it among others'.
		add(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
		out = append([]corev1.PodCondition{out[len(out)-1]}, out[:len(out)-1]...)
	}
	return out
}

// kubeletConditions are the pod conditions the kubelet owns.
var kubeletConditions = map[corev1.PodConditionType]bool{corev1.PodReadyToStartContainers: true, corev1.PodInitialized: true,
	corev1.ContainersReady: true, corev1.PodReady: true}

// statusManager writes pods/status when it changed, and the final delete.
//
// A write is a PUT of the pod with its new status (in the client's content
// type, protobuf for the kubelet as upstream's), guarded by the
// resourceVersion it was computed from: a pod changed by anyone else in
// the meantime answers 409 Conflict, and the write is redone on a fresh
// copy with that copy's conditions of other owners (readiness gates,
// DisruptionTarget...). Upstream's kubelet sends a strategic merge patch
// instead; the PUT costs the API server a third of a merge patch (no
// patch application, no JSON) and loses nothing, since the precondition
// refuses a stale base. The informer may not have seen the kubelet's own
// last write yet: the resourceVersion it produced is kept, so the next
// write builds on it instead of conflicting.
type statusManager struct {
	pods *client.Typed[*corev1.Pod, *corev1.PodList]

	mu   sync.Mutex
	last map[types.UID]writtenStatus
	// delivered: pods whose last write the pod source has delivered (the
	// source's copy is that write's result): last forgot them, as the
	// source's copy serves from then on, so that last holds only the
	// writes in flight, not every pod's status.
	delivered map[types.UID]struct{}
}

// writtenStatus is the status last written for a pod: the pod's
// resourceVersion before (from) and after (to) the write.
type writtenStatus struct {
	status   corev1.PodStatus
	from, to string
}

// statusWriteAttempts bounds the writes redone after a conflict.
const statusWriteAttempts = 5

// set writes status unless it is what the pod has or what was last written.
func (m *statusManager) set(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus) error {
	m.mu.Lock()
	last, ok := m.last[pod.UID]
	m.mu.Unlock()
	if ok && apiequality.Semantic.DeepEqual(last.status, status) {
		if pod.ResourceVersion == last.to && apiequality.Semantic.DeepEqual(pod.Status, overStatus(status, pod.Status)) {
			m.mu.Lock()
			if cur, ok := m.last[pod.UID]; ok && cur.to == last.to {
				delete(m.last, pod.UID)
				if m.delivered == nil {
					m.delivered = map[types.UID]struct{}{}
				}
				m.delivered[pod.UID] = struct{}{}
			}
			m.mu.Unlock()
		}
		return nil
	}
	// The body: the pod as the informer has it (a shallow copy: nothing
	// shared is modified), without managedFields (the server keeps its
	// own), with the new status over the old.
	body := *pod
	body.ManagedFields = nil
	body.Status = overStatus(status, pod.Status)
	if apiequality.Semantic.DeepEqual(pod.Status, body.Status) {
		return nil
	}
	if ok && last.from == pod.ResourceVersion && last.to != "" {
		// the informer has not seen the last write: that write's result
		// is this pod with the status then written
		body.ResourceVersion = last.to
	}
	pods := m.pods.Namespace(pod.Namespace)
	for attempt := 1; ; attempt++ {
		from := body.ResourceVersion
		got, err := pods.UpdateStatus(ctx, &body, metav1.UpdateOptions{})
		if err == nil {
			m.mu.Lock()
			m.last[pod.UID] = writtenStatus{status: status, from: from, to: got.ResourceVersion}
			delete(m.delivered, pod.UID)
			m.mu.Unlock()
			return nil
		}
		if apierrors.IsNotFound(err) {
			return nil // gone: the source tells
		}
		if !apierrors.IsConflict(err) || attempt == statusWriteAttempts {
			return err
		}
		fresh, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if fresh.UID != pod.UID {
			return nil // another pod of that name
		}
		body = *fresh
		body.ManagedFields = nil
		body.Status = overStatus(withOthersConditions(status, fresh.Status.Conditions), fresh.Status)
	}
}

// overStatus is status with the fields it leaves empty taken from old, as
// a merge patch of status would leave them: what others set (nominatedNodeName,
// resize, resourceClaimStatuses...) and what the kubelet set once (qosClass,
// startTime) stay.
func overStatus(status, old corev1.PodStatus) corev1.PodStatus {
	n, o := reflect.ValueOf(&status).Elem(), reflect.ValueOf(&old).Elem()
	for i := 0; i < n.NumField(); i++ {
		if f := n.Field(i); f.IsZero() && !o.Field(i).IsZero() {
			f.Set(o.Field(i))
		}
	}
	return status
}

// withOthersConditions is status with the conditions the kubelet does not
// own taken from current (the API's) instead of the copy status was
// computed from.
func withOthersConditions(status corev1.PodStatus, current []corev1.PodCondition) corev1.PodStatus {
	var conds []corev1.PodCondition
	for _, c := range current {
		if !kubeletConditions[c.Type] {
			conds = append(conds, c)
		}
	}
	for _, c := range status.Conditions {
		if kubeletConditions[c.Type] {
			conds = append(conds, c)
		}
	}
	status.Conditions = conds
	return status
}

// deletePod deletes a terminated pod for good (grace period 0, UID
// precondition), as upstream's status manager does.
func (m *statusManager) deletePod(ctx context.Context, pod *corev1.Pod) error {
	zero := int64(0)
	uid := pod.UID
	err := m.pods.Namespace(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
		Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// cached is the status last written for the pod while the pod source has
// not delivered that write (afterwards the source's pod has it).
func (m *statusManager) cached(uid types.UID) (corev1.PodStatus, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.last[uid]
	return s.status, ok
}

// lastWritten is the status last written for pod (pod, the source's
// newest copy, has it once delivered); false when none was written.
func (m *statusManager) lastWritten(pod *corev1.Pod) (corev1.PodStatus, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.last[pod.UID]; ok {
		return s.status, true
	}
	if _, ok := m.delivered[pod.UID]; ok {
		return pod.Status, true
	}
	return corev1.PodStatus{}, false
}

func (m *statusManager) forget(uid types.UID) {
	m.mu.Lock()
	delete(m.last, uid)
	delete(m.delivered, uid)
	m.mu.Unlock()
}

// readinessLeft is how long the running container cs of c has left before
// it reads ready when probes are simulated (Config.SimulateHandlers): a
// container with a readiness probe becomes ready at its first probe,
// initialDelaySeconds after it started (the probe is taken to succeed);
// one without is ready at once.
func readinessLeft(c *corev1.Container, cs *containerStatus, now time.Time) time.Duration {
	if c.ReadinessProbe == nil || cs == nil {
		return 0
	}
	return cs.StartedAt.Add(time.Duration(c.ReadinessProbe.InitialDelaySeconds) * time.Second).Sub(now)
}

// readinessDue is when a running container of pod next becomes ready (0:
// none pending), so that its worker syncs then.
func readinessDue(pod *corev1.Pod, st *podRuntimeStatus, now time.Time) time.Duration {
	var next time.Duration
	check := func(cs []corev1.Container) {
		for i := range cs {
			c := st.latest(cs[i].Name)
			if c == nil || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
				continue
			}
			if left := readinessLeft(&cs[i], c, now); left > 0 && (next == 0 || left < next) {
				next = left
			}
		}
	}
	check(pod.Spec.InitContainers)
	check(pod.Spec.Containers)
	return next
}
