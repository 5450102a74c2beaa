package cache

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newPod returns a pod with the given namespace, name and labels (given as
// alternating key, value).
func newPod(ns, name string, kv ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if len(kv) > 0 {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
	return p
}

func TestMetaNamespaceKeyFunc(t *testing.T) {
	tests := []struct {
		name    string
		obj     any
		want    string
		wantErr bool
	}{
		{"namespaced", newPod("ns", "p"), "ns/p", false},
		{"cluster-scoped", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, "n1", false},
		{"explicit key", ExplicitKey("some/key"), "some/key", false},
		{"no meta", "a string", "", true},
		{"tombstone is not understood", DeletedFinalStateUnknown{Key: "ns/p"}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MetaNamespaceKeyFunc(tc.obj)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("MetaNamespaceKeyFunc = %q, %v; want %q, err=%v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestDeletionHandlingMetaNamespaceKeyFunc(t *testing.T) {
	tests := []struct {
		name string
		obj  any
		want string
	}{
		{"tombstone", DeletedFinalStateUnknown{Key: "ns/gone", Obj: nil}, "ns/gone"},
		{"plain object", newPod("ns", "p"), "ns/p"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DeletionHandlingMetaNamespaceKeyFunc(tc.obj)
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestSplitMetaNamespaceKey(t *testing.T) {
	tests := []struct {
		key, ns, name string
		wantErr       bool
	}{
		{"ns/name", "ns", "name", false},
		{"name", "", "name", false},
		{"/name", "", "name", false},
		{"", "", "", false},
		{"a/b/c", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			ns, name, err := SplitMetaNamespaceKey(tc.key)
			if (err != nil) != tc.wantErr || ns != tc.ns || name != tc.name {
				t.Fatalf("SplitMetaNamespaceKey(%q) = %q, %q, %v", tc.key, ns, name, err)
			}
		})
	}
}

func TestKeyErrorUnwrap(t *testing.T) {
	inner := errors.New("boom")
	err := error(KeyError{Obj: 1, Err: inner})
	if !errors.Is(err, inner) {
		t.Fatalf("errors.Is(KeyError, inner) = false")
	}
	s := NewStore(MetaNamespaceKeyFunc)
	var ke KeyError
	if err := s.Add("not an object"); !errors.As(err, &ke) {
		t.Fatalf("Add(non-object) error = %v, want KeyError", err)
	}
}
