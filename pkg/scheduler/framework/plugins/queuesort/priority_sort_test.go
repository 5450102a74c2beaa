package queuesort

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func qpi(prio *int32, ts time.Time) *framework.QueuedPodInfo {
	return &framework.QueuedPodInfo{
		PodInfo:   framework.NewPodInfo(&corev1.Pod{Spec: corev1.PodSpec{Priority: prio}}),
		Timestamp: ts,
	}
}

func TestLess(t *testing.T) {
	pl, err := New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := pl.(framework.QueueSortPlugin)
	if ps.Name() != "PrioritySort" {
		t.Fatalf("Name() = %q", ps.Name())
	}
	low, high := ptr.To[int32](10), ptr.To[int32](100)
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Second)
	for _, tt := range []struct {
		name   string
		p1, p2 *framework.QueuedPodInfo
		want   bool
	}{
		{"p1.priority less than p2.priority", qpi(low, t1), qpi(high, t2), false},
		{"p1.priority greater than p2.priority", qpi(high, t2), qpi(low, t1), true},
		{"equal priority, p1 queued earlier", qpi(high, t1), qpi(high, t2), true},
		{"equal priority, p2 queued earlier", qpi(high, t2), qpi(high, t1), false},
		{"equal priority and timestamp", qpi(high, t1), qpi(high, t1), false},
		{"nil priority is 0, below a positive one", qpi(nil, t1), qpi(ptr.To[int32](1), t2), false},
		{"nil priority is 0, above a negative one", qpi(nil, t2), qpi(ptr.To[int32](-1), t1), true},
		{"nil priority equals 0", qpi(nil, t1), qpi(ptr.To[int32](0), t2), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ps.Less(tt.p1, tt.p2); got != tt.want {
				t.Errorf("Less() = %v, want %v", got, tt.want)
			}
		})
	}
}
