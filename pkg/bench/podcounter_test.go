package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The pod counter survives the API server dropping its watch: it watches
// again from the last resourceVersion, lists again when that is gone
// (410), and counts each pod once.
func TestPodCounterWatchesAgain(t *testing.T) {
	var mu sync.Mutex
	var watches []string // resourceVersions asked for
	lists := 0
	added := func(w http.ResponseWriter, name, rv string) {
		fmt.Fprintf(w, `{"type":"ADDED","object":{"metadata":{"name":%q,"resourceVersion":%q}}}`+"\n", name, rv)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Query().Get("watch") != "true" {
			lists++
			if lists == 1 {
				fmt.Fprint(w, `{"metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"p0"}}]}`)
				return
			}
			fmt.Fprint(w, `{"metadata":{"resourceVersion":"20"},"items":[{"metadata":{"name":"p0"}},{"metadata":{"name":"p1"}},{"metadata":{"name":"p2"}},{"metadata":{"name":"p3"}}]}`)
			return
		}
		rv := r.URL.Query().Get("resourceVersion")
		watches = append(watches, rv)
		switch rv {
		case "10": // two pods, then the server drops the watcher
			added(w, "p1", "11")
			added(w, "p2", "12")
		case "12":
			fmt.Fprint(w, `{"type":"ERROR","object":{"kind":"Status","status":"Failure","reason":"Expired","code":410}}`+"\n")
		case "20": // p3 again (already listed), then p4; stays open
			added(w, "p3", "21")
			added(w, "p4", "22")
			w.(http.Flusher).Flush()
			mu.Unlock()
			<-r.Context().Done()
			mu.Lock()
		default:
			http.Error(w, "unexpected resourceVersion "+rv, http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	c := &Client{URL: srv.URL, HTTP: srv.Client()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := watchPodAdds(ctx, c, "ns")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.n.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.stop()
	if got := p.n.Load(); got != 5 {
		t.Errorf("counted %d pods, want 5 (p0…p4)", got)
	}
	p.mu.Lock()
	if p.err != nil {
		t.Errorf("error %v", p.err)
	}
	p.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"10", "12", "20"}; fmt.Sprint(watches) != fmt.Sprint(want) || lists != 2 {
		t.Errorf("watches from %v and %d lists, want %v and 2", watches, lists, want)
	}
	if got := p.rewatches.Load(); got != 2 {
		t.Errorf("rewatches %d, want 2", got)
	}
}
