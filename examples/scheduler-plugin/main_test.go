package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// TestExampleScheduler runs the example against an in-process API server
// with artifacts/scheduler-config.yaml: the held pod stays Pending with
// the plugin's reason until its annotation goes, the other lands on the
// node PreferLabel prefers, and pods of the default scheduler are left
// alone.
func TestExampleScheduler(t *testing.T) {
	env := testenv.StartT(t)
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("artifacts/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfgText := strings.Replace(string(data), "leaderElect: true", "leaderElect: false", 1)
	cfgText += "clientConnection:\n  kubeconfig: " + env.KubeconfigPath + "\n  qps: -1\n"
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(runCtx, cfgFile, "", slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	for i, tier := range []string{"slow", "fast", "slow"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: map[string]string{"example.com/tier": tier}}}
		n, err := nodes.Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status = corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}
		n.Status.Capacity = n.Status.Allocatable
		if n, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Admission taints new nodes not-ready until the node lifecycle
		// controller sees them Ready; no controller manager runs here.
		n.Spec.Taints = nil
		if _, err := nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	mk := func(name, scheduler string, annotations map[string]string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
			Spec: corev1.PodSpec{SchedulerName: scheduler, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("on-hold", "example-scheduler", map[string]string{HoldAnnotation: "until approved"})
	mk("fast", "example-scheduler", nil)
	mk("default-one", "", nil)

	wait := func(what string, cond func() (bool, string)) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			ok, last := cond()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %s", what, last)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	get := func(name string) *corev1.Pod {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	wait("fast on the fast node", func() (bool, string) {
		p := get("fast")
		return p.Spec.NodeName == "n1", p.Spec.NodeName
	})
	wait("on-hold Unschedulable with the plugin's reason", func() (bool, string) {
		p := get("on-hold")
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				return c.Reason == corev1.PodReasonUnschedulable && c.Message == "0/3 nodes are available: 3 pod is on hold (example.com/hold). no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.", c.Message
			}
		}
		return false, "no condition"
	})
	if p := get("default-one"); p.Spec.NodeName != "" || len(p.Status.Conditions) != 0 {
		t.Errorf("the default scheduler's pod was touched: %+v", p.Status)
	}
	// Releasing the hold: the pod's own update requeues it.
	if _, err := pods.Patch(ctx, "on-hold", types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+HoldAnnotation+`":null}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("on-hold bound after release", func() (bool, string) {
		p := get("on-hold")
		return p.Spec.NodeName != "", "pending"
	})
}
