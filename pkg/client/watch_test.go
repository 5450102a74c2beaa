package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestWatchStreamBrokenMidwayEndsQuietly: a watch stream that breaks
// mid-event (truncated, or the connection dropped) closes the result
// channel without an ERROR event, so that the caller re-watches from the
// last resourceVersion instead of treating it as a server error; data that
// cannot be decoded is still reported.
func TestWatchStreamBrokenMidwayEndsQuietly(t *testing.T) {
	const first = `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"}}}` + "\n"
	for name, tc := range map[string]struct {
		tail      func(w http.ResponseWriter)
		wantError bool
	}{
		"truncated event": {tail: func(w http.ResponseWriter) { w.Write([]byte(`{"type":"ADDED","obj`)) }},
		"dropped connection": {tail: func(w http.ResponseWriter) {
			w.Write([]byte(`{"type":"ADDED","obj`))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}},
		"garbage": {tail: func(w http.ResponseWriter) { w.Write([]byte("not json\n")) }, wantError: true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(first))
				w.(http.Flusher).Flush()
				tc.tail(w)
			}))
			defer srv.Close()
			c, err := New(&Config{Host: srv.URL, QPS: -1})
			if err != nil {
				t.Fatal(err)
			}
			w, err := For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Watch(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var got []watch.EventType
			timeout := time.After(10 * time.Second)
			for done := false; !done; {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						done = true
						break
					}
					got = append(got, ev.Type)
				case <-timeout:
					t.Fatal("watch did not end")
				}
			}
			want := []watch.EventType{watch.Added}
			if tc.wantError {
				want = append(want, watch.Error)
			}
			if len(got) != len(want) || got[0] != want[0] || (len(want) == 2 && got[1] != want[1]) {
				t.Fatalf("events %v, want %v", got, want)
			}
		})
	}
}
