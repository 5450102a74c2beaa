package storagetest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// NewKV returns a fresh, empty backend for one test.
type NewKV func(t *testing.T) storage.KV

const prefix = "/registry/pods/"

func newStore(t *testing.T, newKV NewKV) (*storage.Store, storage.KV) {
	kv := newKV(t)
	t.Cleanup(func() { kv.Close() })
	return storage.NewStore(storage.StoreConfig{
		KV:      kv,
		Codec:   storage.JSONCodec{},
		NewFunc: func() runtime.Object { return &corev1.Pod{} },
		Prefix:  prefix,
	}), kv
}

func pod(ns, name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: lbls["node"]},
	}
}

func key(ns, name string) string { return prefix + ns + "/" + name }

func podAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	p := obj.(*corev1.Pod)
	return labels.Set(p.Labels), fields.Set{
		"metadata.name":      p.Name,
		"metadata.namespace": p.Namespace,
		"spec.nodeName":      p.Spec.NodeName,
	}, nil
}

func mustCreate(t *testing.T, s *storage.Store, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	out := &corev1.Pod{}
	if err := s.Create(context.Background(), key(p.Namespace, p.Name), p, out); err != nil {
		t.Fatalf("create %s: %v", p.Name, err)
	}
	return out
}

func rvOf(t *testing.T, obj metav1.Object) int64 {
	t.Helper()
	n, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("bad resourceVersion %q", obj.GetResourceVersion())
	}
	return n
}

// Run runs the whole suite against a backend.
func Run(t *testing.T, newKV NewKV) {
	t.Run("CreateGet", func(t *testing.T) { testCreateGet(t, newKV) })
	t.Run("GuaranteedUpdate", func(t *testing.T) { testGuaranteedUpdate(t, newKV) })
	t.Run("ConcurrentUpdates", func(t *testing.T) { testConcurrentUpdates(t, newKV) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, newKV) })
	t.Run("List", func(t *testing.T) { testList(t, newKV) })
	t.Run("ListPaging", func(t *testing.T) { testListPaging(t, newKV) })
	t.Run("Watch", func(t *testing.T) { testWatch(t, newKV) })
	t.Run("WatchPredicate", func(t *testing.T) { testWatchPredicate(t, newKV) })
	t.Run("WatchCompacted", func(t *testing.T) { testWatchCompacted(t, newKV) })
	t.Run("WatchBookmarks", func(t *testing.T) { testWatchBookmarks(t, newKV) })
	t.Run("WatchConcurrentWriters", func(t *testing.T) { testWatchConcurrentWriters(t, newKV) })
}

func testCreateGet(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx := context.Background()
	created := mustCreate(t, s, pod("ns", "a", nil))
	if created.ResourceVersion == "" {
		t.Fatal("created object has no resourceVersion")
	}
	got := &corev1.Pod{}
	if err := s.Get(ctx, key("ns", "a"), storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != created.ResourceVersion || got.Name != "a" || got.UID != "uid-a" {
		t.Fatalf("got %s/%s rv %s, want a rv %s", got.Namespace, got.Name, got.ResourceVersion, created.ResourceVersion)
	}
	cases := []struct {
		name  string
		run   func() error
		check func(error) bool
	}{
		{"create existing", func() error { return s.Create(ctx, key("ns", "a"), pod("ns", "a", nil), &corev1.Pod{}) }, storage.IsExist},
		{"create with resourceVersion", func() error {
			p := pod("ns", "b", nil)
			p.ResourceVersion = "5"
			return s.Create(ctx, key("ns", "b"), p, &corev1.Pod{})
		}, storage.IsInvalidObj},
		{"get missing", func() error { return s.Get(ctx, key("ns", "zz"), storage.GetOptions{}, &corev1.Pod{}) }, storage.IsNotFound},
		{"get missing ignored", func() error {
			return s.Get(ctx, key("ns", "zz"), storage.GetOptions{IgnoreNotFound: true}, &corev1.Pod{})
		}, func(err error) bool { return err == nil }},
		{"get too large rv", func() error {
			return s.Get(ctx, key("ns", "a"), storage.GetOptions{ResourceVersion: "999999"}, &corev1.Pod{})
		}, apierrors.IsTimeout},
	}
	for _, c := range cases {
		if err := c.run(); !c.check(err) {
			t.Errorf("%s: unexpected error %v", c.name, err)
		}
	}
}

func setLabel(k, v string) storage.UpdateFunc {
	return func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[k] = v
		return p, nil
	}
}

func testGuaranteedUpdate(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx := context.Background()
	created := mustCreate(t, s, pod("ns", "a", nil))
	uid := types.UID("uid-a")
	otherUID := types.UID("other")
	staleRV := created.ResourceVersion

	out := &corev1.Pod{}
	if err := s.GuaranteedUpdate(ctx, key("ns", "a"), out, false, nil, setLabel("x", "1"), nil); err != nil {
		t.Fatal(err)
	}
	if rvOf(t, out) <= rvOf(t, created) || out.Labels["x"] != "1" {
		t.Fatalf("update did not apply: rv %s labels %v", out.ResourceVersion, out.Labels)
	}
	// A no-op update writes nothing and keeps the resourceVersion.
	same := &corev1.Pod{}
	if err := s.GuaranteedUpdate(ctx, key("ns", "a"), same, false, nil, setLabel("x", "1"), nil); err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != out.ResourceVersion {
		t.Fatalf("no-op update changed rv %s -> %s", out.ResourceVersion, same.ResourceVersion)
	}
	// A stale cached object is detected and the update retried on fresh data.
	stale := created.DeepCopy()
	fresh := &corev1.Pod{}
	if err := s.GuaranteedUpdate(ctx, key("ns", "a"), fresh, false, nil, setLabel("y", "2"), stale); err != nil {
		t.Fatal(err)
	}
	if fresh.Labels["x"] != "1" || fresh.Labels["y"] != "2" {
		t.Fatalf("update from stale cache lost data: %v", fresh.Labels)
	}

	cases := []struct {
		name   string
		key    string
		ignore bool
		pre    *storage.Preconditions
		fn     storage.UpdateFunc
		check  func(error) bool
	}{
		{"uid precondition ok", key("ns", "a"), false, &storage.Preconditions{UID: &uid}, setLabel("z", "3"), func(err error) bool { return err == nil }},
		{"uid precondition fails", key("ns", "a"), false, &storage.Preconditions{UID: &otherUID}, setLabel("z", "4"), storage.IsConflict},
		{"rv precondition fails", key("ns", "a"), false, &storage.Preconditions{ResourceVersion: &staleRV}, setLabel("z", "5"), storage.IsConflict},
		{"missing", key("ns", "nope"), false, nil, setLabel("z", "6"), storage.IsNotFound},
		{"update func error", key("ns", "a"), false, nil, func(runtime.Object, storage.ResponseMeta) (runtime.Object, error) {
			return nil, apierrors.NewBadRequest("no")
		}, apierrors.IsBadRequest},
		{"missing with ignoreNotFound creates", key("ns", "new"), true, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, error) {
			return pod("ns", "new", nil), nil
		}, func(err error) bool { return err == nil }},
	}
	for _, c := range cases {
		err := s.GuaranteedUpdate(ctx, c.key, &corev1.Pod{}, c.ignore, c.pre, c.fn, nil)
		if !c.check(err) {
			t.Errorf("%s: unexpected error %v", c.name, err)
		}
	}
	got := &corev1.Pod{}
	if err := s.Get(ctx, key("ns", "a"), storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["z"] != "3" {
		t.Fatalf("failed preconditions must not write: labels %v", got.Labels)
	}
}

func testConcurrentUpdates(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx := context.Background()
	mustCreate(t, s, pod("ns", "counter", nil))
	const workers, each = 8, 10
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.GuaranteedUpdate(ctx, key("ns", "counter"), &corev1.Pod{}, false, nil,
					func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, error) {
						p := in.(*corev1.Pod)
						n, _ := strconv.Atoi(p.Annotations["n"])
						p.Annotations = map[string]string{"n": strconv.Itoa(n + 1)}
						return p, nil
					}, nil)
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got := &corev1.Pod{}
	if err := s.Get(ctx, key("ns", "counter"), storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations["n"] != strconv.Itoa(workers*each) {
		t.Fatalf("lost updates: counter %s, want %d", got.Annotations["n"], workers*each)
	}
}

func testDelete(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx := context.Background()
	created := mustCreate(t, s, pod("ns", "a", nil))
	otherUID := types.UID("other")
	stale := "1"
	cases := []struct {
		name     string
		pre      *storage.Preconditions
		validate storage.ValidateObjectFunc
		check    func(error) bool
	}{
		{"uid precondition fails", &storage.Preconditions{UID: &otherUID}, nil, storage.IsConflict},
		{"rv precondition fails", &storage.Preconditions{ResourceVersion: &stale}, nil, storage.IsConflict},
		{"validation refuses", nil, func(context.Context, runtime.Object) error { return apierrors.NewBadRequest("keep") }, apierrors.IsBadRequest},
		{"deletes", &storage.Preconditions{ResourceVersion: &created.ResourceVersion}, nil, func(err error) bool { return err == nil }},
		{"already gone", nil, nil, storage.IsNotFound},
	}
	for _, c := range cases {
		out := &corev1.Pod{}
		err := s.Delete(ctx, key("ns", "a"), out, c.pre, c.validate, nil)
		if !c.check(err) {
			t.Errorf("%s: unexpected error %v", c.name, err)
		}
		if err == nil && out.Name != "a" {
			t.Errorf("%s: deleted object not returned: %+v", c.name, out.ObjectMeta)
		}
	}
}

func names(l *corev1.PodList) []string {
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func testList(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx := context.Background()
	mustCreate(t, s, pod("a", "p1", map[string]string{"app": "web", "node": "n1"}))
	mustCreate(t, s, pod("a", "p2", map[string]string{"app": "db", "node": "n2"}))
	mustCreate(t, s, pod("b", "p3", map[string]string{"app": "web", "tier": "x", "node": "n1"}))
	mustCreate(t, s, pod("ab", "p4", map[string]string{"node": "n2"}))

	sel := func(s string) labels.Selector {
		l, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	fsel := func(s string) fields.Selector {
		f, err := fields.ParseSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cases := []struct {
		name string
		key  string
		pred storage.SelectionPredicate
		want []string
	}{
		{"all", prefix, storage.SelectionPredicate{}, []string{"a/p1", "a/p2", "ab/p4", "b/p3"}},
		{"namespace a only", prefix + "a", storage.SelectionPredicate{}, []string{"a/p1", "a/p2"}},
		{"label equals", prefix, storage.SelectionPredicate{Label: sel("app=web")}, []string{"a/p1", "b/p3"}},
		{"label not equals", prefix, storage.SelectionPredicate{Label: sel("app!=web")}, []string{"a/p2", "ab/p4"}},
		{"label in", prefix, storage.SelectionPredicate{Label: sel("app in (db,web)")}, []string{"a/p1", "a/p2", "b/p3"}},
		{"label notin", prefix, storage.SelectionPredicate{Label: sel("app notin (web)")}, []string{"a/p2", "ab/p4"}},
		{"label exists", prefix, storage.SelectionPredicate{Label: sel("tier")}, []string{"b/p3"}},
		{"label not exists", prefix, storage.SelectionPredicate{Label: sel("!app")}, []string{"ab/p4"}},
		{"field nodeName", prefix, storage.SelectionPredicate{Field: fsel("spec.nodeName=n2"), GetAttrs: podAttrs}, []string{"a/p2", "ab/p4"}},
		{"field and label", prefix, storage.SelectionPredicate{Field: fsel("spec.nodeName=n1"), Label: sel("tier"), GetAttrs: podAttrs}, []string{"b/p3"}},
		{"field name", prefix, storage.SelectionPredicate{Field: fsel("metadata.name=p2")}, []string{"a/p2"}},
	}
	for _, c := range cases {
		l := &corev1.PodList{}
		if err := s.GetList(ctx, c.key, storage.ListOptions{Recursive: true, Predicate: c.pred}, l); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fmt.Sprint(names(l)) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, names(l), c.want)
		}
		if l.ResourceVersion == "" {
			t.Errorf("%s: list has no resourceVersion", c.name)
		}
	}
	// A single-key list.
	l := &corev1.PodList{}
	if err := s.GetList(ctx, key("a", "p1"), storage.ListOptions{}, l); err != nil || len(l.Items) != 1 {
		t.Fatalf("single key list: %v %v", err, names(l))
	}
}

func testListPaging(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx := context.Background()
	const n = 25
	for i := 0; i < n; i++ {
		lbl := map[string]string{"parity": strconv.Itoa(i % 2)}
		mustCreate(t, s, pod("ns", fmt.Sprintf("p%02d", i), lbl))
	}
	collect := func(pred storage.SelectionPredicate, mutate func(page int)) ([]string, []string) {
		var all, rvs []string
		cont := ""
		for page := 0; ; page++ {
			p := pred
			p.Continue = cont
			l := &corev1.PodList{}
			if err := s.GetList(ctx, prefix, storage.ListOptions{Recursive: true, Predicate: p}, l); err != nil {
				t.Fatal(err)
			}
			if int64(len(l.Items)) > p.Limit {
				t.Fatalf("page of %d over limit %d", len(l.Items), p.Limit)
			}
			all = append(all, names(l)...)
			rvs = append(rvs, l.ResourceVersion)
			if l.Continue == "" {
				return all, rvs
			}
			if l.RemainingItemCount != nil && pred.Empty() && *l.RemainingItemCount != int64(n-len(all)) {
				t.Fatalf("remainingItemCount %d, want %d", *l.RemainingItemCount, n-len(all))
			}
			if mutate != nil {
				mutate(page)
			}
			cont = l.Continue
		}
	}
	all, rvs := collect(storage.SelectionPredicate{Limit: 7}, nil)
	if len(all) != n {
		t.Fatalf("paged list returned %d items, want %d: %v", len(all), n, all)
	}
	seen := map[string]bool{}
	for _, k := range all {
		if seen[k] {
			t.Fatalf("item %s returned twice", k)
		}
		seen[k] = true
	}
	for _, rv := range rvs {
		if rv != rvs[0] {
			t.Fatalf("pages at different revisions %v", rvs)
		}
	}
	// Filtered paging returns every match exactly once.
	odd, _ := collect(storage.SelectionPredicate{Limit: 4, Label: labels.SelectorFromSet(labels.Set{"parity": "1"})}, nil)
	if len(odd) != 12 {
		t.Fatalf("filtered paging returned %d items, want 12: %v", len(odd), odd)
	}
	// Later pages show the snapshot of the first page even when objects change.
	snapshot, _ := collect(storage.SelectionPredicate{Limit: 10}, func(page int) {
		if page == 0 {
			if err := s.Delete(ctx, key("ns", "p20"), &corev1.Pod{}, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, pod("ns", "p99", nil))
		}
	})
	if len(snapshot) != n || seen["ns/p99"] {
		t.Fatalf("paged list is not a snapshot: %v", snapshot)
	}
	// Exact resourceVersion reads the past.
	l := &corev1.PodList{}
	if err := s.GetList(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: rvs[0], ResourceVersionMatch: "Exact"}, l); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != n {
		t.Fatalf("exact read at %s saw %d items, want %d", rvs[0], len(l.Items), n)
	}
	// Bad tokens are a BadRequest.
	err := s.GetList(ctx, prefix, storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1, Continue: "garbage!"}}, &corev1.PodList{})
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("bad continue token: %v", err)
	}
}

// next reads one event or fails after a deadline.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

func expect(t *testing.T, w watch.Interface, typ watch.EventType, name string) *corev1.Pod {
	t.Helper()
	ev := next(t, w)
	p, ok := ev.Object.(*corev1.Pod)
	if ev.Type != typ || !ok || p.Name != name {
		t.Fatalf("got %s %#v, want %s %s", ev.Type, ev.Object, typ, name)
	}
	return p
}

func testWatch(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := mustCreate(t, s, pod("ns", "a", nil))
	mustCreate(t, s, pod("ns", "b", nil))

	// From a revision: only later changes, in order.
	w, err := s.Watch(ctx, prefix, storage.ListOptions{ResourceVersion: a.ResourceVersion, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expect(t, w, watch.Added, "b")
	upd := &corev1.Pod{}
	if err := s.GuaranteedUpdate(ctx, key("ns", "a"), upd, false, nil, setLabel("k", "v"), nil); err != nil {
		t.Fatal(err)
	}
	if got := expect(t, w, watch.Modified, "a"); got.ResourceVersion != upd.ResourceVersion || got.Labels["k"] != "v" {
		t.Fatalf("modified event rv %s labels %v, want rv %s", got.ResourceVersion, got.Labels, upd.ResourceVersion)
	}
	if err := s.Delete(ctx, key("ns", "a"), &corev1.Pod{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if del := expect(t, w, watch.Deleted, "a"); rvOf(t, del) <= rvOf(t, upd) {
		t.Fatalf("deleted event rv %s not after last update %s", del.ResourceVersion, upd.ResourceVersion)
	}

	// From "0": the current state as ADDED first.
	w0, err := s.Watch(ctx, prefix, storage.ListOptions{ResourceVersion: "0", Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Stop()
	expect(t, w0, watch.Added, "b")
	mustCreate(t, s, pod("ns", "c", nil))
	expect(t, w0, watch.Added, "c")

	// A single key.
	wk, err := s.Watch(ctx, key("ns", "c"), storage.ListOptions{ResourceVersion: a.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Stop()
	mustCreate(t, s, pod("ns", "cc", nil)) // shares the prefix, must not show
	if err := s.GuaranteedUpdate(ctx, key("ns", "c"), &corev1.Pod{}, false, nil, setLabel("k", "v"), nil); err != nil {
		t.Fatal(err)
	}
	expect(t, wk, watch.Added, "c")
	expect(t, wk, watch.Modified, "c")
}

func testWatchPredicate(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := mustCreate(t, s, pod("ns", "x", map[string]string{"app": "other"}))
	w, err := s.Watch(ctx, prefix, storage.ListOptions{
		ResourceVersion: start.ResourceVersion, Recursive: true,
		Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"})},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, step := range []string{"web", "web2", "web", "other"} {
		v := step
		if v == "web2" {
			// Still selected: MODIFIED.
			if err := s.GuaranteedUpdate(ctx, key("ns", "x"), &corev1.Pod{}, false, nil, setLabel("extra", "1"), nil); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := s.GuaranteedUpdate(ctx, key("ns", "x"), &corev1.Pod{}, false, nil, setLabel("app", v), nil); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, w, watch.Added, "x")    // entered the selection
	expect(t, w, watch.Modified, "x") // changed while selected
	// app=web again is a no-op write (same content), then app=other leaves.
	expect(t, w, watch.Deleted, "x")
}

func testWatchCompacted(t *testing.T, newKV NewKV) {
	s, kv := newStore(t, newKV)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := mustCreate(t, s, pod("ns", "a", nil))
	var last *corev1.Pod
	for i := 0; i < 5; i++ {
		last = mustCreate(t, s, pod("ns", fmt.Sprintf("b%d", i), nil))
	}
	if err := kv.Compact(ctx, rvOf(t, last)); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, prefix, storage.ListOptions{ResourceVersion: first.ResourceVersion, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := next(t, w)
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("want 410 Expired error event, got %s %#v", ev.Type, ev.Object)
	}
	// Lists at a compacted revision are Expired too.
	err = s.GetList(ctx, prefix, storage.ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion, ResourceVersionMatch: "Exact"}, &corev1.PodList{})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("exact list at compacted revision: %v", err)
	}
}

func testWatchBookmarks(t *testing.T, newKV NewKV) {
	s, kv := newStore(t, newKV)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mustCreate(t, s, pod("ns", "a", nil))
	yes := true
	w, err := s.Watch(ctx, prefix, storage.ListOptions{
		ResourceVersion: "", Recursive: true, SendInitialEvents: &yes, ProgressNotify: true,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expect(t, w, watch.Added, "a")
	ev := next(t, w)
	if ev.Type != watch.Bookmark {
		t.Fatalf("want initial-events-end bookmark, got %s", ev.Type)
	}
	if p := ev.Object.(*corev1.Pod); p.Annotations[storage.InitialEventsAnnotation] != "true" || p.ResourceVersion == "" {
		t.Fatalf("bad initial-events-end bookmark %+v", p.ObjectMeta)
	}
	b := mustCreate(t, s, pod("ns", "b", nil))
	expect(t, w, watch.Added, "b")
	// A progress request produces a bookmark at (at least) the current revision.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := kv.RequestProgress(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Bookmark {
				t.Fatalf("want bookmark, got %s", ev.Type)
			}
			if rvOf(t, ev.Object.(*corev1.Pod)) < rvOf(t, b) {
				t.Fatalf("bookmark rv %s before last event %s", ev.Object.(*corev1.Pod).ResourceVersion, b.ResourceVersion)
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no bookmark after progress requests")
		}
	}
}

func testWatchConcurrentWriters(t *testing.T, newKV NewKV) {
	s, _ := newStore(t, newKV)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := mustCreate(t, s, pod("ns", "start", nil))
	const watchers, writers, each = 4, 4, 25
	ws := make([]watch.Interface, watchers)
	for i := range ws {
		w, err := s.Watch(ctx, prefix, storage.ListOptions{ResourceVersion: start.ResourceVersion, Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ws[i] = w
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := pod("ns", fmt.Sprintf("w%d-%d", w, i), nil)
				if err := s.Create(ctx, key("ns", p.Name), p, &corev1.Pod{}); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 4 {
					if err := s.Delete(ctx, key("ns", p.Name), &corev1.Pod{}, nil, nil, nil); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	total := writers*each + writers*each/5
	for i, w := range ws {
		var last int64
		seen := map[string]int{}
		for n := 0; n < total; n++ {
			ev := next(t, w)
			p := ev.Object.(*corev1.Pod)
			rv := rvOf(t, p)
			if rv <= last {
				t.Fatalf("watcher %d: rv %d after %d (out of order or duplicate)", i, rv, last)
			}
			last = rv
			seen[string(ev.Type)+p.Name]++
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("watcher %d: event %s seen %d times", i, k, c)
			}
		}
	}
}
