package defaultpreemption

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	fwruntime "github.com/skiff-sh/skiff/pkg/scheduler/framework/runtime"
	"github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPreemptionAgainstAPIServer runs DefaultPreemption (asynchronous, as
// the product) with the in-tree NodeResourcesFit against an in-process
// API server: of two nodes where a low-priority pod blocks the preemptor,
// the one whose victim no PodDisruptionBudget protects is chosen; the
// victim gets the DisruptionTarget condition and is deleted through the
// API, a Preempted event is recorded, a lower-priority pod nominated to
// that node loses its nomination, and once the preemptor is nominated
// there it does not preempt again while the victim terminates.
func TestPreemptionAgainstAPIServer(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	pcs := client.For[*schedulingv1.PriorityClass, *schedulingv1.PriorityClassList](c)
	for name, v := range map[string]int32{"low": 10, "high": 1000} {
		if _, err := pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	create := func(name, class, node string, labels map[string]string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
			Spec: corev1.PodSpec{NodeName: node, PriorityClassName: class, Containers: []corev1.Container{{Name: "c", Image: "pause",
				Resources: corev1.ResourceRequirements{Requests: largeRes}}}}}
		out, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	guarded := create("guarded", "low", "node1", map[string]string{"app": "guarded"})
	victim := create("victim", "low", "node2", nil)
	preemptor := create("preemptor", "high", "", nil)
	nominated := create("nominated", "low", "", nil)
	nominated.Status.NominatedNodeName = "node2"
	if nominated, err = pods.UpdateStatus(ctx, nominated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if preemptor.Spec.SchedulerName != "default-scheduler" || victim.Spec.Priority == nil || *victim.Spec.Priority != 10 {
		t.Fatalf("defaults: schedulerName %q, priority %v", preemptor.Spec.SchedulerName, victim.Spec.Priority)
	}
	one := intstr.FromInt32(1)
	if _, err := client.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c).Namespace("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	inf := informers.NewSharedInformerFactory(c, 0)
	nodes := []*corev1.Node{mkNode("node1", veryLargeRes), mkNode("node2", veryLargeRes)}
	e := newEnv(t, nil, nodes, nil, envOpts{realPreempt: true, realFit: true,
		nominator: &fakeNominator{pods: map[string][]*framework.PodInfo{"node2": {framework.NewPodInfo(nominated)}}},
		opts:      fwruntime.Options{Client: c, Informers: inf, Snapshot: cache.NewSnapshot([]*corev1.Pod{guarded, victim}, nodes)}})
	e.pl.Async = true
	inf.Start(ctx)
	inf.WaitForCacheSync(ctx)
	waitFor(t, "the PDB in the informer", func() (bool, error) {
		l, err := inf.PodDisruptionBudgets().Lister().List(everything())
		return len(l) == 1, err
	})

	state := framework.NewCycleState()
	if _, s, _ := e.fw.RunPreFilterPlugins(ctx, state, preemptor); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	r, s := e.pl.PostFilter(ctx, state, preemptor, unsched("node1", "node2"))
	if !s.IsSuccess() || r == nil || r.NominatedNodeName != "node2" {
		t.Fatalf("PostFilter = %+v, %v; want node2", r, s)
	}
	e.pl.Wait()

	got, err := pods.Get(ctx, "victim", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		t.Log("victim deleted at once")
	case err != nil:
		t.Fatal(err)
	default:
		if got.DeletionTimestamp == nil {
			t.Errorf("victim not being deleted: %+v", got.ObjectMeta)
		}
		var cond *corev1.PodCondition
		for i := range got.Status.Conditions {
			if got.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cond = &got.Status.Conditions[i]
			}
		}
		if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != corev1.PodReasonPreemptionByScheduler ||
			cond.Message != "default-scheduler: preempting to accommodate a higher priority pod" {
			t.Errorf("victim's DisruptionTarget condition = %+v", cond)
		}
	}
	if g, err := pods.Get(ctx, "guarded", metav1.GetOptions{}); err != nil || g.DeletionTimestamp != nil || len(g.Status.Conditions) != 0 {
		t.Errorf("the PDB-protected pod was touched: %v %+v", err, g)
	}
	if n, err := pods.Get(ctx, "nominated", metav1.GetOptions{}); err != nil || n.Status.NominatedNodeName != "" {
		t.Errorf("lower-priority nominated pod: %v, nominatedNodeName %q", err, n.Status.NominatedNodeName)
	}
	select {
	case ev := <-e.events.Events:
		if want := "Normal Preempted Preempted by pod " + string(preemptor.UID) + " on node node2"; ev != want {
			t.Errorf("event %q, want %q", ev, want)
		}
	default:
		t.Error("no Preempted event")
	}

	// The victim terminates (no kubelet here); the preemptor, nominated
	// to node2, waits instead of preempting again.
	if apierrors.IsNotFound(err) {
		return
	}
	preemptor.Status.NominatedNodeName = "node2"
	if _, err := pods.UpdateStatus(ctx, preemptor, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the informer to see the nomination", func() (bool, error) {
		p, err := inf.Pods().Lister().Namespace("default").Get("preemptor")
		return err == nil && p.Status.NominatedNodeName == "node2", nil
	})
	terminating, err := pods.Get(ctx, "victim", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.fw.SetSnapshot(cache.NewSnapshot([]*corev1.Pod{guarded, terminating}, nodes))
	state = framework.NewCycleState()
	e.fw.RunPreFilterPlugins(ctx, state, preemptor)
	r, s = e.pl.PostFilter(ctx, state, preemptor, unsched("node1", "node2"))
	if r != nil || s.Code() != framework.Unschedulable || s.Message() != "preemption: not eligible due to a terminating pod on the nominated node." {
		t.Errorf("second PostFilter = %+v, %v", r, s)
	}
	if !strings.HasPrefix(s.Message(), "preemption: ") {
		t.Errorf("message %q", s.Message())
	}
}

func everything() labels.Selector { return labels.Everything() }
