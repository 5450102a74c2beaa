package interpodaffinity

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	schedcache "github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

func TestNew(t *testing.T) {
	h := &fakeHandle{lister: schedcache.NewEmptySnapshot()}
	w := func(v int32) *int32 { return &v }
	tests := []struct {
		name       string
		args       *config.InterPodAffinityArgs
		nilArgs    bool
		wantWeight int32
		wantErr    string
	}{
		{name: "nil args: defaults", nilArgs: true, wantWeight: 1},
		{name: "weight not set: default", args: &config.InterPodAffinityArgs{}, wantWeight: 1},
		{name: "weight 0", args: &config.InterPodAffinityArgs{HardPodAffinityWeight: w(0)}, wantWeight: 0},
		{name: "weight 100", args: &config.InterPodAffinityArgs{HardPodAffinityWeight: w(100)}, wantWeight: 100},
		{name: "weight out of range", args: &config.InterPodAffinityArgs{HardPodAffinityWeight: w(101)}, wantErr: "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p framework.Plugin
			var err error
			if tc.nilArgs {
				p, err = New(context.Background(), nil, h)
			} else {
				p, err = New(context.Background(), tc.args, h)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.(*InterPodAffinity).hardPodAffinityWeight; got != tc.wantWeight {
				t.Errorf("weight %d, want %d", got, tc.wantWeight)
			}
			if p.Name() != "InterPodAffinity" {
				t.Errorf("name %q", p.Name())
			}
		})
	}
	if _, err := New(context.Background(), &config.NodeResourcesFitArgs{}, h); err == nil || !strings.Contains(err.Error(), "want args to be of type InterPodAffinityArgs") {
		t.Errorf("wrong args type: %v", err)
	}
	if _, err := New(context.Background(), nil, &fakeHandle{}); err == nil {
		t.Error("no snapshot: want an error")
	}
}

func TestEventsToRegister(t *testing.T) {
	pl, _ := newPlugin(t, nil, nil, nil, nil)
	evs, err := pl.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []framework.ClusterEvent{
		{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel},
	}
	if len(evs) != len(want) {
		t.Fatalf("events %v", evs)
	}
	for i := range want {
		if evs[i].Event != want[i] || evs[i].QueueingHintFn == nil {
			t.Errorf("event %d: %+v, want %+v with a hint", i, evs[i].Event, want[i])
		}
	}
}

// Upstream 1.34's Test_isSchedulableAfterPodChange cases.
func TestIsSchedulableAfterPodChange(t *testing.T) {
	tests := []struct {
		name           string
		pod            *corev1.Pod
		oldPod, newPod *corev1.Pod
		want           framework.QueueingHint
	}{
		{
			name:   "add a pod which matches the pod affinity",
			pod:    mkPod().Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Node("fake-node").Label("service", "securityscan").Obj(),
			want:   framework.Queue,
		},
		{
			name:   "add an un-scheduled pod",
			pod:    mkPod().Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Label("service", "securityscan").Obj(),
			want:   framework.QueueSkip,
		},
		{
			name:   "add a pod which doesn't match the pod affinity",
			pod:    mkPod().Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Node("fake-node").Label("aaa", "a").Obj(),
			want:   framework.QueueSkip,
		},
		{
			name:   "update a pod from non-match to match pod affinity",
			pod:    mkPod().Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Node("fake-node").Label("service", "securityscan").Obj(),
			oldPod: mkPod().Node("fake-node").Label("aaa", "a").Obj(),
			want:   framework.Queue,
		},
		{
			name:   "the updating pod matches target pod's affinity both before and after label changes",
			pod:    mkPod().Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Node("fake-node").Label("service", "securityscan").Obj(),
			oldPod: mkPod().Node("fake-node").Label("service", "value2").Obj(),
			want:   framework.QueueSkip,
		},
		{
			name:   "update an un-scheduled pod",
			pod:    mkPod().Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Label("service", "securityscan").Obj(),
			oldPod: mkPod().Label("service", "securityscan").Obj(),
			want:   framework.QueueSkip,
		},
		{
			name:   "update a pod from match to non-match the pod affinity",
			pod:    mkPod().Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Node("fake-node").Label("aaa", "a").Obj(),
			oldPod: mkPod().Node("fake-node").Label("service", "securityscan").Obj(),
			want:   framework.QueueSkip,
		},
		{
			name: "update a pod from match to non-match pod's affinity - multiple terms case",
			pod: mkPod().Name("p").PodAffinityExists("aaa", "hostname", required).
				PodAffinityExists("bbb", "hostname", required).Obj(),
			newPod: mkPod().Node("fake-node").Label("service", "securityscan").Obj(),
			oldPod: mkPod().Node("fake-node").Label("aaa", "a").Obj(),
			want:   framework.QueueSkip,
		},
		{
			name: "update a pod from non-match to match pod's affinity - multiple terms case",
			pod: mkPod().Name("p").PodAffinityExists("aaa", "hostname", required).
				PodAffinityExists("bbb", "hostname", required).Obj(),
			newPod: mkPod().Node("fake-node").Label("aaa", "").Label("bbb", "").Obj(),
			oldPod: mkPod().Node("fake-node").Label("aaa", "a").Obj(),
			want:   framework.Queue,
		},
		{
			name:   "modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
			pod:    mkPod().Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Node("fake-node").Label("service", "aaaa").Obj(),
			oldPod: mkPod().Node("fake-node").Label("service", "securityscan").Obj(),
			want:   framework.Queue,
		},
		{
			name:   "modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
			pod:    mkPod().Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			newPod: mkPod().Node("fake-node").Label("service", "securityscan").Obj(),
			oldPod: mkPod().Node("fake-node").Label("service", "bbb").Obj(),
			want:   framework.QueueSkip,
		},
		{
			name:   "delete a pod which doesn't match pod's anti-affinity",
			pod:    mkPod().Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			oldPod: mkPod().Node("fake-node").Label("aaa", "a").Obj(),
			want:   framework.QueueSkip,
		},
		{
			name:   "delete a pod which matches pod's anti-affinity",
			pod:    mkPod().Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj(),
			oldPod: mkPod().Node("fake-node").Label("service", "securityscan").Obj(),
			want:   framework.Queue,
		},
	}
	pl, _ := newPlugin(t, nil, nil, nil, namespaces)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var oldObj, newObj any
			if tc.oldPod != nil {
				oldObj = tc.oldPod
			}
			if tc.newPod != nil {
				newObj = tc.newPod
			}
			got, err := pl.isSchedulableAfterPodChange(slog.Default(), tc.pod, oldObj, newObj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("hint %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := pl.isSchedulableAfterPodChange(slog.Default(), tests[0].pod, nil, &corev1.Node{}); err == nil {
		t.Error("wrong object type: want an error")
	}
}

// Upstream 1.34's Test_isSchedulableAfterNodeChange cases.
func TestIsSchedulableAfterNodeChange(t *testing.T) {
	affZone := mkPod().Name("p").PodAffinityIn("service", "zone", []string{"securityscan", "value2"}, required).Obj()
	affRegion := mkPod().Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"}, required).Obj()
	antiZone := mkPod().Name("p").PodAntiAffinity("zone", &metav1.LabelSelector{MatchLabels: map[string]string{"another": "label"}}, required).Obj()
	tests := []struct {
		name             string
		pod              *corev1.Pod
		oldNode, newNode *corev1.Node
		want             framework.QueueingHint
	}{
		{"add a new node with matched pod affinity topologyKey", affZone, nil, mkNode("node-a", map[string]string{"zone": "zone1"}), framework.Queue},
		{"add a new node without matched topologyKey", affRegion, nil, mkNode("node-a", map[string]string{"zone": "zone1"}), framework.QueueSkip},
		{"update node label but not topologyKey", affZone, mkNode("node-a", map[string]string{"aaa": "a"}), mkNode("node-a", map[string]string{"aaa": "b"}), framework.QueueSkip},
		{"update node label that isn't related to the pod affinity", affZone, mkNode("node-a", map[string]string{"zone": "zone1"}), mkNode("node-a", map[string]string{"zone": "zone1", "unrelated-label": "unrelated"}), framework.QueueSkip},
		{"update node with different affinity topologyKey value", affZone, mkNode("node-a", map[string]string{"zone": "zone1"}), mkNode("node-a", map[string]string{"zone": "zone2"}), framework.Queue},
		{"update node to have the affinity topology label", affZone, mkNode("node-a", map[string]string{"aaa": "a"}), mkNode("node-a", map[string]string{"zone": "zone1"}), framework.Queue},
		{"add a new node with matched pod anti-affinity topologyKey", antiZone, nil, mkNode("node-a", map[string]string{"zone": "zone1"}), framework.Queue},
		{"add a new node without matched pod anti-affinity topologyKey", antiZone, nil, mkNode("node-a", nil), framework.Queue},
		{"update node label that isn't related to the pod anti-affinity", antiZone, mkNode("node-a", map[string]string{"zone": "zone1"}), mkNode("node-a", map[string]string{"zone": "zone1", "unrelated-label": "unrelated"}), framework.QueueSkip},
		{"update node with different anti-affinity topologyKey value", antiZone, mkNode("node-a", map[string]string{"zone": "zone1"}), mkNode("node-a", map[string]string{"zone": "zone2"}), framework.Queue},
		{"update node to have the anti-affinity topology label", antiZone, mkNode("node-a", map[string]string{"aaa": "a"}), mkNode("node-a", map[string]string{"zone": "zone1"}), framework.QueueSkip},
		{"update node label not to have anti-affinity topology label", antiZone, mkNode("node-a", map[string]string{"zone": "zone1"}), mkNode("node-a", map[string]string{"aaa": "a"}), framework.Queue},
		{"a pod without affinity: a new node does not help", mkPod().Name("p").Obj(), nil, mkNode("node-a", map[string]string{"zone": "zone1"}), framework.QueueSkip},
	}
	pl, _ := newPlugin(t, nil, nil, nil, namespaces)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var oldObj any
			if tc.oldNode != nil {
				oldObj = tc.oldNode
			}
			got, err := pl.isSchedulableAfterNodeChange(slog.Default(), tc.pod, oldObj, tc.newNode)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("hint %v, want %v", got, tc.want)
			}
		})
	}
}
