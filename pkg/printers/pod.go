package printers

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// nodeUnreachablePodReason is the pod status reason the node lifecycle
// controller sets when it evicts pods from a node that stopped reporting.
const nodeUnreachablePodReason = "NodeLost"

func podHandler() Handler {
	podStatusDoc := corev1.PodStatus{}.SwaggerDoc()
	podSpecDoc := corev1.PodSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
			col("Status", "string", "The aggregate status of the containers in this pod."),
			col("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
			ageColumn(),
			wideCol("IP", "string", podStatusDoc["podIP"]),
			wideCol("Node", "string", podSpecDoc["nodeName"]),
			wideCol("Nominated Node", "string", podStatusDoc["nominatedNodeName"]),
			wideCol("Readiness Gates", "string", podSpecDoc["readinessGates"]),
		},
		Cells: typed(podCells),
		Conditions: func(obj runtime.Object) []metav1.TableRowCondition {
			pod, ok := obj.(*corev1.Pod)
			if !ok {
				return nil
			}
			switch pod.Status.Phase {
			case corev1.PodSucceeded:
				return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
			case corev1.PodFailed:
				return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
			}
			return nil
		},
	}
}

// isSidecar reports whether c is a restartable init container (a "sidecar":
// an init container whose restartPolicy is Always).
func isSidecar(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// podCounters accumulates the READY and RESTARTS numbers while walking a
// pod's container statuses.
type podCounters struct {
	ready       int
	restarts    int
	lastRestart time.Time // latest LastTerminationState.Terminated.FinishedAt seen
}

func (c *podCounters) addRestarts(s *corev1.ContainerStatus) {
	c.restarts += int(s.RestartCount)
	if t := s.LastTerminationState.Terminated; t != nil && t.FinishedAt.Time.After(c.lastRestart) {
		c.lastRestart = t.FinishedAt.Time
	}
}

func podCells(pod *corev1.Pod, now time.Time) ([]interface{}, error) {
	reason := podStatusReason(pod)

	sidecars := map[string]bool{}
	total := len(pod.Spec.Containers)
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			sidecars[pod.Spec.InitContainers[i].Name] = true
			total++
		}
	}

	// Init containers first: all of them count towards RESTARTS while the pod
	// is still initializing; only sidecars count once it has initialized.
	var all, sidecarOnly podCounters
	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		s := &pod.Status.InitContainerStatuses[i]
		all.addRestarts(s)
		if sidecars[s.Name] {
			sidecarOnly.addRestarts(s)
		}
		term, wait := s.State.Terminated, s.State.Waiting
		if term != nil && term.ExitCode == 0 {
			continue
		}
		if sidecars[s.Name] && s.Started != nil && *s.Started {
			if s.Ready {
				all.ready++
			}
			continue
		}
		initializing = true
		switch {
		case term != nil && term.Reason != "":
			reason = "Init:" + term.Reason
		case term != nil && term.Signal != 0:
			reason = fmt.Sprintf("Init:Signal:%d", term.Signal)
		case term != nil:
			reason = fmt.Sprintf("Init:ExitCode:%d", term.ExitCode)
		case wait != nil && wait.Reason != "" && wait.Reason != "PodInitializing":
			reason = "Init:" + wait.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		break
	}

	counted := all
	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		counted = podCounters{ready: all.ready, restarts: sidecarOnly.restarts, lastRestart: sidecarOnly.lastRestart}
		hasRunning := false
		// Walk backwards so the first container's state wins the STATUS.
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			s := &pod.Status.ContainerStatuses[i]
			counted.addRestarts(s)
			term, wait := s.State.Terminated, s.State.Waiting
			switch {
			case wait != nil && wait.Reason != "":
				reason = wait.Reason
			case term != nil && term.Reason != "":
				reason = term.Reason
			case term != nil && term.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", term.Signal)
			case term != nil:
				reason = fmt.Sprintf("ExitCode:%d", term.ExitCode)
			case s.Ready && s.State.Running != nil:
				hasRunning = true
				counted.ready++
			}
		}
		// A container that completed while another is still running does
		// not make the whole pod "Completed".
		if reason == "Completed" && hasRunning {
			if hasPodReady(pod) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		if pod.Status.Reason == nodeUnreachablePodReason {
			reason = "Unknown"
		} else if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			reason = "Terminating"
		}
	}

	restarts := strconv.Itoa(counted.restarts)
	if counted.restarts != 0 && !counted.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", counted.restarts, age(metav1.NewTime(counted.lastRestart), now))
	}

	ip := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}

	readinessGates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		passed := 0
		for _, gate := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == gate.ConditionType {
					if c.Status == corev1.ConditionTrue {
						passed++
					}
					break
				}
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", passed, n)
	}

	return []interface{}{
		pod.Name,
		fmt.Sprintf("%d/%d", counted.ready, total),
		reason,
		restarts,
		age(pod.CreationTimestamp, now),
		orNone(ip),
		orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName),
		readinessGates,
	}, nil
}

// podStatusReason is the STATUS before container states are looked at: the
// phase, overridden by status.reason, overridden by a SchedulingGated
// PodScheduled condition.
func podStatusReason(pod *corev1.Pod) string {
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}
	return reason
}

// podConditionTrue reports whether the first condition of type t is True.
func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hasPodReady reports whether any Ready condition is True.
func hasPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
