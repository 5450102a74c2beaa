package tainttoleration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func podWithTolerations(name string, tols []corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-pod"}, Spec: corev1.PodSpec{Tolerations: tols}}
}

func nodeWithTaints(name string, taints []corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}}
}

func nodeInfo(n *corev1.Node) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(n)
	return ni
}

func pref(key, value string) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffectPreferNoSchedule}
}

// Cases from upstream's TestTaintTolerationScore.
func TestScore(t *testing.T) {
	tolPref := func(key, value string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpEqual, Value: value, Effect: corev1.TaintEffectPreferNoSchedule}
	}
	cases := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*corev1.Node
		want  []int64
	}{
		{name: "tolerated taints score higher than intolerable ones",
			pod:   podWithTolerations("pod1", []corev1.Toleration{tolPref("foo", "bar")}),
			nodes: []*corev1.Node{nodeWithTaints("nodeA", []corev1.Taint{pref("foo", "bar")}), nodeWithTaints("nodeB", []corev1.Taint{pref("foo", "blah")})},
			want:  []int64{100, 0}},
		{name: "the number of tolerated taints does not matter",
			pod: podWithTolerations("pod1", []corev1.Toleration{tolPref("cpu-type", "arm64"), tolPref("disk-type", "ssd")}),
			nodes: []*corev1.Node{nodeWithTaints("nodeA", nil), nodeWithTaints("nodeB", []corev1.Taint{pref("cpu-type", "arm64")}),
				nodeWithTaints("nodeC", []corev1.Taint{pref("cpu-type", "arm64"), pref("disk-type", "ssd")})},
			want: []int64{100, 100, 100}},
		{name: "the more intolerable taints, the lower the score",
			pod: podWithTolerations("pod1", []corev1.Toleration{tolPref("foo", "bar")}),
			nodes: []*corev1.Node{nodeWithTaints("nodeA", nil), nodeWithTaints("nodeB", []corev1.Taint{pref("cpu-type", "arm64")}),
				nodeWithTaints("nodeC", []corev1.Taint{pref("cpu-type", "arm64"), pref("disk-type", "ssd")})},
			want: []int64{100, 50, 0}},
		{name: "only PreferNoSchedule taints and tolerations count",
			pod: podWithTolerations("pod1", []corev1.Toleration{
				{Key: "cpu-type", Operator: corev1.TolerationOpEqual, Value: "arm64", Effect: corev1.TaintEffectNoSchedule},
				{Key: "disk-type", Operator: corev1.TolerationOpEqual, Value: "ssd", Effect: corev1.TaintEffectNoSchedule}}),
			nodes: []*corev1.Node{nodeWithTaints("nodeA", nil),
				nodeWithTaints("nodeB", []corev1.Taint{{Key: "cpu-type", Value: "arm64", Effect: corev1.TaintEffectNoSchedule}}),
				nodeWithTaints("nodeC", []corev1.Taint{pref("cpu-type", "arm64"), pref("disk-type", "ssd")})},
			want: []int64{100, 100, 0}},
		{name: "a toleration without effect tolerates PreferNoSchedule",
			pod:   podWithTolerations("pod1", []corev1.Toleration{{Key: "cpu-type", Operator: corev1.TolerationOpExists}}),
			nodes: []*corev1.Node{nodeWithTaints("nodeA", []corev1.Taint{pref("cpu-type", "arm64")}), nodeWithTaints("nodeB", []corev1.Taint{pref("disk-type", "ssd")})},
			want:  []int64{100, 0}},
		{name: "no taints and tolerations: lands on the node without taints",
			pod:   podWithTolerations("pod1", nil),
			nodes: []*corev1.Node{nodeWithTaints("nodeA", nil), nodeWithTaints("nodeB", []corev1.Taint{pref("cpu-type", "arm64")})},
			want:  []int64{100, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &TaintToleration{}
			state := framework.NewCycleState()
			if st := p.PreScore(context.Background(), state, tc.pod, nil); !st.IsSuccess() {
				t.Fatal(st)
			}
			var scores framework.NodeScoreList
			for _, n := range tc.nodes {
				s, st := p.Score(context.Background(), state, tc.pod, nodeInfo(n))
				if !st.IsSuccess() {
					t.Fatal(st)
				}
				scores = append(scores, framework.NodeScore{Name: n.Name, Score: s})
			}
			p.NormalizeScore(context.Background(), state, tc.pod, scores)
			for i, s := range scores {
				if s.Score != tc.want[i] {
					t.Errorf("%s: score %d, want %d", s.Name, s.Score, tc.want[i])
				}
			}
		})
	}
	if _, st := (&TaintToleration{}).Score(context.Background(), framework.NewCycleState(), &corev1.Pod{}, nodeInfo(nodeWithTaints("n", nil))); st.Code() != framework.Error {
		t.Errorf("Score without PreScore = %v, want an Error", st)
	}
}

// Cases from upstream's TestTaintTolerationFilter (reason as 1.34.2+).
func TestFilter(t *testing.T) {
	untolerated := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")
	dedicated := func(v string, e corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: "dedicated", Value: v, Effect: e}
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want *framework.Status
	}{
		{"no tolerations, NoSchedule taint", podWithTolerations("pod1", nil), nodeWithTaints("nodeA", []corev1.Taint{dedicated("user1", corev1.TaintEffectNoSchedule)}), untolerated},
		{"no tolerations, NoExecute taint", podWithTolerations("pod1", nil), nodeWithTaints("nodeA", []corev1.Taint{dedicated("user1", corev1.TaintEffectNoExecute)}), untolerated},
		{"tolerates a dedicated node", podWithTolerations("pod1", []corev1.Toleration{{Key: "dedicated", Value: "user1", Effect: corev1.TaintEffectNoSchedule}}),
			nodeWithTaints("nodeA", []corev1.Taint{dedicated("user1", corev1.TaintEffectNoSchedule)}), nil},
		{"another user's dedicated node", podWithTolerations("pod1", []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "user2", Effect: corev1.TaintEffectNoSchedule}}),
			nodeWithTaints("nodeA", []corev1.Taint{dedicated("user1", corev1.TaintEffectNoSchedule)}), untolerated},
		{"Exists tolerates any value", podWithTolerations("pod1", []corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}),
			nodeWithTaints("nodeA", []corev1.Taint{{Key: "foo", Value: "bar", Effect: corev1.TaintEffectNoSchedule}}), nil},
		{"all taints tolerated", podWithTolerations("pod1", []corev1.Toleration{
			{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "user2", Effect: corev1.TaintEffectNoSchedule},
			{Key: "foo", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}),
			nodeWithTaints("nodeA", []corev1.Taint{dedicated("user2", corev1.TaintEffectNoSchedule), {Key: "foo", Value: "bar", Effect: corev1.TaintEffectNoSchedule}}), nil},
		{"effect differs", podWithTolerations("pod1", []corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectPreferNoSchedule}}),
			nodeWithTaints("nodeA", []corev1.Taint{{Key: "foo", Value: "bar", Effect: corev1.TaintEffectNoSchedule}}), untolerated},
		{"empty toleration effect matches NoSchedule", podWithTolerations("pod1", []corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar"}}),
			nodeWithTaints("nodeA", []corev1.Taint{{Key: "foo", Value: "bar", Effect: corev1.TaintEffectNoSchedule}}), nil},
		{"PreferNoSchedule taint does not filter", podWithTolerations("pod1", []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "user2", Effect: corev1.TaintEffectNoSchedule}}),
			nodeWithTaints("nodeA", []corev1.Taint{dedicated("user1", corev1.TaintEffectPreferNoSchedule)}), nil},
		{"no tolerations, PreferNoSchedule taint", podWithTolerations("pod1", nil), nodeWithTaints("nodeA", []corev1.Taint{dedicated("user1", corev1.TaintEffectPreferNoSchedule)}), nil},
	}
	for _, tc := range cases {
		if got := (&TaintToleration{}).Filter(context.Background(), nil, tc.pod, nodeInfo(tc.node)); !got.Equal(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Cases from upstream's TestIsSchedulableAfterNodeChange.
func TestIsSchedulableAfterNodeChange(t *testing.T) {
	pod := podWithTolerations("pod1", []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "user2", Effect: corev1.TaintEffectNoSchedule}})
	user := func(v ...string) *corev1.Node {
		var ts []corev1.Taint
		for _, x := range v {
			ts = append(ts, corev1.Taint{Key: "dedicated", Value: x, Effect: corev1.TaintEffectNoSchedule})
		}
		return nodeWithTaints("nodeA", ts)
	}
	cases := []struct {
		name           string
		oldObj, newObj any
		want           framework.QueueingHint
		wantErr        bool
	}{
		{name: "wrong new object", newObj: "not-a-node", want: framework.Queue, wantErr: true},
		{name: "wrong old object", oldObj: "not-a-node", newObj: user("user1"), want: framework.Queue, wantErr: true},
		{name: "skip untolerated node added", newObj: user("user1"), want: framework.QueueSkip},
		{name: "queue tolerated node added", newObj: user("user2"), want: framework.Queue},
		{name: "skip unrelated change", oldObj: user("user1"), newObj: user("user1", "user3"), want: framework.QueueSkip},
		{name: "queue taint change making it tolerable", oldObj: user("user1"), newObj: user("user2"), want: framework.Queue},
		{name: "skip change on an already tolerable node", oldObj: user("user2"), newObj: user(), want: framework.QueueSkip},
	}
	for _, tc := range cases {
		got, err := (&TaintToleration{}).isSchedulableAfterNodeChange(nil, pod, tc.oldObj, tc.newObj)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestIsSchedulableAfterPodTolerationChange(t *testing.T) {
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-1", Namespace: "ns-1", UID: "uid0"}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-2", Namespace: "ns-1", UID: "uid1"}}
	withTol := func(p *corev1.Pod) *corev1.Pod {
		p = p.DeepCopy()
		p.Spec.Tolerations = []corev1.Toleration{{Key: "foo", Effect: corev1.TaintEffectNoSchedule}}
		return p
	}
	cases := []struct {
		name           string
		oldObj, newObj any
		want           framework.QueueingHint
		wantErr        bool
	}{
		{name: "wrong new object", newObj: "not-a-pod", want: framework.Queue, wantErr: true},
		{name: "wrong old object", oldObj: "not-a-pod", newObj: &corev1.Pod{}, want: framework.Queue, wantErr: true},
		{name: "skip another pod", oldObj: other, newObj: withTol(other), want: framework.QueueSkip},
		{name: "queue the pod's own toleration added", oldObj: target, newObj: withTol(target), want: framework.Queue},
	}
	for _, tc := range cases {
		got, err := (&TaintToleration{}).isSchedulableAfterPodTolerationChange(nil, target, tc.oldObj, tc.newObj)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

func BenchmarkFilterAndScore(b *testing.B) {
	pod := podWithTolerations("p", []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}, {Key: "b", Value: "1"}})
	ni := nodeInfo(nodeWithTaints("n", []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, pref("c", "x"), {Key: "b", Value: "1", Effect: corev1.TaintEffectNoExecute}}))
	p := &TaintToleration{}
	state := framework.NewCycleState()
	p.PreScore(context.Background(), state, pod, nil)
	b.ReportAllocs()
	for b.Loop() {
		if st := p.Filter(context.Background(), state, pod, ni); !st.IsSuccess() {
			b.Fatal(st)
		}
		if _, st := p.Score(context.Background(), state, pod, ni); !st.IsSuccess() {
			b.Fatal(st)
		}
	}
}
