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

// InterPodAffinity through the whole scheduler: required affinity to a
// zone, required anti-affinity per hostname, the unschedulable message,
// and the pod requeued by its queueing hint when a matching pod appears.
func TestInterPodAffinityScheduling(t *testing.T) {
	cc := limitedConfig("default-scheduler")
	ms := &cc.Profiles[0].Plugins.MultiPoint
	ms.Enabled = append(ms.Enabled, config.Plugin{Name: "InterPodAffinity"})
	_, c := startScheduler(t, cc)
	ctx := context.Background()
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	zoneOf := map[string]string{}
	for _, z := range []string{"a", "b"} {
		for i := 1; i <= 2; i++ {
			name := fmt.Sprintf("n-%s%d", z, i)
			zoneOf[name] = z
			if _, err := nodes.Create(ctx, node(name, map[string]string{"zone": z, "kubernetes.io/hostname": name}), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	term := func(key, value, topologyKey string) corev1.PodAffinityTerm {
		return corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}, TopologyKey: topologyKey}
	}
	create := func(p *corev1.Pod) {
		t.Helper()
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodeOf := func(name string) string {
		t.Helper()
		var got string
		waitFor(t, name+" bound", func() (bool, error) {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			got = p.Spec.NodeName
			return got != "", nil
		})
		return got
	}

	// db runs on n-b1; web must follow it into zone b.
	create(pod("db", func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": "db"}
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "n-b1"}
	}))
	if n := nodeOf("db"); n != "n-b1" {
		t.Fatalf("db on %s", n)
	}
	create(pod("web", func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("app", "db", "zone")}}}
	}))
	if n := nodeOf("web"); zoneOf[n] != "b" {
		t.Errorf("web on %s (zone %s), want zone b", n, zoneOf[n])
	}

	// Four replicas that refuse to share a host take the four nodes.
	seen := map[string]string{}
	for i := range 4 {
		name := fmt.Sprintf("spread-%d", i)
		create(pod(name, func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": "spread"}
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("app", "spread", "kubernetes.io/hostname")}}}
		}))
		n := nodeOf(name)
		if other, dup := seen[n]; dup {
			t.Errorf("%s and %s share %s", name, other, n)
		}
		seen[n] = name
	}

	// A fifth replica fits nowhere: its own anti-affinity rejects every
	// node (checked before the existing replicas' one), with upstream's
	// message.
	create(pod("spread-4", func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": "spread"}
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("app", "spread", "kubernetes.io/hostname")}}}
	}))
	const wantAnti = "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules."
	waitFor(t, "spread-4 unschedulable", func() (bool, error) {
		return hasUnschedulable(ctx, pods, "spread-4", wantAnti)
	})

	// A pod whose affinity matches no pod (and not itself) waits, then
	// schedules next to the matching pod once one appears (the Pod/Add
	// hint requeues it).
	create(pod("follower", func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("app", "leader", "zone")}}}
	}))
	const wantAff = "0/4 nodes are available: 4 node(s) didn't match pod affinity rules."
	waitFor(t, "follower unschedulable", func() (bool, error) {
		return hasUnschedulable(ctx, pods, "follower", wantAff)
	})
	create(pod("leader", func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": "leader"}
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "n-a2"}
	}))
	if n := nodeOf("follower"); zoneOf[n] != "a" {
		t.Errorf("follower on %s (zone %s), want zone a", n, zoneOf[n])
	}
}

func hasUnschedulable(ctx context.Context, pods *client.Typed[*corev1.Pod, *corev1.PodList], name, prefix string) (bool, error) {
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.HasPrefix(c.Message, prefix) {
			return true, nil
		}
	}
	return false, fmt.Errorf("conditions %+v", p.Status.Conditions)
}
