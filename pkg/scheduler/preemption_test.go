package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
)

// preemptionConfig: PrioritySort, NodeResourcesFit, DefaultPreemption and
// DefaultBinder only.
func preemptionConfig() *config.KubeSchedulerConfiguration {
	cc := limitedConfig("default-scheduler")
	cc.Profiles[0].Plugins = &config.Plugins{MultiPoint: config.PluginSet{
		Enabled:  []config.Plugin{{Name: "PrioritySort"}, {Name: "NodeResourcesFit"}, {Name: "DefaultPreemption"}, {Name: "DefaultBinder"}},
		Disabled: []config.Plugin{{Name: "*"}}}}
	config.SetDefaults(cc)
	return cc
}

// TestPreemptionWithPDB runs the scheduler with DefaultPreemption: a pod
// with preemptionPolicy Never stays pending with upstream's message; a
// high-priority pod that fits nowhere preempts the low-priority pod no
// PodDisruptionBudget protects (DisruptionTarget condition, graceful
// deletion, Preempted event), is nominated to its node, and is bound there
// once the victim is gone (a kubelet would finish the deletion; the test
// does).
func TestPreemptionWithPDB(t *testing.T) {
	_, c := startScheduler(t, preemptionConfig())
	ctx := context.Background()
	never := corev1.PreemptNever
	for _, pc := range []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 10},
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "high-never"}, Value: 1000, PreemptionPolicy: &never},
	} {
		if _, err := client.For[*schedulingv1.PriorityClass, *schedulingv1.PriorityClassList](c).Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	for _, n := range []string{"n1", "n2"} {
		nd := node(n, nil)
		nd.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("1")
		if _, err := nodes.Create(ctx, nd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	withCPU := func(class string, labels map[string]string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Labels = labels
			p.Spec.PriorityClassName = class
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("800m")}
		}
	}
	one := intstr.FromInt32(1)
	if _, err := client.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c).Namespace("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"guarded", "victim"} {
		labels := map[string]string{"app": name}
		if _, err := pods.Create(ctx, pod(name, withCPU("low", labels)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodeOf := map[string]string{}
	waitFor(t, "the low-priority pods bound", func() (bool, error) {
		for _, name := range []string{"guarded", "victim"} {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.Spec.NodeName == "" {
				return false, err
			}
			nodeOf[name] = p.Spec.NodeName
		}
		return true, nil
	})
	if nodeOf["guarded"] == nodeOf["victim"] {
		t.Fatalf("both pods on %s", nodeOf["victim"])
	}

	// A pod that may not preempt stays pending with upstream's message.
	if _, err := pods.Create(ctx, pod("polite", withCPU("high-never", nil)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const wantNever = "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
	waitFor(t, "the Never pod's PodScheduled=False", func() (bool, error) {
		p, err := pods.Get(ctx, "polite", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				return c.Message == wantNever, fmt.Errorf("message %q", c.Message)
			}
		}
		return false, nil
	})
	if err := pods.Delete(ctx, "polite", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	preemptor, err := pods.Create(ctx, pod("preemptor", withCPU("high", nil)), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the preemptor nominated to the victim's node", func() (bool, error) {
		p, err := pods.Get(ctx, "preemptor", metav1.GetOptions{})
		return err == nil && p.Status.NominatedNodeName == nodeOf["victim"], fmt.Errorf("%v nominated %q", err, p.Status.NominatedNodeName)
	})
	// The victims are preempted asynchronously, after the nomination.
	waitFor(t, "the victim terminating with the DisruptionTarget condition", func() (bool, error) {
		victim, err := pods.Get(ctx, "victim", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range victim.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler &&
				c.Message == "default-scheduler: preempting to accommodate a higher priority pod" {
				return victim.DeletionTimestamp != nil, fmt.Errorf("deletionTimestamp %v", victim.DeletionTimestamp)
			}
		}
		return false, fmt.Errorf("conditions %+v", victim.Status.Conditions)
	})
	if g, err := pods.Get(ctx, "guarded", metav1.GetOptions{}); err != nil || g.DeletionTimestamp != nil {
		t.Errorf("the PDB-protected pod: %v %v", err, g.DeletionTimestamp)
	}
	events := client.For[*corev1.Event, *corev1.EventList](c).Namespace("default")
	waitFor(t, "the Preempted event", func() (bool, error) {
		l, err := events.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "victim").String()})
		if err != nil {
			return false, err
		}
		want := fmt.Sprintf("Preempted by pod %s on node %s", preemptor.UID, nodeOf["victim"])
		for _, e := range l.Items {
			if e.Reason == "Preempted" && e.Type == corev1.EventTypeNormal && e.Message == want {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events", len(l.Items))
	})

	// The kubelet would finish the deletion; the preemptor then lands on
	// the node it was nominated to.
	zero := int64(0)
	if err := pods.Delete(ctx, "victim", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the preemptor bound to the victim's node", func() (bool, error) {
		p, err := pods.Get(ctx, "preemptor", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" && p.Spec.NodeName != nodeOf["victim"] {
			t.Fatalf("preemptor bound to %s, want %s", p.Spec.NodeName, nodeOf["victim"])
		}
		return p.Spec.NodeName == nodeOf["victim"], fmt.Errorf("on %q", p.Spec.NodeName)
	})
	if g, err := pods.Get(ctx, "guarded", metav1.GetOptions{}); err != nil || g.DeletionTimestamp != nil || strings.Contains(fmt.Sprint(g.Status.Conditions), "DisruptionTarget") {
		t.Errorf("the PDB-protected pod was touched: %v %+v", err, g)
	}
}
