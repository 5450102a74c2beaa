package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
)

// TestPlacementTaintsAffinitySpread runs the default profile against an
// in-process API server: zones a, b and a tainted zone c. Spread pods
// with nodeTaintsPolicy Honor split 3/3 over a and b; with the default
// Ignore the tainted zone counts as an empty domain, so the third pod is
// unschedulable with upstream's message, and adding the toleration to it
// (the pod's own toleration update requeues it) lets it land in zone c. A
// preferred node affinity picks its zone.
func TestPlacementTaintsAffinitySpread(t *testing.T) {
	cc := config.Default()
	off := false
	cc.LeaderElection.LeaderElect = &off
	_, c := startScheduler(t, cc)
	ctx := context.Background()
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	for i, z := range []string{"a", "b", "c"} {
		n, err := nodes.Create(ctx, node(fmt.Sprintf("n%d", i), map[string]string{corev1.LabelTopologyZone: z, corev1.LabelHostname: fmt.Sprintf("n%d", i)}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Admission tainted the new node not-ready (no node lifecycle
		// controller here to lift it): set the taints the test wants.
		n.Spec.Taints = nil
		if z == "c" {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
		}
		if _, err := nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	honor := corev1.NodeInclusionPolicyHonor
	spread := func(app string, policy *corev1.NodeInclusionPolicy) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": app}
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, NodeTaintsPolicy: policy}}
		}
	}
	placement := func(prefix string) (map[string]int, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := map[string]int{}
		for _, p := range l.Items {
			if strings.HasPrefix(p.Name, prefix) && p.Spec.NodeName != "" {
				out[p.Spec.NodeName]++
			}
		}
		return out, nil
	}
	// One at a time, so each sees the previous placements.
	for i := range 6 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("web-%d", i), spread("web", &honor)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("web-%d bound", i), func() (bool, error) {
			p, err := pods.Get(ctx, fmt.Sprintf("web-%d", i), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return p.Spec.NodeName != "", fmt.Errorf("conditions %+v", p.Status.Conditions)
		})
	}
	got, err := placement("web-")
	if err != nil || got["n0"] != 3 || got["n1"] != 3 || got["n2"] != 0 {
		t.Fatalf("web placement %v (%v), want 3 on n0, 3 on n1", got, err)
	}

	for i := range 2 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("db-%d", i), spread("db", nil)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("db-%d bound", i), func() (bool, error) {
			p, err := pods.Get(ctx, fmt.Sprintf("db-%d", i), metav1.GetOptions{})
			return err == nil && p.Spec.NodeName != "", err
		})
	}
	if _, err := pods.Create(ctx, pod("db-2", spread("db", nil)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const want = "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match pod topology spread constraints."
	waitFor(t, "db-2 unschedulable", func() (bool, error) {
		p, err := pods.Get(ctx, "db-2", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.HasPrefix(c.Message, want) {
				return true, nil
			}
		}
		return false, fmt.Errorf("conditions %+v", p.Status.Conditions)
	})
	p, err := pods.Get(ctx, "db-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "db-2 bound to the tainted zone once it tolerates it", func() (bool, error) {
		p, err := pods.Get(ctx, "db-2", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "n2", fmt.Errorf("on %q (%v)", p.Spec.NodeName, err)
	})

	if _, err := pods.Create(ctx, pod("likes-b", func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}}}}}}
	}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "likes-b bound to zone b", func() (bool, error) {
		p, err := pods.Get(ctx, "likes-b", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "n1", fmt.Errorf("on %q (%v)", p.Spec.NodeName, err)
	})
}
