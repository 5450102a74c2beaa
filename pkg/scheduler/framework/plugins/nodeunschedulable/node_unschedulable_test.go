package nodeunschedulable

import (
	"context"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func cordoned(unschedulable bool, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{Unschedulable: unschedulable, Taints: taints}}
}

// podTolerating is st.MakePod().UID(uid).Toleration(key...) upstream:
// Exists, NoSchedule.
func podTolerating(uid types.UID, keys ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}}
	for _, k := range keys {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: k, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return p
}

func TestNodeUnschedulable(t *testing.T) {
	pl, err := New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Name() != "NodeUnschedulable" {
		t.Fatalf("Name() = %q", pl.Name())
	}
	rejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want *framework.Status
	}{
		{"does not schedule pod to unschedulable node", &corev1.Pod{}, cordoned(true), rejected},
		{"schedule pod to normal node", &corev1.Pod{}, cordoned(false), nil},
		{"pod with toleration (key+effect, no operator: Equal with empty value) to unschedulable node",
			&corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}}}, cordoned(true), nil},
		{"pod with Exists toleration", podTolerating("", corev1.TaintNodeUnschedulable), cordoned(true), nil},
		{"pod tolerating everything (empty key, Exists)",
			&corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}, cordoned(true), nil},
		{"pod tolerating only NoExecute", &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}}}, cordoned(true), rejected},
		{"pod tolerating the key with a value", &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Value: "x"}}}}, cordoned(true), rejected},
		{"pod with an unrelated toleration", podTolerating("", "other"), cordoned(true), rejected},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ni := framework.NewNodeInfo()
			ni.SetNode(tt.node)
			got := pl.(framework.FilterPlugin).Filter(context.Background(), nil, tt.pod, ni)
			if !got.Equal(tt.want) {
				t.Errorf("Filter() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	evs, err := (&NodeUnschedulable{}).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint},
		{Resource: framework.Pod, ActionType: framework.UpdatePodToleration},
	}
	if len(evs) != len(want) {
		t.Fatalf("EventsToRegister() = %+v", evs)
	}
	for i := range want {
		if evs[i].Event != want[i] || evs[i].QueueingHintFn == nil {
			t.Errorf("event %d = %+v, want %+v with a hint", i, evs[i], want[i])
		}
	}
}

func TestIsSchedulableAfterNodeChange(t *testing.T) {
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
	for _, tt := range []struct {
		name           string
		oldObj, newObj any
		want           framework.QueueingHint
		wantErr        bool
	}{
		{name: "error-wrong-new-object", newObj: "not-a-node", want: framework.Queue, wantErr: true},
		{name: "error-wrong-old-object", newObj: cordoned(true), oldObj: "not-a-node", want: framework.Queue, wantErr: true},
		{name: "skip-queue-on-unschedulable-node-added", newObj: cordoned(true), want: framework.QueueSkip},
		{name: "queue-on-schedulable-node-added", newObj: cordoned(false), want: framework.Queue},
		{name: "skip-unrelated-change-unschedulable-true", oldObj: cordoned(true), newObj: cordoned(true, notReady), want: framework.QueueSkip},
		{name: "skip-unrelated-change-unschedulable-false", oldObj: cordoned(false), newObj: cordoned(false, notReady), want: framework.QueueSkip},
		{name: "queue-on-unschedulable-field-change", oldObj: cordoned(true), newObj: cordoned(false), want: framework.Queue},
		{name: "skip-on-node-cordoned", oldObj: cordoned(false), newObj: cordoned(true), want: framework.QueueSkip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&NodeUnschedulable{}).isSchedulableAfterNodeChange(slog.New(slog.DiscardHandler), &corev1.Pod{}, tt.oldObj, tt.newObj)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsSchedulableAfterPodTolerationChange(t *testing.T) {
	for _, tt := range []struct {
		name           string
		pod            *corev1.Pod
		oldObj, newObj any
		want           framework.QueueingHint
		wantErr        bool
	}{
		{name: "error-wrong-new-object", pod: &corev1.Pod{}, newObj: "not-a-pod", want: framework.Queue, wantErr: true},
		{name: "error-wrong-old-object", pod: &corev1.Pod{}, newObj: &corev1.Pod{}, oldObj: "not-a-pod", want: framework.Queue, wantErr: true},
		{name: "skip-different-pod-update", pod: podTolerating("uid"),
			oldObj: podTolerating("different-uid"), newObj: podTolerating("different-uid", corev1.TaintNodeUnschedulable), want: framework.QueueSkip},
		{name: "queue-when-the-unsched-pod-gets-toleration", pod: podTolerating("uid"),
			oldObj: podTolerating("uid"), newObj: podTolerating("uid", corev1.TaintNodeUnschedulable), want: framework.Queue},
		{name: "skip-when-the-unsched-pod-gets-unrelated-toleration", pod: podTolerating("uid"),
			oldObj: podTolerating("uid"), newObj: podTolerating("uid", "unrelated-key"), want: framework.QueueSkip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&NodeUnschedulable{}).isSchedulableAfterPodTolerationChange(slog.New(slog.DiscardHandler), tt.pod, tt.oldObj, tt.newObj)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
