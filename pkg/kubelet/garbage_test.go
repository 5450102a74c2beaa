package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
)

// A crash-looping container's old instances are collected every minute;
// the previous one stays (kubectl logs --previous) and the restart count
// goes on.
func TestContainerGCKeepsThePrevious(t *testing.T) {
	h := newHarness(t, sim.Config{})
	p := simplePod("crasher", "app")
	p.Annotations = map[string]string{sim.AnnotationRunDuration: "0s", sim.AnnotationExitCode: "1"}
	h.create(t, p)
	p = h.podWhere(t, "crasher", 5*time.Second, func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 4
	})
	count := func() int {
		resp, err := h.rt.ListContainers(h.ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			LabelSelector: map[string]string{cri.LabelPodUID: string(p.UID)}}})
		if err != nil {
			t.Fatal(err)
		}
		return len(resp.Containers)
	}
	h.waitStepping(t, "old containers collected", 10*time.Second, func() (bool, error) { return count() <= 2, nil })
	p = h.podWhere(t, "crasher", 5*time.Second, func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount >= 5 && cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.ExitCode == 1
	})
	if n := count(); n > 2 {
		t.Errorf("%d containers left after collection", n)
	}
}
