package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func benchNode(i int) *corev1.Node {
	name := fmt.Sprintf("node-%05d", i)
	c := corev1.ResourceList{
		corev1.ResourcePods:   resource.MustParse("110"),
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("32Gi"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{
			"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)}},
		Status: corev1.NodeStatus{Capacity: c, Allocatable: c,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

// benchPod is the bench's basic shape (scheduler_perf's pod-default).
func benchPod(ns string, i int, node string) *corev1.Pod {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("500Mi")}
	name := fmt.Sprintf("pod-%06d", i)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(ns + "-" + name)},
		Spec: corev1.PodSpec{NodeName: node, SchedulerName: corev1.DefaultSchedulerName,
			Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10",
				Ports:     []corev1.ContainerPort{{ContainerPort: 80}},
				Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}}},
	}
}

// processCPU is this process's user+system CPU time in ns (a shared
// machine makes wall time per op noisy; CPU time includes GC).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkSchedulingCycle is the scheduling cycle of the bench's basic
// shape (5000 nodes, 1000 bound pods) with the default profile: snapshot
// update, PreFilter/Filter/PreScore/Score, assume, Reserve and Permit
// (no API calls: the binding cycle is not run). Every b.N pods are
// placed, so the cluster fills as in the bench.
func BenchmarkSchedulingCycle(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.DiscardHandler)
	s, err := New(ctx, Config{ClientConfig: &client.Config{Host: "https://127.0.0.1:1"}, Logger: logger, Identity: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	const nodes, bound = 5000, 1000
	for i := range nodes {
		s.cache.AddNode(logger, benchNode(i))
	}
	for i := range bound {
		if err := s.cache.AddPod(logger, benchPod("sched-0", i, fmt.Sprintf("node-%05d", i%nodes))); err != nil {
			b.Fatal(err)
		}
	}
	fwk := s.profiles[corev1.DefaultSchedulerName]
	pods := make([]*framework.QueuedPodInfo, b.N)
	for i := range pods {
		pods[i] = &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(benchPod("sched-1", i, ""))}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	defer func() { b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
	for i := range b.N {
		state := framework.NewCycleState()
		_, _, st := s.schedulingCycle(ctx, state, fwk, pods[i], s.clock.Now())
		if !st.IsSuccess() {
			b.Fatal(st)
		}
	}
}
