package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// A watch from RV N delivers every later change exactly once, in revision
// order, whether it is opened before the writes or after them.
func TestSemanticsWatchEveryChangeOnceInOrder(t *testing.T) {
	c := start(t)
	ns := c.namespace("watch-order")
	base := "/api/v1/namespaces/" + ns + "/configmaps"

	var list corev1.ConfigMapList
	c.call(http.MethodGet, base, nil, http.StatusOK, &list)
	from := list.ResourceVersion
	path := base + "?watch=true&resourceVersion=" + from
	early := c.watch(path) // opened before the writes

	const writers, updates = 4, 3
	type write struct{ typ, name string }
	var mu sync.Mutex
	wantRV := map[int64]write{} // rv -> the write that produced it
	var wg sync.WaitGroup
	errs := make(chan string, writers*10)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := fmt.Sprintf("w%d", i)
			record := func(typ string, data []byte) {
				var m struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				}
				if err := json.Unmarshal(data, &m); err != nil || m.Metadata.ResourceVersion == "" {
					errs <- fmt.Sprintf("%s %s: no resourceVersion in %s", typ, name, data)
					return
				}
				var rv int64
				fmt.Sscan(m.Metadata.ResourceVersion, &rv)
				mu.Lock()
				wantRV[rv] = write{typ, name}
				mu.Unlock()
			}
			code, _, data := doWith(t, c.hc, c.env.URL, http.MethodPost, base, configMap(name, nil, map[string]string{"n": "0"}), "", "")
			if code != http.StatusCreated {
				errs <- fmt.Sprintf("create %s: %d %s", name, code, data)
				return
			}
			record("ADDED", data)
			for u := 1; u <= updates; u++ {
				code, _, data := doWith(t, c.hc, c.env.URL, http.MethodPut, base+"/"+name, configMap(name, nil, map[string]string{"n": fmt.Sprint(u)}), "", "")
				if code != http.StatusOK {
					errs <- fmt.Sprintf("update %s: %d %s", name, code, data)
					return
				}
				record("MODIFIED", data)
			}
			code, _, data = doWith(t, c.hc, c.env.URL, http.MethodDelete, base+"/"+name, nil, "", "")
			if code != http.StatusOK {
				errs <- fmt.Sprintf("delete %s: %d %s", name, code, data)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	// A marker write ends the expected stream.
	c.call(http.MethodPost, base, configMap("marker", nil, nil), http.StatusCreated, nil)
	late := c.watch(path) // opened after the writes, from the same RV

	for _, tc := range []struct {
		name string
		w    *watcher
	}{{"opened before the writes", early}, {"opened after the writes", late}} {
		t.Run(tc.name, func(t *testing.T) {
			evs := tc.w.on(t).until(func(ev watchEvent) bool { return metaOf(t, ev.Object).Name == "marker" })
			evs = evs[:len(evs)-1]
			if len(evs) != writers*(updates+2) {
				t.Errorf("got %d events, want %d", len(evs), writers*(updates+2))
			}
			var last int64
			seen := map[int64]bool{}
			perObject := map[string][]string{}
			for _, ev := range evs {
				m := metaOf(t, ev.Object)
				rv := rvInt(t, m.ResourceVersion)
				if rv <= last {
					t.Errorf("event %s %s at rv %d after rv %d: not ascending", ev.Type, m.Name, rv, last)
				}
				last = rv
				if seen[rv] {
					t.Errorf("rv %d delivered twice", rv)
				}
				seen[rv] = true
				perObject[m.Name] = append(perObject[m.Name], ev.Type)
				if w, ok := wantRV[rv]; ok && (w.typ != ev.Type || w.name != m.Name) {
					t.Errorf("rv %d: event %s %s, but the write at that rv was %s %s", rv, ev.Type, m.Name, w.typ, w.name)
				}
			}
			for rv, w := range wantRV {
				if !seen[rv] {
					t.Errorf("write %s %s at rv %d never delivered", w.typ, w.name, rv)
				}
			}
			want := []string{"ADDED"}
			for u := 0; u < updates; u++ {
				want = append(want, "MODIFIED")
			}
			want = append(want, "DELETED")
			for i := 0; i < writers; i++ {
				name := fmt.Sprintf("w%d", i)
				if got := strings.Join(perObject[name], ","); got != strings.Join(want, ",") {
					t.Errorf("%s: events %s, want %s", name, got, strings.Join(want, ","))
				}
			}
		})
	}
}

// sendInitialEvents streams the current state as ADDED events and ends it
// with a bookmark annotated k8s.io/initial-events-end.
func TestSemanticsWatchSendInitialEvents(t *testing.T) {
	c := start(t)
	ns := c.namespace("initial")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	for _, n := range []string{"a", "b", "c"} {
		c.call(http.MethodPost, base, configMap(n, map[string]string{"set": "x"}, nil), http.StatusCreated, nil)
	}
	w := c.watch(base + "?watch=true&labelSelector=set%3Dx&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	if w.code != http.StatusOK {
		t.Fatalf("watch status %d: %s", w.code, w.body)
	}
	names := map[string]bool{}
	var bookmark watchEvent
	for {
		ev := w.mustNext()
		if ev.Type == "BOOKMARK" {
			bookmark = ev
			break
		}
		if ev.Type != "ADDED" {
			t.Fatalf("initial event %s, want ADDED: %s", ev.Type, ev.Object)
		}
		names[metaOf(t, ev.Object).Name] = true
	}
	if len(names) != 3 || !names["a"] || !names["b"] || !names["c"] {
		t.Errorf("initial ADDED events for %v, want a, b, c", names)
	}
	bm := metaOf(t, bookmark.Object)
	if bm.Annotations["k8s.io/initial-events-end"] != "true" {
		t.Errorf("bookmark annotations = %v, want k8s.io/initial-events-end: \"true\"", bm.Annotations)
	}
	rvInt(t, bm.ResourceVersion)
	var kind struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	json.Unmarshal(bookmark.Object, &kind)
	if kind.Kind != "ConfigMap" || kind.APIVersion != "v1" {
		t.Errorf("bookmark object kind %s/%s, want v1 ConfigMap", kind.APIVersion, kind.Kind)
	}
	// Later changes follow the bookmark.
	c.call(http.MethodPost, base, configMap("d", map[string]string{"set": "x"}, nil), http.StatusCreated, nil)
	w.expectEvent("ADDED", "d")
}

// With allowWatchBookmarks the server sends periodic BOOKMARK events
// carrying only a resourceVersion; without it, none.
func TestSemanticsWatchBookmarks(t *testing.T) {
	fake := clock.NewFake(time.Now())
	c := start(t, testenv.Config{Clock: fake})
	ns := c.namespace("bookmarks")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	var cm corev1.ConfigMap
	c.call(http.MethodPost, base, configMap("a", nil, nil), http.StatusCreated, &cm)

	with := c.watch(base + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + cm.ResourceVersion)
	without := c.watch(base + "?watch=true&resourceVersion=" + cm.ResourceVersion)

	// Step the clock past the bookmark interval until a bookmark arrives.
	var bm watchEvent
	deadline := time.Now().Add(waitTimeout)
	for bm.Type == "" {
		if time.Now().After(deadline) {
			t.Fatal("no BOOKMARK event after stepping the clock")
		}
		fake.Step(2 * time.Minute)
		select {
		case ev := <-with.events:
			if ev.Type != "BOOKMARK" {
				t.Fatalf("unexpected %s event: %s", ev.Type, ev.Object)
			}
			bm = ev
		case <-time.After(100 * time.Millisecond):
		}
	}
	m := metaOf(t, bm.Object)
	if rvInt(t, m.ResourceVersion) < rvInt(t, cm.ResourceVersion) {
		t.Errorf("bookmark rv %s older than %s", m.ResourceVersion, cm.ResourceVersion)
	}
	if m.Name != "" || m.Annotations["k8s.io/initial-events-end"] != "" {
		t.Errorf("periodic bookmark carries more than a resourceVersion: %s", bm.Object)
	}
	// The watcher without bookmarks sees the next real change first.
	c.call(http.MethodPost, base, configMap("b", nil, nil), http.StatusCreated, nil)
	ev := without.mustNext()
	if ev.Type != "ADDED" || metaOf(t, ev.Object).Name != "b" {
		t.Errorf("watch without allowWatchBookmarks got %s %s first, want ADDED b", ev.Type, ev.Object)
	}
}

// A watch with a label selector sees an object that stops matching as
// DELETED and one that starts matching as ADDED.
func TestSemanticsWatchLabelSelectorTransitions(t *testing.T) {
	c := start(t)
	ns := c.namespace("selector-watch")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	var cm corev1.ConfigMap
	c.call(http.MethodPost, base, configMap("x", map[string]string{"app": "a"}, nil), http.StatusCreated, &cm)
	w := c.watch(base + "?watch=true&labelSelector=app%3Da&resourceVersion=" + cm.ResourceVersion)

	steps := []struct {
		label   string
		wantTyp string
	}{
		{"b", "DELETED"}, // stops matching
		{"a", "ADDED"},   // matches again
		{"a", "MODIFIED"},
	}
	for i, s := range steps {
		var cur corev1.ConfigMap
		c.call(http.MethodGet, base+"/x", nil, http.StatusOK, &cur)
		cur.Labels["app"] = s.label
		cur.Data = map[string]string{"step": fmt.Sprint(i)}
		var out corev1.ConfigMap
		c.call(http.MethodPut, base+"/x", cur, http.StatusOK, &out)
		ev := w.expectEvent(s.wantTyp, "x")
		m := metaOf(t, ev.Object)
		if m.ResourceVersion != out.ResourceVersion {
			t.Errorf("step %d: event rv %s, want the update's %s", i, m.ResourceVersion, out.ResourceVersion)
		}
		// As upstream's cacher: the DELETED event of an object leaving the
		// selector carries its previous content at the update's revision.
		if s.wantTyp == "DELETED" && m.Labels["app"] != "a" {
			t.Errorf("DELETED on selector exit should carry the previous object, labels %v", m.Labels)
		}
	}
	// A non-matching object never shows up.
	c.call(http.MethodPost, base, configMap("other", map[string]string{"app": "z"}, nil), http.StatusCreated, nil)
	c.call(http.MethodPost, base, configMap("marker", map[string]string{"app": "a"}, nil), http.StatusCreated, nil)
	w.expectEvent("ADDED", "marker")
}

// A watch from a resourceVersion older than the watch window is 410 Gone
// (Expired), either as the HTTP answer or as an ERROR event.
func TestSemanticsWatchTooOldResourceVersion(t *testing.T) {
	c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) {
		// Advance and compact storage before the server starts so that its
		// watch window begins well after revision 2.
		ctx := context.Background()
		var rev int64
		for i := 0; i < 50; i++ {
			r, err := cfg.KV.Create(ctx, fmt.Sprintf("/skiff-test/filler/%d", i), []byte("x"))
			if err != nil {
				t.Fatalf("filler write: %v", err)
			}
			rev = r
		}
		if err := cfg.KV.Compact(ctx, rev); err != nil {
			t.Fatalf("compact: %v", err)
		}
	}})
	for _, path := range []string{
		"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2",
		"/api/v1/watch/namespaces/default/configmaps?resourceVersion=2",
	} {
		t.Run(path, func(t *testing.T) {
			c := c.on(t)
			w := c.watch(path)
			var st metav1.Status
			if w.code == http.StatusOK {
				ev := w.mustNext()
				if ev.Type != "ERROR" {
					t.Fatalf("first event %s, want ERROR: %s", ev.Type, ev.Object)
				}
				if err := json.Unmarshal(ev.Object, &st); err != nil {
					t.Fatal(err)
				}
				if _, ok := w.next(); ok {
					t.Errorf("the watch continued after the ERROR event")
				}
			} else {
				st = expectStatus(t, w.code, w.body, http.StatusGone, metav1.StatusReasonExpired, "")
			}
			if st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired {
				t.Errorf("status code %d reason %q, want 410 Expired", st.Code, st.Reason)
			}
			if !strings.HasPrefix(st.Message, "too old resource version: 2 (") {
				t.Errorf("message %q, want \"too old resource version: 2 (N)\"", st.Message)
			}
		})
	}
}

// timeoutSeconds ends the stream cleanly.
func TestSemanticsWatchTimeoutSeconds(t *testing.T) {
	c := start(t)
	startT := time.Now()
	w := c.watch("/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1")
	if w.code != http.StatusOK {
		t.Fatalf("watch status %d: %s", w.code, w.body)
	}
	for {
		ev, ok := w.next()
		if !ok {
			break
		}
		if ev.Type == "ERROR" {
			t.Errorf("timeout ended with an ERROR event: %s", ev.Object)
		}
	}
	if d := time.Since(startT); d < 900*time.Millisecond {
		t.Errorf("watch ended after %v, before its timeout", d)
	}
}

// The watch verb also works through the legacy /watch/ path and for a
// single object (fieldSelector=metadata.name).
func TestSemanticsWatchSingleObject(t *testing.T) {
	c := start(t)
	ns := c.namespace("single")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	var a corev1.ConfigMap
	c.call(http.MethodPost, base, configMap("a", nil, nil), http.StatusCreated, &a)
	tests := []struct{ name, path string }{
		{"fieldSelector", base + "?watch=true&fieldSelector=metadata.name%3Db&resourceVersion=" + a.ResourceVersion},
		{"legacy watch path", "/api/v1/watch/namespaces/" + ns + "/configmaps/b?resourceVersion=" + a.ResourceVersion},
	}
	var ws []*watcher
	for _, tt := range tests {
		ws = append(ws, c.watch(tt.path))
	}
	c.call(http.MethodPost, base, configMap("c", nil, nil), http.StatusCreated, nil)
	c.call(http.MethodPost, base, configMap("b", nil, nil), http.StatusCreated, nil)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws[i].on(t).expectEvent("ADDED", "b")
		})
	}
}
