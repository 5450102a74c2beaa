package nodename

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func TestNodeName(t *testing.T) {
	pl, err := New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Name() != "NodeName" {
		t.Fatalf("Name() = %q", pl.Name())
	}
	node := func(name string) *corev1.Node { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	pod := func(nodeName string) *corev1.Pod { return &corev1.Pod{Spec: corev1.PodSpec{NodeName: nodeName}} }
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want *framework.Status
	}{
		{"no host specified", pod(""), node(""), nil},
		{"host matches", pod("foo"), node("foo"), nil},
		{"host doesn't match", pod("bar"), node("foo"), framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ni := framework.NewNodeInfo()
			ni.SetNode(tt.node)
			got := pl.(framework.FilterPlugin).Filter(context.Background(), framework.NewCycleState(), tt.pod, ni)
			if !got.Equal(tt.want) {
				t.Errorf("Filter() = %v, want %v", got, tt.want)
			}
		})
	}
	evs, err := pl.(framework.EnqueueExtensions).EventsToRegister(context.Background())
	if err != nil || len(evs) != 1 || evs[0].Event != (framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}) {
		t.Errorf("EventsToRegister() = %+v, %v", evs, err)
	}
}
