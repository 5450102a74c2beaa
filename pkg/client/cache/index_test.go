package cache

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// labelIndexFunc indexes by the value of label key (no value: not indexed).
func labelIndexFunc(key string) IndexFunc {
	return func(obj any) ([]string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if v, ok := m.GetLabels()[key]; ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// usersIndexFunc is multi-valued: the comma-separated "users" label.
func usersIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	v := m.GetLabels()["users"]
	if v == "" {
		return nil, nil
	}
	return strings.Split(v, "."), nil
}

func testIndexers() Indexers {
	return Indexers{
		NamespaceIndex: MetaNamespaceIndexFunc,
		"app":          labelIndexFunc("app"),
		"users":        usersIndexFunc,
	}
}

// checkIndexer verifies, against the store's internals and by recomputing
// every index function, that the indices are exactly what the stored objects
// produce, that every item's refs and every KeySet's positions agree, and
// that no empty value sets exist.
func checkIndexer(t *testing.T, ix Indexer) {
	t.Helper()
	s := ix.(*cache).storage
	s.lock.RLock()
	defer s.lock.RUnlock()

	if len(s.names) != len(s.indexers) || len(s.funcs) != len(s.names) || len(s.indices) != len(s.names) || len(s.maps) != len(s.names) {
		t.Fatalf("indexer bookkeeping out of sync: names=%v indexers=%d indices=%d maps=%d", s.names, len(s.indexers), len(s.indices), len(s.maps))
	}
	// Every item: its refs are exactly the distinct values the index
	// functions produce, grouped by index in order, and each points at the
	// item's real position.
	usedExtra := 0
	for key, it := range s.items {
		if it.key != key {
			t.Fatalf("item under %q has key %q", key, it.key)
		}
		if it.more != 0 {
			usedExtra++
			if len(s.extra[it.more-1]) == 0 {
				t.Fatalf("item %q has an empty extra slot", key)
			}
		}
		var want []ref
		refs := s.appendRefs(nil, it)
		if it.set == nil && it.more != 0 {
			t.Fatalf("item %q has extra refs but no first ref", key)
		}
		for i, name := range s.names {
			vals, err := s.indexers[name](it.obj)
			if err != nil {
				t.Fatalf("index %q on %q: %v", name, key, err)
			}
			for x, v := range vals {
				if slices.Contains(vals[:x], v) {
					continue
				}
				set := s.maps[i][v]
				if set == nil {
					t.Fatalf("index %q has no set for %q (item %q)", name, v, key)
				}
				want = append(want, ref{set: set})
			}
		}
		if len(refs) != len(want) {
			t.Fatalf("item %q has %d refs, want %d", key, len(refs), len(want))
		}
		for j, r := range refs {
			if r.set != want[j].set {
				t.Fatalf("item %q ref %d is for %d/%q, want %d/%q", key, j, r.set.index, r.set.value, want[j].set.index, want[j].set.value)
			}
			if int(r.pos) >= len(r.set.items) || r.set.items[r.pos] != it {
				t.Fatalf("item %q ref %d: position %d in %q is wrong", key, j, r.pos, r.set.value)
			}
		}
	}
	if usedExtra+len(s.free) != len(s.extra) {
		t.Fatalf("extra slots: %d used + %d free != %d", usedExtra, len(s.free), len(s.extra))
	}
	for _, f := range s.free {
		if s.extra[f] != nil {
			t.Fatalf("free extra slot %d still holds refs", f)
		}
	}
	// Every set: non-empty, of its index and value, holding only stored
	// items, each of which refers back to this position.
	for i, name := range s.names {
		idx, ok := s.indices[name]
		if !ok {
			t.Fatalf("index %q has no Index", name)
		}
		if reflect.ValueOf(idx).Pointer() != reflect.ValueOf(s.maps[i]).Pointer() {
			t.Fatalf("index %q: Indices and maps disagree", name)
		}
		for v, set := range idx {
			if set.Len() == 0 {
				t.Fatalf("index %q keeps an empty set for %q", name, v)
			}
			if set.index != i || set.value != v {
				t.Fatalf("index %q value %q: set says %d/%q", name, v, set.index, set.value)
			}
			for p, it := range set.items {
				if s.items[it.key] != it {
					t.Fatalf("index %q value %q holds a stale item %q", name, v, it.key)
				}
				found := false
				for _, r := range s.appendRefs(nil, it) {
					if r.set == set {
						if int(r.pos) != p {
							t.Fatalf("index %q value %q: %q at %d thinks it is at %d", name, v, it.key, p, r.pos)
						}
						found = true
					}
				}
				if !found {
					t.Fatalf("index %q value %q holds %q, which has no ref to it", name, v, it.key)
				}
			}
		}
	}
}

func keysOf(t *testing.T, objs []any) []string {
	t.Helper()
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		k, err := MetaNamespaceKeyFunc(o)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestIndexerOperations(t *testing.T) {
	type op func(t *testing.T, ix Indexer) error
	add := func(p *corev1.Pod) op { return func(_ *testing.T, ix Indexer) error { return ix.Add(p) } }
	update := func(p *corev1.Pod) op { return func(_ *testing.T, ix Indexer) error { return ix.Update(p) } }
	del := func(p *corev1.Pod) op { return func(_ *testing.T, ix Indexer) error { return ix.Delete(p) } }
	replace := func(ps ...*corev1.Pod) op {
		return func(_ *testing.T, ix Indexer) error {
			list := make([]any, len(ps))
			for i, p := range ps {
				list[i] = p
			}
			return ix.Replace(list, "7")
		}
	}
	type query struct {
		index, value string
		want         []string
	}
	tests := []struct {
		name    string
		ops     []op
		queries []query
		values  map[string][]string // index -> ListIndexFuncValues
	}{
		{
			name:    "add indexes",
			ops:     []op{add(newPod("a", "p1", "app", "web")), add(newPod("a", "p2", "app", "db")), add(newPod("b", "p3", "app", "web"))},
			queries: []query{{NamespaceIndex, "a", []string{"a/p1", "a/p2"}}, {"app", "web", []string{"a/p1", "b/p3"}}, {"app", "db", []string{"a/p2"}}},
			values:  map[string][]string{NamespaceIndex: {"a", "b"}, "app": {"db", "web"}},
		},
		{
			name:    "update moves key and drops empty value",
			ops:     []op{add(newPod("a", "p1", "app", "web")), update(newPod("a", "p1", "app", "db"))},
			queries: []query{{"app", "web", []string{}}, {"app", "db", []string{"a/p1"}}},
			values:  map[string][]string{"app": {"db"}},
		},
		{
			name:    "update removing label unindexes",
			ops:     []op{add(newPod("a", "p1", "app", "web")), update(newPod("a", "p1"))},
			queries: []query{{"app", "web", []string{}}, {NamespaceIndex, "a", []string{"a/p1"}}},
			values:  map[string][]string{"app": {}},
		},
		{
			name:    "multi-valued index with overlap on update",
			ops:     []op{add(newPod("a", "p1", "users", "ann.bob")), add(newPod("a", "p2", "users", "bob")), update(newPod("a", "p1", "users", "bob.cid"))},
			queries: []query{{"users", "ann", []string{}}, {"users", "bob", []string{"a/p1", "a/p2"}}, {"users", "cid", []string{"a/p1"}}},
			values:  map[string][]string{"users": {"bob", "cid"}},
		},
		{
			name:    "delete removes from every index",
			ops:     []op{add(newPod("a", "p1", "app", "web", "users", "ann")), add(newPod("a", "p2", "app", "web")), del(newPod("a", "p1"))},
			queries: []query{{"app", "web", []string{"a/p2"}}, {"users", "ann", []string{}}},
			values:  map[string][]string{"users": {}, NamespaceIndex: {"a"}},
		},
		{
			name:    "delete of missing key is a no-op",
			ops:     []op{add(newPod("a", "p1")), del(newPod("a", "zz"))},
			queries: []query{{NamespaceIndex, "a", []string{"a/p1"}}},
		},
		{
			name: "replace rebuilds",
			ops: []op{
				add(newPod("a", "p1", "app", "web")), add(newPod("b", "p2", "app", "web")),
				replace(newPod("a", "p1", "app", "db"), newPod("c", "p9", "app", "web")),
			},
			queries: []query{{"app", "web", []string{"c/p9"}}, {"app", "db", []string{"a/p1"}}, {NamespaceIndex, "b", []string{}}},
			values:  map[string][]string{NamespaceIndex: {"a", "c"}},
		},
		{
			name:    "replace with nothing empties",
			ops:     []op{add(newPod("a", "p1", "app", "web")), replace()},
			queries: []query{{"app", "web", []string{}}},
			values:  map[string][]string{NamespaceIndex: {}, "app": {}, "users": {}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewIndexer(MetaNamespaceKeyFunc, testIndexers())
			for i, o := range tc.ops {
				if err := o(t, ix); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
				checkIndexer(t, ix)
			}
			for _, q := range tc.queries {
				objs, err := ix.ByIndex(q.index, q.value)
				if err != nil {
					t.Fatal(err)
				}
				if got := keysOf(t, objs); !slices.Equal(got, q.want) {
					t.Errorf("ByIndex(%q, %q) = %v, want %v", q.index, q.value, got, q.want)
				}
				keys, err := ix.IndexKeys(q.index, q.value)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(keys, q.want) {
					t.Errorf("IndexKeys(%q, %q) = %v, want %v", q.index, q.value, keys, q.want)
				}
			}
			for index, want := range tc.values {
				got := ix.ListIndexFuncValues(index)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("ListIndexFuncValues(%q) = %v, want %v", index, got, want)
				}
			}
		})
	}
}

func TestIndexerIndexQuery(t *testing.T) {
	ix := NewIndexer(MetaNamespaceKeyFunc, testIndexers())
	for _, p := range []*corev1.Pod{
		newPod("a", "p1", "users", "ann.bob"),
		newPod("a", "p2", "users", "bob"),
		newPod("a", "p3", "users", "cid"),
	} {
		if err := ix.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		probe *corev1.Pod
		want  []string
	}{
		{"single value", newPod("x", "q", "users", "bob"), []string{"a/p1", "a/p2"}},
		{"several values are deduplicated", newPod("x", "q", "users", "ann.bob"), []string{"a/p1", "a/p2"}},
		{"union", newPod("x", "q", "users", "ann.cid"), []string{"a/p1", "a/p3"}},
		{"no match", newPod("x", "q", "users", "zed"), []string{}},
		{"no values", newPod("x", "q"), []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := ix.Index("users", tc.probe)
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(t, objs); !slices.Equal(got, tc.want) {
				t.Fatalf("Index = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIndexerUnknownIndex(t *testing.T) {
	ix := NewIndexer(MetaNamespaceKeyFunc, Indexers{})
	if _, err := ix.ByIndex("nope", "x"); err == nil {
		t.Error("ByIndex on unknown index: want error")
	}
	if _, err := ix.IndexKeys("nope", "x"); err == nil {
		t.Error("IndexKeys on unknown index: want error")
	}
	if _, err := ix.Index("nope", newPod("a", "b")); err == nil {
		t.Error("Index on unknown index: want error")
	}
	if got := ix.ListIndexFuncValues("nope"); len(got) != 0 {
		t.Errorf("ListIndexFuncValues on unknown index = %v", got)
	}
}

func TestIndexerAddIndexers(t *testing.T) {
	ix := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	for _, p := range []*corev1.Pod{newPod("a", "p1", "app", "web"), newPod("b", "p2", "app", "web"), newPod("b", "p3")} {
		if err := ix.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.AddIndexers(Indexers{"app": labelIndexFunc("app"), "users": usersIndexFunc}); err != nil {
		t.Fatal(err)
	}
	checkIndexer(t, ix)
	if got, _ := ix.IndexKeys("app", "web"); !slices.Equal(got, []string{"a/p1", "b/p2"}) {
		t.Fatalf("existing items not indexed: %v", got)
	}
	// Later operations maintain the new index too.
	if err := ix.Update(newPod("a", "p1", "app", "db")); err != nil {
		t.Fatal(err)
	}
	checkIndexer(t, ix)
	if got, _ := ix.IndexKeys("app", "web"); !slices.Equal(got, []string{"b/p2"}) {
		t.Fatalf("after update: %v", got)
	}
	if got := ix.GetIndexers(); len(got) != 3 {
		t.Fatalf("GetIndexers has %d entries, want 3", len(got))
	}

	tests := []struct {
		name     string
		indexers Indexers
	}{
		{"conflicting name", Indexers{"app": labelIndexFunc("app")}},
		{"nil func", Indexers{"nil": nil}},
		{"failing func", Indexers{"bad": func(any) ([]string, error) { return nil, errors.New("nope") }}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := ix.AddIndexers(tc.indexers); err == nil {
				t.Fatal("want error")
			}
			if got := ix.GetIndexers(); len(got) != 3 {
				t.Fatalf("failed AddIndexers changed the indexers: %d", len(got))
			}
			checkIndexer(t, ix)
		})
	}
}

func TestAddIndexersToUnindexedStore(t *testing.T) {
	ix := NewIndexer(MetaNamespaceKeyFunc, nil)
	for _, p := range []*corev1.Pod{newPod("a", "p1", "app", "web", "users", "ann.bob"), newPod("b", "p2")} {
		if err := ix.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	checkIndexer(t, ix)
	if err := ix.AddIndexers(testIndexers()); err != nil {
		t.Fatal(err)
	}
	checkIndexer(t, ix)
	if err := ix.Update(newPod("a", "p1", "users", "cid")); err != nil {
		t.Fatal(err)
	}
	checkIndexer(t, ix)
	if got, _ := ix.IndexKeys("users", "cid"); !slices.Equal(got, []string{"a/p1"}) {
		t.Fatalf("IndexKeys = %v", got)
	}
	if err := ix.Delete(newPod("a", "p1")); err != nil {
		t.Fatal(err)
	}
	checkIndexer(t, ix)
}

func TestIndexerFailingIndexFuncLeavesStoreUnchanged(t *testing.T) {
	failOn := "bad"
	ix := NewIndexer(MetaNamespaceKeyFunc, Indexers{
		"app": func(obj any) ([]string, error) {
			v := obj.(*corev1.Pod).Labels["app"]
			if v == failOn {
				return nil, errors.New("cannot index")
			}
			return []string{v}, nil
		},
	})
	good := newPod("a", "p1", "app", "web")
	if err := ix.Add(good); err != nil {
		t.Fatal(err)
	}
	if err := ix.Update(newPod("a", "p1", "app", "bad")); err == nil {
		t.Fatal("Update with failing index func: want error")
	}
	if err := ix.Replace([]any{newPod("a", "p2", "app", "bad")}, ""); err == nil {
		t.Fatal("Replace with failing index func: want error")
	}
	checkIndexer(t, ix)
	if got, ok, _ := ix.GetByKey("a/p1"); !ok || got != good {
		t.Fatalf("store changed after failed operations: %v %v", got, ok)
	}
}

// TestIndexerRandomized applies a seeded random sequence of operations,
// checking the index invariants after each one and the content against a
// model.
func TestIndexerRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			ix := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
			model := map[string]*corev1.Pod{}
			apps := []string{"web", "db", "cache", ""}
			users := []string{"", "ann", "bob", "ann.bob", "bob.cid", "cid.cid"}
			randPod := func() *corev1.Pod {
				var kv []string
				if a := apps[r.IntN(len(apps))]; a != "" {
					kv = append(kv, "app", a)
				}
				if u := users[r.IntN(len(users))]; u != "" {
					kv = append(kv, "users", u)
				}
				return newPod(fmt.Sprint("ns", r.IntN(4)), fmt.Sprint("p", r.IntN(12)), kv...)
			}
			for step := 0; step < 400; step++ {
				if step == 200 {
					if err := ix.AddIndexers(Indexers{"app": labelIndexFunc("app"), "users": usersIndexFunc}); err != nil {
						t.Fatal(err)
					}
					checkIndexer(t, ix)
				}
				if err := randomIndexerOp(r, ix, model, randPod, opMix{add: 8, update: 5, del: 5, replace: 1, replaceMax: 10}); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				checkIndexer(t, ix)
				checkKeysAgainstModel(t, step, ix, model)
			}
			if len(ix.GetIndexers()) != 3 {
				t.Fatalf("AddIndexers never ran")
			}
		})
	}
}

// opMix weighs the operations randomIndexerOp picks from; replaceMax bounds
// (exclusively) the size of a Replace's list.
type opMix struct{ add, update, del, replace, replaceMax int }

// randomIndexerOp applies one random Add, Update, Delete or Replace of
// pods from randPod to ix, and the same change to model.
func randomIndexerOp(r *rand.Rand, ix Indexer, model map[string]*corev1.Pod, randPod func() *corev1.Pod, mix opMix) error {
	switch n := r.IntN(mix.add + mix.update + mix.del + mix.replace); {
	case n < mix.add:
		p := randPod()
		model[p.Namespace+"/"+p.Name] = p
		return ix.Add(p)
	case n < mix.add+mix.update:
		p := randPod()
		model[p.Namespace+"/"+p.Name] = p
		return ix.Update(p)
	case n < mix.add+mix.update+mix.del:
		p := randPod()
		delete(model, p.Namespace+"/"+p.Name)
		return ix.Delete(p)
	default:
		clear(model)
		var list []any
		for i := r.IntN(mix.replaceMax); i > 0; i-- {
			p := randPod()
			model[p.Namespace+"/"+p.Name] = p
			list = append(list, p)
		}
		// Later duplicates win, as in the model.
		return ix.Replace(list, "1")
	}
}

// checkKeysAgainstModel: ix holds exactly model's keys, each with model's
// object.
func checkKeysAgainstModel(t *testing.T, step int, ix Indexer, model map[string]*corev1.Pod) {
	t.Helper()
	if got, want := slices.Sorted(slices.Values(ix.ListKeys())), slices.Sorted(maps.Keys(model)); !slices.Equal(got, want) {
		t.Fatalf("step %d: keys %v, want %v", step, got, want)
	}
	for k, p := range model {
		if got, ok, _ := ix.GetByKey(k); !ok || got != p {
			t.Fatalf("step %d: GetByKey(%q) = %v, %v", step, k, got, ok)
		}
	}
}

// splitLabelIndexFunc is multi-valued: the "."-separated values of label
// (duplicates included, in order; no label: not indexed).
func splitLabelIndexFunc(label string) IndexFunc {
	return func(obj any) ([]string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		v := m.GetLabels()[label]
		if v == "" {
			return nil, nil
		}
		return strings.Split(v, "."), nil
	}
}

// checkIndexerAgainstModel recomputes every index of model by brute force
// and compares ListIndexFuncValues, IndexKeys, ByIndex (keys and object
// identity) and Index (for probe) with it.
func checkIndexerAgainstModel(t *testing.T, ix Indexer, model map[string]*corev1.Pod, probe *corev1.Pod, extraValues []string) {
	t.Helper()
	for name, fn := range ix.GetIndexers() {
		want := map[string][]string{} // value -> sorted keys
		for _, k := range slices.Sorted(maps.Keys(model)) {
			vals, err := fn(model[k])
			if err != nil {
				t.Fatal(err)
			}
			for x, v := range vals {
				if !slices.Contains(vals[:x], v) {
					want[v] = append(want[v], k)
				}
			}
		}
		if got, wantValues := slices.Sorted(slices.Values(ix.ListIndexFuncValues(name))), slices.Sorted(maps.Keys(want)); !slices.Equal(got, wantValues) {
			t.Fatalf("ListIndexFuncValues(%q) = %v, want %v", name, got, wantValues)
		}
		for _, v := range append(slices.Sorted(maps.Keys(want)), extraValues...) {
			keys, err := ix.IndexKeys(name, v)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keys, want[v]) {
				t.Fatalf("IndexKeys(%q, %q) = %#v, want %v", name, v, keys, want[v])
			}
			objs, err := ix.ByIndex(name, v)
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(t, objs); !slices.Equal(got, want[v]) {
				t.Fatalf("ByIndex(%q, %q) has keys %v, want %v", name, v, got, want[v])
			}
			for _, o := range objs {
				if p := o.(*corev1.Pod); model[p.Namespace+"/"+p.Name] != p {
					t.Fatalf("ByIndex(%q, %q) returned a stale object for %s/%s", name, v, p.Namespace, p.Name)
				}
			}
		}
		// Index: the union over the probe's values, each object once.
		probeVals, _ := fn(probe)
		var wantUnion []string
		for _, v := range probeVals {
			for _, k := range want[v] {
				if !slices.Contains(wantUnion, k) {
					wantUnion = append(wantUnion, k)
				}
			}
		}
		slices.Sort(wantUnion)
		objs, err := ix.Index(name, probe)
		if err != nil {
			t.Fatal(err)
		}
		if got := keysOf(t, objs); !slices.Equal(got, wantUnion) {
			t.Fatalf("Index(%q, probe %v) has keys %v, want %v", name, probe.Labels, got, wantUnion)
		}
	}
}

// TestIndexerRandomizedManyRefs is TestIndexerRandomized with what that one
// does not reach: items filed under many values (more than the 8 refs
// upsert and Delete keep on the stack), multi-valued index functions that
// return duplicates and reorder their values, more indices than
// maxInlineIndices (computeValues' stack buffer), and indices added while
// the store is in use. After every operation it checks the invariants
// (checkIndexer) and compares every query with a brute-force recomputation
// over a model of the content.
func TestIndexerRandomizedManyRefs(t *testing.T) {
	labels := []string{"l0", "l1", "l2", "l3", "l4", "l5"}
	indexers := func(ls ...string) Indexers {
		idx := Indexers{}
		for _, l := range ls {
			idx[l] = splitLabelIndexFunc(l)
		}
		return idx
	}
	tests := []struct {
		name    string
		initial Indexers
		added   map[int]Indexers // step -> indexers added before it
	}{
		{"grow past the inline indices", indexers(labels[:3]...), map[int]Indexers{100: indexers("l3", "l4"), 200: indexers("l5")}},
		{"many indices from the start", indexers(labels...), nil},
		{"from no index", nil, map[int]Indexers{80: indexers(labels[:5]...), 160: {NamespaceIndex: MetaNamespaceIndexFunc}}},
	}
	const steps, names, values = 400, 15, 5
	for _, tc := range tests {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", tc.name, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 7))
				ix := NewIndexer(MetaNamespaceKeyFunc, tc.initial)
				s := ix.(*cache).storage
				model := map[string]*corev1.Pod{}
				randPod := func() *corev1.Pod {
					var kv []string
					for _, l := range labels {
						// Up to 7 values out of 5: duplicates are common.
						n := r.IntN(8)
						vs := make([]string, n)
						for i := range vs {
							vs[i] = fmt.Sprint("v", r.IntN(values))
						}
						if n > 0 {
							kv = append(kv, l, strings.Join(vs, "."))
						}
					}
					return newPod(fmt.Sprint("ns", r.IntN(2)), fmt.Sprint("p", r.IntN(names)), kv...)
				}
				extraValues := []string{"absent"}
				maxRefs, maxIndicesUpserted := 0, 0
				for step := 0; step < steps; step++ {
					if add, ok := tc.added[step]; ok {
						if err := ix.AddIndexers(add); err != nil {
							t.Fatalf("step %d: %v", step, err)
						}
						checkIndexer(t, ix)
						checkIndexerAgainstModel(t, ix, model, randPod(), extraValues)
					}
					// The operation computes every index's values.
					maxIndicesUpserted = max(maxIndicesUpserted, len(ix.GetIndexers()))
					if err := randomIndexerOp(r, ix, model, randPod, opMix{add: 6, update: 6, del: 6, replace: 2, replaceMax: names}); err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
					checkIndexer(t, ix)
					checkIndexerAgainstModel(t, ix, model, randPod(), extraValues)
					s.lock.RLock()
					for _, it := range s.items {
						maxRefs = max(maxRefs, len(s.appendRefs(nil, it)))
					}
					s.lock.RUnlock()
					checkKeysAgainstModel(t, step, ix, model)
				}
				// The paths this test is for were reached.
				if maxRefs <= 8 {
					t.Errorf("no item had more than 8 refs (max %d)", maxRefs)
				}
				if maxIndicesUpserted <= maxInlineIndices {
					t.Errorf("never more than %d indices (max %d)", maxInlineIndices, maxIndicesUpserted)
				}
			})
		}
	}
}

func TestKeySetShrinks(t *testing.T) {
	ix := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = newPod("v", fmt.Sprint(i))
		if err := ix.Add(pods[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 995; i++ {
		if err := ix.Delete(pods[i]); err != nil {
			t.Fatal(err)
		}
	}
	checkIndexer(t, ix)
	set := ix.(*cache).storage.maps[0]["v"]
	if set.Len() != 5 || cap(set.items) > 64 {
		t.Fatalf("len %d cap %d", set.Len(), cap(set.items))
	}
	for i := 995; i < 1000; i++ {
		if !set.Has("v/" + fmt.Sprint(i)) {
			t.Fatalf("lost %d", i)
		}
	}
	for i := 995; i < 1000; i++ {
		if err := ix.Delete(pods[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := ix.(*cache).storage.maps[0]["v"]; ok {
		t.Fatal("empty set kept")
	}
}

// BenchmarkIndexerByIndex: 100k pods in 100 namespaces, namespace lookups.
func BenchmarkIndexerByIndex(b *testing.B) {
	const pods, namespaces = 100_000, 100
	ix := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	nsNames := make([]string, namespaces)
	for i := range nsNames {
		nsNames[i] = fmt.Sprintf("ns-%d", i)
	}
	for i := 0; i < pods; i++ {
		if err := ix.Add(newPod(nsNames[i%namespaces], fmt.Sprintf("pod-%d", i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		objs, err := ix.ByIndex(NamespaceIndex, nsNames[i%namespaces])
		if err != nil || len(objs) != pods/namespaces {
			b.Fatalf("got %d objects, %v", len(objs), err)
		}
	}
}
