package cache

import (
	"slices"
	"testing"
)

func TestStore(t *testing.T) {
	stores := map[string]func() Store{
		"NewStore":   func() Store { return NewStore(MetaNamespaceKeyFunc) },
		"NewIndexer": func() Store { return NewIndexer(MetaNamespaceKeyFunc, testIndexers()) },
		"UndeltaStore": func() Store {
			return NewUndeltaStore(func([]any) {}, MetaNamespaceKeyFunc)
		},
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			s := mk()
			p1, p2, p3 := newPod("a", "p1"), newPod("a", "p2"), newPod("b", "p3")
			for _, p := range []any{p1, p2, p3} {
				if err := s.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			p1b := newPod("a", "p1", "v", "2")
			if err := s.Update(p1b); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(newPod("a", "p2")); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(s.ListKeys())); !slices.Equal(got, []string{"a/p1", "b/p3"}) {
				t.Fatalf("ListKeys = %v", got)
			}
			if got := keysOf(t, s.List()); !slices.Equal(got, []string{"a/p1", "b/p3"}) {
				t.Fatalf("List = %v", got)
			}
			if got, ok, err := s.Get(newPod("a", "p1")); err != nil || !ok || got != p1b {
				t.Fatalf("Get = %v %v %v", got, ok, err)
			}
			if _, ok, err := s.GetByKey("a/p2"); err != nil || ok {
				t.Fatalf("GetByKey(deleted) = %v %v", ok, err)
			}
			if _, _, err := s.Get(42); err == nil {
				t.Fatal("Get(non-object): want KeyError")
			}
			if err := s.Replace([]any{p2}, "9"); err != nil {
				t.Fatal(err)
			}
			if got := s.ListKeys(); !slices.Equal(got, []string{"a/p2"}) {
				t.Fatalf("after Replace: %v", got)
			}
			if err := s.Resync(); err != nil {
				t.Fatal(err)
			}
			if err := s.Replace([]any{42}, "9"); err == nil {
				t.Fatal("Replace with non-object: want error")
			}
			if got := s.ListKeys(); !slices.Equal(got, []string{"a/p2"}) {
				t.Fatalf("failed Replace changed content: %v", got)
			}
		})
	}
}
