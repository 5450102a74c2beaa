package hollow

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/scheduler"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func TestNodeNamesAndAddresses(t *testing.T) {
	c := Config{Nodes: 3}
	if got := c.NodeName(2); got != "sim-node-2" {
		t.Errorf("NodeName(2) = %s", got)
	}
	if got := (Config{Nodes: 1, Name: "host"}).NodeName(0); got != "host" {
		t.Errorf("single node name %s", got)
	}
	tests := []struct {
		i      int
		ip     string
		subnet string
	}{{0, "10.255.0.1", "10.64.0.0/24"}, {255, "10.255.1.0", "10.64.255.0/24"}, {256, "10.255.1.1", "10.65.0.0/24"}, {MaxNodes - 1, "10.255.64.0", "10.127.255.0/24"}}
	for _, tt := range tests {
		if NodeIP(tt.i) != tt.ip || PodSubnet(tt.i).String() != tt.subnet {
			t.Errorf("node %d: %s %s, want %s %s", tt.i, NodeIP(tt.i), PodSubnet(tt.i), tt.ip, tt.subnet)
		}
	}
}

// Three hollow nodes with skiff's scheduler (and the node lifecycle
// controller, which lifts the not-ready taint the API server puts on new
// nodes): pods spread over them and run.
func TestPodsRunOnHollowNodes(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{Scheduler: scheduler.InProcess(nil, scheduler.Config{}),
		ControllerManager: controllermanager.InProcess(controllermanager.Config{Controllers: []string{"node-lifecycle-controller"}})})
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{Client: c, Nodes: 3}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	waitFor(t, "3 ready nodes without taints", func() (bool, error) {
		l, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: LabelRuntime + "=sim"})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, n := range l.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && len(n.Spec.Taints) == 0 {
					ready++
				}
			}
		}
		return ready == 3, nil
	})
	for i := 0; i < 6; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "6 running pods on 3 nodes", func() (bool, error) {
		l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		running, perNode, ips := 0, map[string]int{}, map[string]bool{}
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				running++
				perNode[p.Spec.NodeName]++
				ips[p.Status.PodIP] = true
			}
		}
		bound := 0
		for _, p := range l.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return running == 6 && len(perNode) == 3 && len(ips) == 6, fmt.Errorf("bound %d, running %d, per node %v", bound, running, perNode)
	})
}

func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error %v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
