package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func TestNumFeasibleNodesToFind(t *testing.T) {
	p := func(v int32) *int32 { return &v }
	tests := []struct {
		global  int32
		profile *int32
		nodes   int32
		want    int32
	}{
		{0, nil, 10, 10},       // below 100: all
		{0, nil, 1000, 420},    // adaptive: 50 - 1000/125 = 42%
		{0, nil, 5000, 500},    // 50 - 40 = 10%
		{0, nil, 6000, 300},    // floor 5%
		{40, nil, 1000, 400},   // global
		{40, p(30), 1000, 300}, // profile wins
		{1, nil, 1000, 100},    // at least 100
	}
	for _, tt := range tests {
		s := &Scheduler{percentageOfNodesToScore: tt.global}
		if got := s.numFeasibleNodesToFind(tt.profile, tt.nodes); got != tt.want {
			t.Errorf("global %d profile %v nodes %d: got %d want %d", tt.global, tt.profile, tt.nodes, got, tt.want)
		}
	}
}

func TestSelectHostBreaksTiesAtRandom(t *testing.T) {
	scores := []framework.NodePluginScores{{Name: "a", TotalScore: 5}, {Name: "b", TotalScore: 9}, {Name: "c", TotalScore: 9}, {Name: "d", TotalScore: 1}}
	for pick, want := range map[int]string{0: "c", 1: "b"} {
		s := &Scheduler{rand: func(n int) int { return pick % n }}
		if got, _ := s.selectHost(scores); got != want {
			t.Errorf("rand=%d: got %s want %s", pick, got, want)
		}
	}
	if _, err := (&Scheduler{}).selectHost(nil); err == nil {
		t.Error("empty list: no error")
	}
}

func TestUpdatePodCondition(t *testing.T) {
	now := time.Unix(100, 0)
	st := &corev1.PodStatus{}
	c := &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "m"}
	if !updatePodCondition(st, c, now) || len(st.Conditions) != 1 || !st.Conditions[0].LastTransitionTime.Time.Equal(now) {
		t.Fatalf("add: %+v", st)
	}
	c2 := *c
	if updatePodCondition(st, &c2, now.Add(time.Second)) {
		t.Error("same condition reported as a change")
	}
	c3 := *c
	c3.Message = "other"
	if !updatePodCondition(st, &c3, now.Add(time.Second)) || !st.Conditions[0].LastTransitionTime.Time.Equal(now) || st.Conditions[0].Message != "other" {
		t.Errorf("message change moved the transition time or was lost: %+v", st.Conditions[0])
	}
}

// limitedProfile uses the plugins that need no volumes or DRA (the test
// is about the scheduler, not the default set).
func limitedConfig(names ...string) *config.KubeSchedulerConfiguration {
	cc := config.Default()
	for i := range cc.Profiles {
		cc.Profiles[i].Plugins = nil
	}
	cc.Profiles = cc.Profiles[:0]
	for _, n := range names {
		name := n
		cc.Profiles = append(cc.Profiles, config.KubeSchedulerProfile{SchedulerName: &name, Plugins: &config.Plugins{
			MultiPoint: config.PluginSet{Enabled: []config.Plugin{{Name: "PrioritySort"}, {Name: "SchedulingGates"}, {Name: "NodeUnschedulable"},
				{Name: "NodeName"}, {Name: "NodePorts"}, {Name: "NodeAffinity"}, {Name: "DefaultBinder"}},
				Disabled: []config.Plugin{{Name: "*"}}},
		}})
	}
	config.SetDefaults(cc)
	off := false
	cc.LeaderElection.LeaderElect = &off
	return cc
}

func startScheduler(t *testing.T, cc *config.KubeSchedulerConfiguration) (*testenv.Environment, *client.Client) {
	t.Helper()
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	ccfg := &client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1}
	runScheduler(t, context.Background(), cc, schedulerClientConfig(t, env))
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	return env, c
}

// schedulerClientConfig is the scheduler's client against env, as kubeadm
// configures it: user system:kube-scheduler, whose permissions are
// upstream's bootstrap policy (the tests' clusters authorize with RBAC, so
// a request the scheduler makes beyond upstream's permissions fails them).
func schedulerClientConfig(t *testing.T, env *testenv.Environment) *client.Config {
	t.Helper()
	certPEM, keyPEM, err := env.UserCertificate("system:kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range env.Forbidden() {
			if f.User == "system:kube-scheduler" {
				t.Errorf("the scheduler was refused: %s", f)
			}
		}
	})
	return &client.Config{Host: env.URL, CAData: env.CAData, CertData: certPEM, KeyData: keyPEM, QPS: -1}
}

// runScheduler runs a scheduler with cc against ccfg's server until the
// test ends (then checks that Run returned no error).
func runScheduler(t *testing.T, ctx context.Context, cc *config.KubeSchedulerConfiguration, ccfg *client.Config) *Scheduler {
	t.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	s, err := New(runCtx, Config{ComponentConfig: cc, ClientConfig: ccfg, Identity: "test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s
}

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

// createNode creates n with its status, without the not-ready taint.
func createNode(t *testing.T, nodes *client.Typed[*corev1.Node, *corev1.NodeList], n *corev1.Node) {
	t.Helper()
	ctx := context.Background()
	status := n.Status
	n, err := nodes.Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status = status
	if n, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	readyNode(t, ctx, nodes, n, nil)
}

func pod(name string, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error: %v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSchedulesPodsAndReportsUnschedulable(t *testing.T) {
	_, c := startScheduler(t, limitedConfig("default-scheduler"))
	ctx := context.Background()
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	for i := range 3 {
		createNode(t, nodes, node(fmt.Sprintf("n%d", i), map[string]string{"disk": map[bool]string{true: "ssd", false: "hdd"}[i == 2]}))
	}
	for i := range 10 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("p%d", i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pods.Create(ctx, pod("ssd", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, pod("nowhere", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "tape"} }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, pod("other", func(p *corev1.Pod) { p.Spec.SchedulerName = "someone-else" }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "11 pods bound", func() (bool, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		bound := 0
		for _, p := range l.Items {
			if p.Spec.NodeName != "" {
				bound++
				if p.Name == "ssd" && p.Spec.NodeName != "n2" {
					t.Fatalf("pod ssd on %s, want n2", p.Spec.NodeName)
				}
			}
		}
		return bound == 11, fmt.Errorf("%d bound", bound)
	})
	const want = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
	waitFor(t, "PodScheduled=False on the unschedulable pod", func() (bool, error) {
		p, err := pods.Get(ctx, "nowhere", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				if c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable || !strings.HasPrefix(c.Message, want) {
					return false, fmt.Errorf("condition %+v", c)
				}
				return true, nil
			}
		}
		return false, fmt.Errorf("no condition: %+v", p.Status)
	})
	events := client.For[*corev1.Event, *corev1.EventList](c).Namespace("default")
	waitFor(t, "the FailedScheduling event", func() (bool, error) {
		l, err := events.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "nowhere").String()})
		if err != nil {
			return false, err
		}
		for _, e := range l.Items {
			if e.Reason == "FailedScheduling" && e.Type == corev1.EventTypeWarning && strings.HasPrefix(e.Message, want) && e.Source.Component == "default-scheduler" {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events", len(l.Items))
	})
	other, err := pods.Get(ctx, "other", metav1.GetOptions{})
	if err != nil || other.Spec.NodeName != "" || len(other.Status.Conditions) != 0 {
		t.Errorf("a pod of another scheduler was touched: %+v %v", other, err)
	}
	// A new node with the label makes the pod schedulable (NodeAffinity
	// registered node add/label events).
	createNode(t, nodes, node("tape", map[string]string{"disk": "tape"}))
	waitFor(t, "the waiting pod bound to the new node", func() (bool, error) {
		p, err := pods.Get(ctx, "nowhere", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "tape", err
	})
}

// TestFirstCycleSeesEveryNode: nodes and a pending pod exist before the
// scheduler starts; its first cycle must already see every node (the
// informer handlers filled the cache before scheduling began, as
// upstream's WaitForHandlersSync), so the pod, which fits only the last
// node, is bound at its first attempt.
func TestFirstCycleSeesEveryNode(t *testing.T) {
	env := testenv.StartT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	ccfg := &client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1}
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	const n = 300
	for i := range n {
		if _, err := nodes.Create(ctx, node(fmt.Sprintf("n%03d", i), map[string]string{"last": strconv.FormatBool(i == n-1)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pods.Create(ctx, pod("p", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"last": "true"} }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	s, err := New(ctx, Config{ComponentConfig: limitedConfig("default-scheduler"), ClientConfig: ccfg, Identity: "test",
		Logger: slog.New(slog.DiscardHandler), Registry: reg, Gatherer: reg})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor(t, "the pod bound", func() (bool, error) {
		p, err := pods.Get(ctx, "p", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != "", err
	})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "scheduler_schedule_attempts_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() != "scheduled" && m.GetCounter().GetValue() != 0 {
					t.Errorf("%v attempts with result %s before the pod was bound", m.GetCounter().GetValue(), l.GetValue())
				}
			}
		}
	}
}
