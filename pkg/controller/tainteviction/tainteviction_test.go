package tainteviction

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

func secs(n int64) *int64 { return &n }

func TestDecide(t *testing.T) {
	gpu := corev1.Taint{Key: "example.com/gpu", Value: "a", Effect: corev1.TaintEffectNoExecute}
	unreachable := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	tests := []struct {
		name   string
		taints []corev1.Taint
		tols   []corev1.Toleration
		want   Decision
	}{
		{name: "no taint", tols: nil, want: Decision{Cancel: true}},
		{name: "not tolerated", taints: []corev1.Taint{gpu}, want: Decision{}},
		{name: "wrong value", taints: []corev1.Taint{gpu}, tols: []corev1.Toleration{{Key: gpu.Key, Value: "b"}}, want: Decision{}},
		{name: "wrong effect", taints: []corev1.Taint{gpu}, tols: []corev1.Toleration{{Key: gpu.Key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, want: Decision{}},
		{name: "forever", taints: []corev1.Taint{gpu}, tols: []corev1.Toleration{{Key: gpu.Key, Value: "a"}}, want: Decision{Cancel: true}},
		{name: "wildcard forever", taints: []corev1.Taint{gpu, unreachable}, tols: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, want: Decision{Cancel: true}},
		{name: "smallest seconds", taints: []corev1.Taint{gpu, unreachable},
			tols: []corev1.Toleration{{Key: gpu.Key, Operator: corev1.TolerationOpExists, TolerationSeconds: secs(60)},
				{Key: unreachable.Key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(300)}},
			want: Decision{After: time.Minute}},
		{name: "one of two not tolerated", taints: []corev1.Taint{gpu, unreachable},
			tols: []corev1.Toleration{{Key: unreachable.Key, Operator: corev1.TolerationOpExists, TolerationSeconds: secs(300)}}, want: Decision{}},
		{name: "zero seconds: now", taints: []corev1.Taint{gpu}, tols: []corev1.Toleration{{Key: gpu.Key, Operator: corev1.TolerationOpExists, TolerationSeconds: secs(0)}}, want: Decision{}},
		{name: "forever and bounded: bounded", taints: []corev1.Taint{gpu, unreachable},
			tols: []corev1.Toleration{{Key: gpu.Key, Operator: corev1.TolerationOpExists}, {Key: unreachable.Key, Operator: corev1.TolerationOpExists, TolerationSeconds: secs(30)}},
			want: Decision{After: 30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.taints, tt.tols); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last: %s", what, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEviction runs the controller on a fake clock: a pod that does not
// tolerate the node's NoExecute taint is marked DisruptionTarget and
// deleted at once, one tolerating it for 30s after 30s (not before), one
// tolerating it forever never; a deletion scheduled for 60s is cancelled
// when the taint goes.
func TestEviction(t *testing.T) {
	clk := clock.NewFake(t0)
	env := testenv.StartT(t, testenv.Config{Clock: clk})
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, tols ...corev1.Toleration) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Finalizers: []string{"test/keep"}},
			Spec: corev1.PodSpec{NodeName: "n1", Tolerations: tols, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const key = "example.com/maintenance"
	pod("none")
	pod("forever", corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	pod("thirty", corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(30)})
	pod("sixty", corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(60)})

	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	f.Start(runCtx)
	go func() { defer close(done); _ = ctrl.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done; f.Shutdown() })

	state := func(name string) string {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "gone"
		}
		if err != nil {
			return err.Error()
		}
		s := "running"
		if p.DeletionTimestamp != nil {
			s = "deleting"
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "DeletionByTaintManager" {
					s += "+DisruptionTarget"
				}
			}
		}
		return s
	}
	want := func(what string, names map[string]string) {
		t.Helper()
		eventually(t, what, func() (bool, string) {
			got := map[string]string{}
			for n := range names {
				got[n] = state(n)
			}
			return fmt.Sprint(got) == fmt.Sprint(names), fmt.Sprint(got)
		})
	}
	pending := func(n int) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d deletions scheduled", n), func() (bool, string) {
			ctrl.mu.Lock()
			defer ctrl.mu.Unlock()
			return len(ctrl.pending) == n, fmt.Sprint(ctrl.pending)
		})
	}

	taint := func(on bool) {
		t.Helper()
		body := `{"spec":{"taints":null}}`
		if on {
			body = `{"spec":{"taints":[{"key":"` + key + `","effect":"NoExecute"}]}}`
		}
		if _, err := nodes.Patch(ctx, "n1", types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	taint(true)
	want("the intolerant pod deleted at once", map[string]string{"none": "deleting+DisruptionTarget", "forever": "running", "thirty": "running", "sixty": "running"})
	pending(2)
	clk.Step(29 * time.Second)
	want("nothing more at 29s", map[string]string{"forever": "running", "thirty": "running", "sixty": "running"})
	clk.Step(time.Second)
	want("thirty deleted at 30s", map[string]string{"forever": "running", "thirty": "deleting+DisruptionTarget", "sixty": "running"})
	pending(1)
	taint(false)
	pending(0)
	clk.Step(time.Minute)
	want("sixty kept: its deletion was cancelled", map[string]string{"forever": "running", "sixty": "running"})
}
