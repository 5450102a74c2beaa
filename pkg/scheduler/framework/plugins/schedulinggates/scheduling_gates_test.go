package schedulinggates

import (
	"context"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func gatedPod(name string, uid types.UID, gates ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}
	for _, g := range gates {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: g})
	}
	return p
}

func newPlugin(t *testing.T) *SchedulingGates {
	t.Helper()
	pl, err := New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Name() != "SchedulingGates" {
		t.Fatalf("Name() = %q", pl.Name())
	}
	return pl.(*SchedulingGates)
}

func TestPreEnqueue(t *testing.T) {
	pl := newPlugin(t)
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want *framework.Status
	}{
		{"pod does not carry scheduling gates", gatedPod("p", ""), nil},
		{"pod carries scheduling gates", gatedPod("p", "", "foo", "bar"),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for scheduling gates: [foo bar]")},
		{"one gate", gatedPod("p", "", "example.com/wait"),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for scheduling gates: [example.com/wait]")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := pl.PreEnqueue(context.Background(), tt.pod)
			if !got.Equal(tt.want) {
				t.Errorf("PreEnqueue() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	evs, err := newPlugin(t).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Event != (framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodSchedulingGatesEliminated}) || evs[0].QueueingHintFn == nil {
		t.Fatalf("EventsToRegister() = %+v", evs)
	}
}

func TestIsSchedulableAfterGatesEliminated(t *testing.T) {
	pl := newPlugin(t)
	logger := slog.New(slog.DiscardHandler)
	for _, tt := range []struct {
		name           string
		pod            *corev1.Pod
		oldObj, newObj any
		want           framework.QueueingHint
		wantErr        bool
	}{
		{name: "backoff-wrong-old-object", pod: &corev1.Pod{}, oldObj: "not-a-pod", want: framework.Queue, wantErr: true},
		{name: "backoff-wrong-new-object", pod: &corev1.Pod{}, newObj: "not-a-pod", want: framework.Queue, wantErr: true},
		{name: "skip-queue-on-other-pod-updated", pod: gatedPod("p", "uid0", "foo", "bar"),
			oldObj: gatedPod("p1", "uid1", "foo", "bar"), newObj: gatedPod("p1", "uid1", "foo"), want: framework.QueueSkip},
		{name: "queue-on-the-unsched-pod-updated", pod: gatedPod("p", "uid0", "foo"),
			oldObj: gatedPod("p", "uid0", "foo"), newObj: gatedPod("p", "uid0"), want: framework.Queue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterGatesEliminated(logger, tt.pod, tt.oldObj, tt.newObj)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
