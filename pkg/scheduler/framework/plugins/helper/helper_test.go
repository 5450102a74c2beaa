package helper

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client/cache"
)

func TestAs(t *testing.T) {
	p1, p2 := &corev1.Pod{}, &corev1.Pod{}
	for _, tt := range []struct {
		name             string
		oldObj, newObj   any
		wantOld, wantNew *corev1.Pod
		wantErr          bool
	}{
		{name: "add", newObj: p2, wantNew: p2},
		{name: "update", oldObj: p1, newObj: p2, wantOld: p1, wantNew: p2},
		{name: "delete", oldObj: p1, wantOld: p1},
		{name: "tombstone", oldObj: cache.DeletedFinalStateUnknown{Key: "a/b", Obj: p1}, wantOld: p1},
		{name: "wrong new type", newObj: "not-a-pod", wantErr: true},
		{name: "wrong old type", oldObj: &corev1.Node{}, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, n, err := As[*corev1.Pod](tt.oldObj, tt.newObj)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (o != tt.wantOld || n != tt.wantNew) {
				t.Errorf("got (%p, %p), want (%p, %p)", o, n, tt.wantOld, tt.wantNew)
			}
		})
	}
}

func TestBrokenLinearFunction(t *testing.T) {
	f := BuildBrokenLinearFunction(FunctionShape{{10, 1}, {15, 2}, {20, 3}})
	for _, c := range []struct{ p, want int64 }{
		{-10, 1}, {0, 1}, {10, 1}, {11, 1}, {12, 1}, {13, 1}, {14, 1}, {15, 2}, {16, 2}, {17, 2}, {18, 2}, {19, 2}, {20, 3}, {21, 3}, {100, 3},
	} {
		if got := f(c.p); got != c.want {
			t.Errorf("f(%d) = %d, want %d", c.p, got, c.want)
		}
	}
	g := BuildBrokenLinearFunction(FunctionShape{{0, 0}, {100, 100}})
	for _, c := range []struct{ p, want int64 }{{0, 0}, {37, 37}, {100, 100}, {150, 100}} {
		if got := g(c.p); got != c.want {
			t.Errorf("g(%d) = %d, want %d", c.p, got, c.want)
		}
	}
	h := BuildBrokenLinearFunction(FunctionShape{{0, 100}, {100, 0}})
	for _, c := range []struct{ p, want int64 }{{0, 100}, {25, 75}, {99, 1}, {100, 0}} {
		if got := h(c.p); got != c.want {
			t.Errorf("h(%d) = %d, want %d", c.p, got, c.want)
		}
	}
}

func TestDeleteLeastRecentlyUsed(t *testing.T) {
	m := map[string]uint64{"a": 3, "b": 1, "c": 2}
	DeleteLeastRecentlyUsed(m, func(u uint64) uint64 { return u })
	if _, ok := m["b"]; ok || len(m) != 2 {
		t.Errorf("after one eviction: %v, want b gone", m)
	}
	empty := map[string]uint64{}
	DeleteLeastRecentlyUsed(empty, func(u uint64) uint64 { return u })
}
