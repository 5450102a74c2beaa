package cache

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// vpod is a pod "ns/name" at version v (kept in a label).
func vpod(ns, name, v string) *corev1.Pod { return newPod(ns, name, "v", v) }

// describe renders an object compactly: "ns/name@v", "tomb(key,inner)".
func describe(obj any) string {
	switch o := obj.(type) {
	case nil:
		return "nil"
	case *corev1.Pod:
		s := o.Namespace + "/" + o.Name
		if v := o.Labels["v"]; v != "" {
			s += "@" + v
		}
		return s
	case DeletedFinalStateUnknown:
		return "tomb(" + o.Key + "," + describe(o.Obj) + ")"
	}
	return fmt.Sprintf("%v", obj)
}

func describeDeltas(ds Deltas) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = string(d.Type) + ":" + describe(d.Object)
	}
	return out
}

// checkFIFO asserts the DeltaFIFO invariants: every Deltas is non-empty and
// has no two consecutive deletions; the queue holds each key once and
// exactly the keys of items.
func checkFIFO(t *testing.T, f *DeltaFIFO) {
	t.Helper()
	f.lock.Lock()
	defer f.lock.Unlock()
	seen := make(map[string]bool, f.queue.len())
	for _, k := range f.queue.keys() {
		if seen[k] {
			t.Fatalf("key %q queued twice: %v", k, f.queue.keys())
		}
		seen[k] = true
		if _, ok := f.items[k]; !ok {
			t.Fatalf("queued key %q has no items", k)
		}
	}
	if len(f.items) != f.queue.len() {
		t.Fatalf("items has %d keys, queue %d", len(f.items), f.queue.len())
	}
	for k, ds := range f.items {
		if len(ds) == 0 {
			t.Fatalf("items[%q] is empty", k)
		}
		for i := 1; i < len(ds); i++ {
			if ds[i].Type == Deleted && ds[i-1].Type == Deleted {
				t.Fatalf("items[%q] has consecutive deletions: %v", k, describeDeltas(ds))
			}
		}
		if got, err := f.KeyOf(ds); err != nil || got != k {
			t.Fatalf("items[%q] deltas are keyed %q (%v)", k, got, err)
		}
	}
}

// fakeKnown is a KeyListerGetter; keys in ghosts are listed but not found.
type fakeKnown struct {
	objs   map[string]any
	ghosts []string
}

func (k *fakeKnown) ListKeys() []string {
	return append(slices.Sorted(maps.Keys(k.objs)), k.ghosts...)
}

func (k *fakeKnown) GetByKey(key string) (any, bool, error) {
	o, ok := k.objs[key]
	return o, ok, nil
}

func knownOf(pods ...*corev1.Pod) *fakeKnown {
	k := &fakeKnown{objs: map[string]any{}}
	for _, p := range pods {
		k.objs[p.Namespace+"/"+p.Name] = p
	}
	return k
}

// popAll pops until empty (without blocking) and returns each popped Deltas
// rendered, in order.
func popAll(t *testing.T, f *DeltaFIFO) [][]string {
	t.Helper()
	var out [][]string
	for len(f.ListKeys()) > 0 {
		obj, err := f.Pop(func(any, bool) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, describeDeltas(obj.(Deltas)))
		checkFIFO(t, f)
	}
	return out
}

func TestDeltaFIFOSequences(t *testing.T) {
	type op func(f *DeltaFIFO) error
	add := func(p *corev1.Pod) op { return func(f *DeltaFIFO) error { return f.Add(p) } }
	upd := func(p *corev1.Pod) op { return func(f *DeltaFIFO) error { return f.Update(p) } }
	del := func(p any) op { return func(f *DeltaFIFO) error { return f.Delete(p) } }
	replace := func(ps ...*corev1.Pod) op {
		return func(f *DeltaFIFO) error {
			list := make([]any, len(ps))
			for i, p := range ps {
				list[i] = p
			}
			return f.Replace(list, "")
		}
	}
	resync := func(f *DeltaFIFO) error { return f.Resync() }

	tests := []struct {
		name     string
		opts     DeltaFIFOOptions
		ops      []op
		want     [][]string // popped, in order
		wantSync bool       // HasSynced before popping
	}{
		{
			name:     "deltas accumulate per key in FIFO order",
			ops:      []op{add(vpod("a", "x", "1")), add(vpod("a", "y", "1")), upd(vpod("a", "x", "2")), del(vpod("a", "y", "1"))},
			want:     [][]string{{"Added:a/x@1", "Updated:a/x@2"}, {"Added:a/y@1", "Deleted:a/y@1"}},
			wantSync: true,
		},
		{
			name:     "consecutive deletes dedup keeping the older real one",
			ops:      []op{add(vpod("a", "x", "1")), del(vpod("a", "x", "2")), del(vpod("a", "x", "3"))},
			want:     [][]string{{"Added:a/x@1", "Deleted:a/x@2"}},
			wantSync: true,
		},
		{
			name: "real delete replaces a tombstone",
			opts: DeltaFIFOOptions{KnownObjects: knownOf(vpod("a", "x", "1"))},
			ops:  []op{replace(), del(vpod("a", "x", "2"))},
			want: [][]string{{"Deleted:a/x@2"}},
		},
		{
			name:     "tombstone after a real delete is dropped",
			ops:      []op{add(vpod("a", "x", "1")), del(vpod("a", "x", "2")), replace()},
			want:     [][]string{{"Added:a/x@1", "Deleted:a/x@2"}},
			wantSync: true,
		},
		{
			name:     "delete of an unknown object is ignored without KnownObjects",
			ops:      []op{del(vpod("a", "x", "1"))},
			want:     nil,
			wantSync: true,
		},
		{
			name:     "delete of an unknown object is ignored with KnownObjects",
			opts:     DeltaFIFOOptions{KnownObjects: knownOf()},
			ops:      []op{del(vpod("a", "x", "1"))},
			want:     nil,
			wantSync: true,
		},
		{
			name:     "delete of a known object is queued",
			opts:     DeltaFIFOOptions{KnownObjects: knownOf(vpod("a", "x", "1"))},
			ops:      []op{del(vpod("a", "x", "1"))},
			want:     [][]string{{"Deleted:a/x@1"}},
			wantSync: true,
		},
		{
			name:     "delete by tombstone uses its key",
			ops:      []op{add(vpod("a", "x", "1")), del(DeletedFinalStateUnknown{Key: "a/x", Obj: vpod("a", "x", "1")})},
			want:     [][]string{{"Added:a/x@1", "Deleted:tomb(a/x,a/x@1)"}},
			wantSync: true,
		},
		{
			name: "replace without KnownObjects emits Sync and tombstones for queued keys",
			ops: []op{
				add(vpod("a", "x", "1")), add(vpod("a", "y", "1")),
				replace(vpod("a", "x", "2"), vpod("a", "z", "1")),
			},
			want: [][]string{
				{"Added:a/x@1", "Sync:a/x@2"},
				{"Added:a/y@1", "Deleted:tomb(a/y,a/y@1)"},
				{"Sync:a/z@1"},
			},
			wantSync: true,
		},
		{
			name: "replace keeps queued keys that are listed, tombstones the others, once each",
			ops: []op{
				add(vpod("a", "x", "1")), add(vpod("a", "y", "1")), add(vpod("a", "w", "1")),
				replace(vpod("a", "z", "1"), vpod("a", "x", "2"), vpod("a", "z", "2"), vpod("a", "w", "2")),
			},
			want: [][]string{
				{"Added:a/x@1", "Sync:a/x@2"},
				{"Added:a/y@1", "Deleted:tomb(a/y,a/y@1)"},
				{"Added:a/w@1", "Sync:a/w@2"},
				{"Sync:a/z@1", "Sync:a/z@2"},
			},
			wantSync: true,
		},
		{
			name: "replace emits Replaced when asked",
			opts: DeltaFIFOOptions{EmitDeltaTypeReplaced: true},
			ops:  []op{replace(vpod("a", "x", "1"))},
			want: [][]string{{"Replaced:a/x@1"}},
		},
		{
			name: "replace with KnownObjects tombstones known and queued keys",
			opts: DeltaFIFOOptions{
				EmitDeltaTypeReplaced: true,
				KnownObjects:          &fakeKnown{objs: map[string]any{"a/k1": vpod("a", "k1", "1"), "a/k2": vpod("a", "k2", "1")}, ghosts: []string{"a/ghost"}},
			},
			ops: []op{
				add(vpod("a", "q", "1")),
				replace(vpod("a", "k1", "2")),
			},
			want: [][]string{
				{"Added:a/q@1", "Deleted:tomb(a/q,a/q@1)"},
				{"Replaced:a/k1@2"},
				{"Deleted:tomb(a/k2,a/k2@1)"},
				{"Deleted:tomb(a/ghost,nil)"},
			},
			wantSync: true,
		},
		{
			name:     "queued state wins over known state for tombstones",
			opts:     DeltaFIFOOptions{KnownObjects: knownOf(vpod("a", "x", "1"))},
			ops:      []op{upd(vpod("a", "x", "2")), replace()},
			want:     [][]string{{"Updated:a/x@2", "Deleted:tomb(a/x,a/x@2)"}},
			wantSync: true,
		},
		{
			name: "a second replace does not nest tombstones",
			opts: DeltaFIFOOptions{KnownObjects: knownOf(vpod("a", "x", "1"))},
			ops:  []op{replace(), replace()},
			want: [][]string{{"Deleted:tomb(a/x,a/x@1)"}},
		},
		{
			name:     "resync queues Sync for known keys not queued",
			opts:     DeltaFIFOOptions{KnownObjects: knownOf(vpod("a", "x", "1"), vpod("a", "y", "1"))},
			ops:      []op{upd(vpod("a", "x", "2")), resync},
			want:     [][]string{{"Updated:a/x@2"}, {"Sync:a/y@1"}},
			wantSync: true,
		},
		{
			name: "resync without KnownObjects is a no-op",
			ops:  []op{resync},
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewDeltaFIFOWithOptions(tc.opts)
			for i, o := range tc.ops {
				if err := o(f); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
				checkFIFO(t, f)
			}
			if got := f.HasSynced(); got != tc.wantSync {
				t.Errorf("HasSynced before popping = %v, want %v", got, tc.wantSync)
			}
			if got := popAll(t, f); !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("popped\n  %v\nwant\n  %v", got, tc.want)
			}
		})
	}
}

func TestDeltaFIFOHasSynced(t *testing.T) {
	p := func(n string) any { return vpod("a", n, "1") }
	tests := []struct {
		name string
		opts DeltaFIFOOptions
		// setup runs on a fresh queue; then items are popped one at a time.
		setup func(f *DeltaFIFO)
		// wantSynced[i] is HasSynced after i pops.
		wantSynced []bool
		// wantInitial[i] is isInInitialList seen by pop i.
		wantInitial []bool
	}{
		{
			name:       "nothing happened",
			setup:      func(*DeltaFIFO) {},
			wantSynced: []bool{false},
		},
		{
			name:        "add first",
			setup:       func(f *DeltaFIFO) { _ = f.Add(p("x")) },
			wantSynced:  []bool{true, true},
			wantInitial: []bool{false},
		},
		{
			name:        "replace first",
			setup:       func(f *DeltaFIFO) { _ = f.Replace([]any{p("x"), p("y")}, "") },
			wantSynced:  []bool{false, false, true},
			wantInitial: []bool{true, true},
		},
		{
			name:       "empty replace",
			setup:      func(f *DeltaFIFO) { _ = f.Replace(nil, "") },
			wantSynced: []bool{true},
		},
		{
			name: "later adds are not part of the initial list",
			setup: func(f *DeltaFIFO) {
				_ = f.Replace([]any{p("x")}, "")
				_ = f.Add(p("y"))
				_ = f.Replace([]any{p("x"), p("y"), p("z")}, "")
			},
			wantSynced:  []bool{false, true, true, true},
			wantInitial: []bool{true, false, false},
		},
		{
			name: "keys queued by a resync before the first replace count",
			opts: DeltaFIFOOptions{KnownObjects: knownOf(vpod("a", "k", "1"), vpod("a", "x", "1"))},
			setup: func(f *DeltaFIFO) {
				_ = f.Resync()
				_ = f.Replace([]any{p("x"), p("y")}, "")
			},
			// k (resynced, then tombstoned), x (resynced, then listed), y.
			wantSynced:  []bool{false, false, false, true},
			wantInitial: []bool{true, true, true},
		},
		{
			name:        "a key listed twice counts once",
			setup:       func(f *DeltaFIFO) { _ = f.Replace([]any{p("x"), p("y"), p("x")}, "") },
			wantSynced:  []bool{false, false, true},
			wantInitial: []bool{true, true},
		},
		{
			name: "tombstones of the first replace count",
			opts: DeltaFIFOOptions{KnownObjects: knownOf(vpod("a", "k", "1"))},
			setup: func(f *DeltaFIFO) {
				_ = f.Replace([]any{p("x")}, "")
			},
			wantSynced:  []bool{false, false, true},
			wantInitial: []bool{true, true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewDeltaFIFOWithOptions(tc.opts)
			tc.setup(f)
			for i, want := range tc.wantSynced {
				if got := f.HasSynced(); got != want {
					t.Fatalf("after %d pops HasSynced = %v, want %v", i, got, want)
				}
				if i == len(tc.wantSynced)-1 {
					break
				}
				var initial bool
				if _, err := f.Pop(func(_ any, in bool) error { initial = in; return nil }); err != nil {
					t.Fatal(err)
				}
				if initial != tc.wantInitial[i] {
					t.Fatalf("pop %d: isInInitialList = %v, want %v", i, initial, tc.wantInitial[i])
				}
			}
			if n := len(f.ListKeys()); n != 0 {
				t.Fatalf("%d items left", n)
			}
		})
	}
}

func TestDeltaFIFOPopRequeue(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	_ = f.Add(vpod("a", "x", "1"))
	_ = f.Add(vpod("a", "y", "1"))
	boom := errors.New("boom")

	tests := []struct {
		name     string
		ret      error
		wantErr  error
		wantKeys []string
	}{
		{"requeue goes to the back and returns the inner error", ErrRequeue{Err: boom}, boom, []string{"a/y", "a/x"}},
		{"plain error drops the item", boom, boom, []string{"a/x"}},
		{"wrapped requeue with nil error", fmt.Errorf("wrapped: %w", ErrRequeue{}), nil, []string{"a/x"}},
		{"success", nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Deltas
			obj, err := f.Pop(func(obj any, _ bool) error { got = obj.(Deltas); return tc.ret })
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("Pop error = %v, want %v", err, tc.wantErr)
			}
			if len(got) == 0 || !slices.Equal(describeDeltas(obj.(Deltas)), describeDeltas(got)) {
				t.Fatalf("Pop returned %v, process saw %v", obj, got)
			}
			checkFIFO(t, f)
			if keys := f.ListKeys(); !slices.Equal(keys, tc.wantKeys) {
				t.Fatalf("queue = %v, want %v", keys, tc.wantKeys)
			}
		})
	}
}

func TestDeltaFIFOAddIfNotPresent(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	_ = f.Add(vpod("a", "x", "1"))
	popped, _ := f.Pop(func(any, bool) error { return nil })
	_ = f.Update(vpod("a", "x", "2"))

	// Newer deltas are queued: AddIfNotPresent must not clobber them.
	if err := f.AddIfNotPresent(popped); err != nil {
		t.Fatal(err)
	}
	d, _, _ := f.GetByKey("a/x")
	if got := describeDeltas(d.(Deltas)); !slices.Equal(got, []string{"Updated:a/x@2"}) {
		t.Fatalf("got %v", got)
	}
	popAll(t, f)
	if err := f.AddIfNotPresent(popped); err != nil {
		t.Fatal(err)
	}
	// A requeued Deltas is not shared with the caller: dedup on later
	// deletes must not rewrite the caller's slice.
	before := describeDeltas(popped.(Deltas))
	_ = f.Delete(vpod("a", "x", "9"))
	if after := describeDeltas(popped.(Deltas)); !slices.Equal(before, after) {
		t.Fatalf("caller's Deltas changed: %v -> %v", before, after)
	}
	checkFIFO(t, f)
	if err := f.AddIfNotPresent(vpod("a", "x", "1")); err == nil {
		t.Fatal("AddIfNotPresent(non-Deltas): want error")
	}
	if err := f.AddIfNotPresent(Deltas{}); err == nil {
		t.Fatal("AddIfNotPresent(empty Deltas): want error")
	}
}

func TestDeltaFIFOTransformer(t *testing.T) {
	var calls []string
	transform := func(obj any) (any, error) {
		p := obj.(*corev1.Pod)
		calls = append(calls, describe(p))
		if p.Labels["v"] == "bad" {
			return nil, errors.New("cannot transform")
		}
		q := p.DeepCopy()
		q.Labels["t"] = "yes"
		return q, nil
	}
	tests := []struct {
		name      string
		emit      bool
		op        func(f *DeltaFIFO) error
		wantCalls []string
		wantErr   bool
	}{
		{"add", false, func(f *DeltaFIFO) error { return f.Add(vpod("a", "n", "1")) }, []string{"a/n@1"}, false},
		{"update", false, func(f *DeltaFIFO) error { return f.Update(vpod("a", "n", "1")) }, []string{"a/n@1"}, false},
		{"delete of a known object", false, func(f *DeltaFIFO) error { return f.Delete(vpod("a", "k", "1")) }, []string{"a/k@1"}, false},
		{"replace emitting Sync still transforms", false, func(f *DeltaFIFO) error { return f.Replace([]any{vpod("a", "k", "2")}, "") }, []string{"a/k@2"}, false},
		{"replace emitting Replaced", true, func(f *DeltaFIFO) error { return f.Replace([]any{vpod("a", "k", "2")}, "") }, []string{"a/k@2"}, false},
		{"tombstones are not transformed", false, func(f *DeltaFIFO) error { return f.Replace(nil, "") }, nil, false},
		{"resync is not transformed", false, func(f *DeltaFIFO) error { return f.Resync() }, nil, false},
		{"error is returned and nothing queued", false, func(f *DeltaFIFO) error { return f.Add(vpod("a", "n", "bad")) }, []string{"a/n@bad"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{
				KnownObjects:          knownOf(vpod("a", "k", "1")),
				EmitDeltaTypeReplaced: tc.emit,
				Transformer:           transform,
			})
			err := tc.op(f)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			checkFIFO(t, f)
			if !slices.Equal(calls, tc.wantCalls) {
				t.Fatalf("transformer calls = %v, want %v", calls, tc.wantCalls)
			}
			// Every non-tombstone object that was transformed carries the mark.
			f.lock.Lock()
			defer f.lock.Unlock()
			for _, ds := range f.items {
				for _, d := range ds {
					if p, ok := d.Object.(*corev1.Pod); ok && (p.Labels["t"] == "yes") != (len(tc.wantCalls) > 0) {
						t.Fatalf("delta %s:%s transformed=%v", d.Type, describe(p), p.Labels["t"])
					}
				}
			}
			if tc.wantErr && len(f.items) != 0 {
				t.Fatalf("failed transform queued %d items", len(f.items))
			}
		})
	}
}

func TestDeltaFIFOAccessors(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	_ = f.Add(vpod("a", "x", "1"))
	_ = f.Update(vpod("a", "x", "2"))
	_ = f.Add(vpod("b", "y", "1"))

	if got := f.ListKeys(); !slices.Equal(got, []string{"a/x", "b/y"}) {
		t.Fatalf("ListKeys = %v", got)
	}
	var listed []string
	for _, o := range f.List() {
		listed = append(listed, describe(o))
	}
	slices.Sort(listed)
	if !slices.Equal(listed, []string{"a/x@2", "b/y@1"}) {
		t.Fatalf("List = %v", listed)
	}
	got, ok, err := f.Get(vpod("a", "x", "zzz"))
	if err != nil || !ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	d := got.(Deltas)
	if d.Oldest().Type != Added || d.Newest().Type != Updated {
		t.Fatalf("Oldest/Newest = %v/%v", d.Oldest(), d.Newest())
	}
	d[0].Type = Sync // a copy: must not affect the queue
	again, _, _ := f.GetByKey("a/x")
	if again.(Deltas)[0].Type != Added {
		t.Fatal("Get returned the queue's own slice")
	}
	if (Deltas{}).Oldest() != nil || (Deltas{}).Newest() != nil {
		t.Fatal("Oldest/Newest of empty Deltas")
	}
	if _, ok, _ := f.GetByKey("nope"); ok {
		t.Fatal("GetByKey(nope) found something")
	}
	for _, tc := range []struct {
		obj  any
		want string
	}{
		{d, "a/x"},
		{DeletedFinalStateUnknown{Key: "k"}, "k"},
		{Deltas{{Deleted, DeletedFinalStateUnknown{Key: "t"}}}, "t"},
	} {
		if k, err := f.KeyOf(tc.obj); err != nil || k != tc.want {
			t.Errorf("KeyOf(%v) = %q, %v", tc.obj, k, err)
		}
	}
	if _, err := f.KeyOf(Deltas{}); !errors.Is(err, ErrZeroLengthDeltasObject) {
		t.Errorf("KeyOf(empty) err = %v", err)
	}
	if err := f.Add(42); err == nil {
		t.Error("Add(non-object): want error")
	}
	if err := f.Replace([]any{42}, ""); err == nil {
		t.Error("Replace(non-object): want error")
	}
	checkFIFO(t, f)
}

// waitForBlockedPops waits until exactly n Pops of f are blocked waiting for
// an item (so that what follows exercises the wake-up path).
func waitForBlockedPops(t *testing.T, f *DeltaFIFO, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d blocked Pops", n), func() bool {
		f.lock.Lock()
		defer f.lock.Unlock()
		return f.waiting == n
	})
}

// popAsync runs a Pop in the background; its result (the popped object
// described, or the error) arrives on the returned channel.
func popAsync(f *DeltaFIFO) <-chan string {
	out := make(chan string, 1)
	go func() {
		obj, err := f.Pop(func(any, bool) error { return nil })
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		out <- describe(obj.(Deltas).Newest().Object)
	}()
	return out
}

// receive returns the next value of ch, failing the test after waitTimeout.
func receive(t *testing.T, what string, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
		return ""
	}
}

func TestDeltaFIFOClose(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	_ = f.Add(vpod("a", "x", "1"))
	f.Close()
	if !f.IsClosed() {
		t.Fatal("IsClosed = false")
	}
	// Queued items can still be popped after Close.
	if _, err := f.Pop(func(any, bool) error { return nil }); err != nil {
		t.Fatalf("Pop after Close with items: %v", err)
	}
	if _, err := f.Pop(func(any, bool) error { return nil }); !errors.Is(err, ErrFIFOClosed) {
		t.Fatalf("Pop on closed empty queue: %v", err)
	}

	// Close wakes every blocked Pop.
	g := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	first, second := popAsync(g), popAsync(g)
	waitForBlockedPops(t, g, 2)
	g.Close()
	want := "error: " + ErrFIFOClosed.Error()
	for _, ch := range []<-chan string{first, second} {
		if got := receive(t, "a blocked Pop to return", ch); got != want {
			t.Fatalf("blocked Pop returned %q, want %q", got, want)
		}
	}
	waitForBlockedPops(t, g, 0)
}

func TestDeltaFIFOBlockingPop(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	first, second := popAsync(f), popAsync(f)
	waitForBlockedPops(t, f, 2)
	// One item wakes both; one takes it and the other waits again.
	_ = f.Add(vpod("a", "x", "1"))
	var got string
	var rest <-chan string
	select {
	case got = <-first:
		rest = second
	case got = <-second:
		rest = first
	case <-time.After(waitTimeout):
		t.Fatal("Add did not wake a Pop")
	}
	if got != "a/x@1" {
		t.Fatalf("popped %s", got)
	}
	waitForBlockedPops(t, f, 1)
	select {
	case s := <-rest:
		t.Fatalf("the other Pop returned %q from an empty queue", s)
	default:
	}
	_ = f.Add(vpod("a", "y", "2"))
	if got := receive(t, "the second Pop", rest); got != "a/y@2" {
		t.Fatalf("popped %s", got)
	}
	waitForBlockedPops(t, f, 0)
	checkFIFO(t, f)
}

// TestDeltaFIFORandomized drives a DeltaFIFO like a Reflector over a
// simulated server (with missed watch events) and consumes it like an
// informer, checking the invariants after every operation and that, after a
// final relist and drain, the consumer's cache equals the server's truth.
func TestDeltaFIFORandomized(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		for _, emit := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed%d/replaced=%v", seed, emit), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 7))
				server := map[string]*corev1.Pod{}
				known := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
				f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: emit})
				version := 0
				// process applies deltas to the consumer's cache, like
				// an informer's HandleDeltas.
				process := func(obj any, _ bool) error {
					for _, d := range obj.(Deltas) {
						var err error
						switch d.Type {
						case Added, Updated, Sync, Replaced:
							err = known.Update(d.Object)
						case Deleted:
							err = known.Delete(d.Object)
						}
						if err != nil {
							return err
						}
					}
					return nil
				}
				relist := func() error {
					list := make([]any, 0, len(server))
					for _, k := range slices.Sorted(maps.Keys(server)) {
						list = append(list, server[k])
					}
					return f.Replace(list, "")
				}
				for step := 0; step < 500; step++ {
					version++
					key := fmt.Sprint("p", r.IntN(15))
					p := vpod("ns", key, fmt.Sprint(version))
					_, exists := server["ns/"+key]
					missed := r.IntN(6) == 0 // the watch event is lost
					var err error
					switch n := r.IntN(20); {
					case n < 6: // create or modify
						server["ns/"+key] = p
						if !missed {
							if exists {
								err = f.Update(p)
							} else {
								err = f.Add(p)
							}
						}
					case n < 10: // delete
						if exists {
							delete(server, "ns/"+key)
							if !missed {
								err = f.Delete(p)
							}
						}
					case n < 12:
						err = relist()
					case n < 13:
						err = f.Resync()
					case n < 19:
						if len(f.ListKeys()) > 0 {
							_, err = f.Pop(process)
						}
					default:
						if len(f.ListKeys()) > 0 {
							_, err = f.Pop(func(obj any, in bool) error {
								if err := process(obj, in); err != nil {
									return err
								}
								return ErrRequeue{}
							})
						}
					}
					if err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
					checkFIFO(t, f)
				}
				if err := relist(); err != nil {
					t.Fatal(err)
				}
				for len(f.ListKeys()) > 0 {
					if _, err := f.Pop(process); err != nil {
						t.Fatal(err)
					}
					checkFIFO(t, f)
				}
				if !f.HasSynced() {
					t.Fatal("not synced after draining")
				}
				if got, want := slices.Sorted(slices.Values(known.ListKeys())), slices.Sorted(maps.Keys(server)); !slices.Equal(got, want) {
					t.Fatalf("cache keys %v, server %v", got, want)
				}
				for k, p := range server {
					if got, _, _ := known.GetByKey(k); got != p {
						t.Fatalf("cache has %s for %s, server %s", describe(got), k, describe(p))
					}
				}
				checkIndexer(t, known)
			})
		}
	}
}

// TestKeyQueue checks keyQueue against a plain slice through bursts small
// and large, so that it slides, grows and releases its array.
func TestKeyQueue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	var q keyQueue
	var model []string
	next := 0
	for round := 0; round < 200; round++ {
		burst := r.IntN(40)
		if round%50 == 49 {
			burst = 3 * maxIdleQueue
		}
		for range burst {
			k := fmt.Sprint(next)
			next++
			q.push(k)
			model = append(model, k)
		}
		for pops := r.IntN(len(model) + 1); pops > 0; pops-- {
			if got := q.pop(); got != model[0] {
				t.Fatalf("round %d: pop %q, want %q", round, got, model[0])
			}
			model = model[1:]
		}
		if !slices.Equal(q.keys(), model) || q.len() != len(model) {
			t.Fatalf("round %d: queue %v, want %v", round, q.keys(), model)
		}
		if q.len() == 0 && cap(q.buf) > maxIdleQueue {
			t.Fatalf("round %d: drained queue keeps %d slots", round, cap(q.buf))
		}
	}
	// A queue that never drains but stays short does not grow: popped
	// slots are reused.
	q = keyQueue{}
	for i := range 10 {
		q.push(fmt.Sprint(i))
	}
	for i := range 100000 {
		q.push(fmt.Sprint(i))
		q.pop()
	}
	if q.len() != 10 || cap(q.buf) > 64 {
		t.Fatalf("steady queue: %d keys in %d slots", q.len(), cap(q.buf))
	}
}

// TestDeltaFIFOReleasesAfterLargeBatch: once a relist larger than
// maxIdleQueue has been popped, the FIFO holds no large queue or map.
func TestDeltaFIFOReleasesAfterLargeBatch(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction: MetaNamespaceKeyFunc})
	list := make([]any, 2*maxIdleQueue)
	for i := range list {
		list[i] = newPod("ns", fmt.Sprint("p", i))
	}
	if err := f.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	checkFIFO(t, f)
	for range list {
		if _, err := f.Pop(func(any, bool) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	checkFIFO(t, f)
	if !f.HasSynced() {
		t.Fatal("not synced")
	}
	if f.itemsPeak != 0 || f.queue.buf != nil {
		t.Fatalf("after draining: itemsPeak %d, queue capacity %d", f.itemsPeak, cap(f.queue.buf))
	}
	// Still usable.
	if err := f.Add(newPod("ns", "q")); err != nil {
		t.Fatal(err)
	}
	checkFIFO(t, f)
}

// BenchmarkDeltaFIFOAddPop: one Add and one Pop per operation.
func BenchmarkDeltaFIFOAddPop(b *testing.B) {
	const n = 1024
	pods := make([]any, n)
	for i := range pods {
		pods[i] = newPod(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("pod-%d", i))
	}
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction: MetaNamespaceKeyFunc})
	process := func(any, bool) error { return nil }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.Add(pods[i%n]); err != nil {
			b.Fatal(err)
		}
		if _, err := f.Pop(process); err != nil {
			b.Fatal(err)
		}
	}
}
