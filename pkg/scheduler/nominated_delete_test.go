package scheduler

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
)

// TestDeletingNominatedPodRetriesOthers: a pending pod nominated to a
// node holds room there that pods of lower or equal priority treat as
// taken; when it is deleted, those pods are retried at once (upstream's
// AssignedPodDelete event with a priority pre-check), not at the next
// periodic flush of the unschedulable pods (minutes later).
func TestDeletingNominatedPodRetriesOthers(t *testing.T) {
	_, c := startScheduler(t, preemptionConfig())
	ctx := context.Background()
	for _, pc := range []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 10},
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
	} {
		if _, err := client.For[*schedulingv1.PriorityClass, *schedulingv1.PriorityClassList](c).Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	n := node("n1", nil)
	n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("2")
	createNode(t, nodes, n)
	withCPU := func(class, cpu string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.PriorityClassName = class
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
	}
	get := func(name string) (*corev1.Pod, error) { return pods.Get(ctx, name, metav1.GetOptions{}) }

	// The victim takes half the node and, once preempted, stays
	// terminating (no kubelet finishes its deletion).
	if _, err := pods.Create(ctx, pod("victim", withCPU("low", "1")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the victim bound", func() (bool, error) {
		p, err := get("victim")
		return err == nil && p.Spec.NodeName == "n1", err
	})
	if _, err := pods.Create(ctx, pod("preemptor", withCPU("high", "2")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the preemptor nominated and the victim terminating", func() (bool, error) {
		p, err := get("preemptor")
		if err != nil || p.Status.NominatedNodeName != "n1" {
			return false, fmt.Errorf("%v nominated %q", err, p.Status.NominatedNodeName)
		}
		v, err := get("victim")
		return err == nil && v.DeletionTimestamp != nil, err
	})

	// The free half is the preemptor's while it is nominated.
	if _, err := pods.Create(ctx, pod("small", withCPU("low", "1")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the small pod unschedulable", func() (bool, error) {
		p, err := get("small")
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return true, nil
			}
		}
		return false, fmt.Errorf("node %q conditions %v", p.Spec.NodeName, p.Status.Conditions)
	})

	if err := pods.Delete(ctx, "preemptor", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the small pod bound to the room the deleted preemptor held", func() (bool, error) {
		p, err := get("small")
		return err == nil && p.Spec.NodeName == "n1", fmt.Errorf("%v node %q", err, p.Spec.NodeName)
	})
}
