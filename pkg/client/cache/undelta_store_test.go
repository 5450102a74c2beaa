package cache

import (
	"slices"
	"testing"
)

func TestUndeltaStore(t *testing.T) {
	var pushes [][]string
	u := NewUndeltaStore(func(objs []any) { pushes = append(pushes, keysOf(t, objs)) }, MetaNamespaceKeyFunc)
	tests := []struct {
		name    string
		op      func() error
		wantErr bool
		want    []string // the pushed state, nil for no push
	}{
		{"add", func() error { return u.Add(newPod("a", "x")) }, false, []string{"a/x"}},
		{"add another", func() error { return u.Add(newPod("a", "y")) }, false, []string{"a/x", "a/y"}},
		{"update", func() error { return u.Update(newPod("a", "x", "v", "2")) }, false, []string{"a/x", "a/y"}},
		{"delete", func() error { return u.Delete(newPod("a", "x")) }, false, []string{"a/y"}},
		{"replace", func() error { return u.Replace([]any{newPod("b", "z")}, "3") }, false, []string{"b/z"}},
		{"failed add does not push", func() error { return u.Add(7) }, true, nil},
		{"resync does not push", u.Resync, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pushes = nil
			if err := tc.op(); (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			switch {
			case tc.want == nil && len(pushes) != 0:
				t.Fatalf("unexpected push %v", pushes)
			case tc.want != nil && (len(pushes) != 1 || !slices.Equal(pushes[0], tc.want)):
				t.Fatalf("pushes = %v, want [%v]", pushes, tc.want)
			}
		})
	}
}
