package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// CreateResult is one create phase.
type CreateResult struct {
	Clients int `json:"clients"`
	// Identity is who created: "admin" (system:masters) or
	// "serviceaccount" (a token RBAC allows to create pods).
	Identity   string  `json:"identity,omitempty"`
	Namespace  string  `json:"namespace"`
	Requested  int     `json:"requested"`
	Created    int     `json:"created"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	BodyBytes  int     `json:"body_bytes"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"creates_per_second"`
	Latency    Latency `json:"latency"`
	CPU        CPU     `json:"cpu"`
}

// CreatePods creates pods 0..n-1 of namespace ns (which must exist) with
// the given number of concurrent clients, each sending one request at a
// time. Requests that fail are counted, not retried.
func CreatePods(ctx context.Context, c *Client, ns string, n, clients int) (CreateResult, error) {
	bodies := podBodies(ns, n)
	return createBodies(ctx, c, "/api/v1/namespaces/"+ns+"/pods", bodies, clients, CreateResult{Clients: clients, Namespace: ns})
}

func createBodies(ctx context.Context, c *Client, path string, bodies [][]byte, clients int, res CreateResult) (CreateResult, error) {
	res.Requested = len(bodies)
	if len(bodies) > 0 {
		res.BodyBytes = len(bodies[0])
	}
	clients = max(1, clients)
	var (
		next     atomic.Int64
		failures atomic.Int64
		firstErr atomic.Value
		wg       sync.WaitGroup
	)
	lat := make([][]time.Duration, clients)
	cpu0 := c.cpuNow()
	start := time.Now()
	for w := range clients {
		wg.Go(func() {
			mine := make([]time.Duration, 0, len(bodies)/clients+1)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bodies) || ctx.Err() != nil {
					break
				}
				t0 := time.Now()
				err := c.call(ctx, http.MethodPost, path, bodies[i], http.StatusCreated, nil)
				d := time.Since(t0)
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				mine = append(mine, d)
			}
			lat[w] = mine
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	res.CPU = c.cpuSince(cpu0)
	all := slices.Concat(lat...)
	res.Created = len(all)
	res.Errors = int(failures.Load())
	if s, ok := firstErr.Load().(string); ok {
		res.FirstError = s
	}
	res.Seconds = round(elapsed.Seconds(), 3)
	if elapsed > 0 {
		res.PerSecond = round(float64(res.Created)/elapsed.Seconds(), 1)
	}
	res.Latency = Summarize(all)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// ListResult is one list variant, repeated.
type ListResult struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Decode bool   `json:"decode"`
	Items  int    `json:"items,omitempty"`
	Bytes  int64  `json:"bytes"`
	// First is the first request's time, which is not in Latency.
	First   float64 `json:"first_ms"`
	Latency Latency `json:"latency"`
	// CPU is per timed request.
	CPU CPU `json:"cpu_per_request"`
}

// ListPods issues GET path once to warm up and then repeats times, each
// timed from sending the request until the last byte is read (and, with
// decode, decoded into a corev1.PodList). With wantItems >= 0 and decode,
// every list must have exactly wantItems items.
func ListPods(ctx context.Context, c *Client, name, path string, decode bool, repeats, wantItems int) (ListResult, error) {
	res := ListResult{Name: name, Path: path, Decode: decode}
	ds := make([]time.Duration, 0, repeats)
	var cpu0 cpuSnap
	for i := 0; i <= repeats; i++ {
		if i == 1 {
			cpu0 = c.cpuNow()
		}
		t0 := time.Now()
		n, items, err := listOnce(ctx, c, path, decode)
		d := time.Since(t0)
		if err != nil {
			return res, err
		}
		if decode && wantItems >= 0 && items != wantItems {
			return res, fmt.Errorf("GET %s: %d items, want %d", path, items, wantItems)
		}
		res.Bytes, res.Items = n, items
		if i == 0 {
			res.First = ms(d)
			continue
		}
		ds = append(ds, d)
	}
	if repeats > 0 {
		cpu := c.cpuSince(cpu0)
		res.CPU = CPU{Server: round(cpu.Server/float64(repeats), 3), Client: round(cpu.Client/float64(repeats), 3), Other: round(cpu.Other/float64(repeats), 3)}
	}
	res.Latency = Summarize(ds)
	return res, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func listOnce(ctx context.Context, c *Client, path string, decode bool) (bytes int64, items int, err error) {
	resp, err := c.Do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, 0, &StatusError{Method: "GET", Path: path, Code: resp.StatusCode, Body: string(b)}
	}
	cr := &countingReader{r: resp.Body}
	if !decode {
		_, err = io.Copy(io.Discard, cr)
		return cr.n, 0, err
	}
	var list corev1.PodList
	if err := json.NewDecoder(cr).Decode(&list); err != nil {
		return cr.n, 0, err
	}
	_, err = io.Copy(io.Discard, cr)
	return cr.n, len(list.Items), err
}

// WatchResult is the watch fan-out measurement.
type WatchResult struct {
	Watchers         int `json:"watchers"`
	Writers          int `json:"writers"`
	EventsPerWatcher int `json:"events_per_watcher"`
	// Delivered counts the benchmark's events received by all watchers.
	Delivered int64 `json:"delivered"`
	// Seconds runs from the first write until every watcher has received
	// every event.
	Seconds         float64 `json:"seconds"`
	EventsPerSecond float64 `json:"events_per_second"`
	// WriteSeconds is how long the writers took; WritesPerSecond the
	// resulting create rate.
	WriteSeconds    float64 `json:"write_seconds"`
	WritesPerSecond float64 `json:"writes_per_second"`
	// Lag is, per delivered event, the time from the start of the write
	// that caused it until a watcher decoded it.
	Lag Latency `json:"lag"`
	// Verified is true when every watcher received every event exactly
	// once, in resourceVersion order.
	Verified bool     `json:"verified"`
	Problems []string `json:"problems,omitempty"`
	// CPU is from the first write until every event was delivered.
	CPU CPU `json:"cpu"`
}

type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

type received struct {
	name string
	rv   uint64
	at   time.Time
}

type written struct {
	name  string
	rv    uint64
	start time.Time
}

// WatchFanout opens watchers watches of the ConfigMaps in namespace ns
// (which must exist) from its current resourceVersion, then has writers
// goroutines create events ConfigMaps between them, and measures how fast
// all watchers receive all events. Each watcher decodes its stream with
// its own streaming JSON decoder. Other ConfigMaps (kube-root-ca.crt) are
// ignored. A timeout <= 0 means two minutes.
func WatchFanout(ctx context.Context, c *Client, ns string, watchers, events, writers int, timeout time.Duration) (WatchResult, error) {
	writers = max(1, min(writers, max(events, 1)))
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	res := WatchResult{Watchers: watchers, Writers: writers, EventsPerWatcher: events}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	if err := c.call(ctx, http.MethodGet, base, nil, http.StatusOK, &list); err != nil {
		return res, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	path := base + "?" + url.Values{"watch": {"true"}, "resourceVersion": {list.Metadata.ResourceVersion}}.Encode()

	got := make([][]received, watchers)
	problems := make([]string, watchers)
	doneAt := make([]time.Time, watchers)
	opened := make(chan error, watchers)
	allDone := make(chan struct{})
	var remaining atomic.Int64
	remaining.Store(int64(watchers))
	var wg sync.WaitGroup
	for i := range watchers {
		got[i] = make([]received, 0, events)
		wg.Go(func() {
			resp, err := c.Do(wctx, http.MethodGet, path, nil)
			if err == nil && resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
				resp.Body.Close()
				err = &StatusError{Method: "GET", Path: path, Code: resp.StatusCode, Body: string(b)}
			}
			opened <- err
			if err != nil {
				return
			}
			defer resp.Body.Close()
			dec := json.NewDecoder(resp.Body)
			for {
				var ev watchEvent
				if err := dec.Decode(&ev); err != nil {
					if wctx.Err() == nil {
						problems[i] = "watch stream ended: " + err.Error()
					}
					return
				}
				now := time.Now()
				switch {
				case ev.Type == "BOOKMARK":
					continue
				case ev.Type == "ERROR":
					problems[i] = "ERROR event"
					return
				case !strings.HasPrefix(ev.Object.Metadata.Name, configMapPrefix):
					continue
				case ev.Type != "ADDED":
					problems[i] = fmt.Sprintf("unexpected %s event for %s", ev.Type, ev.Object.Metadata.Name)
				}
				rv, _ := strconv.ParseUint(ev.Object.Metadata.ResourceVersion, 10, 64)
				got[i] = append(got[i], received{ev.Object.Metadata.Name, rv, now})
				if len(got[i]) == events {
					doneAt[i] = now
					if remaining.Add(-1) == 0 {
						close(allDone)
					}
				}
			}
		})
	}
	for range watchers {
		if err := <-opened; err != nil {
			cancel()
			wg.Wait()
			return res, fmt.Errorf("opening watch: %w", err)
		}
	}
	if events == 0 {
		cancel()
		wg.Wait()
		res.Verified = true
		return res, nil
	}

	// Writers: writer w creates its share of ConfigMaps in order.
	writes := make([][]written, writers)
	bodies := make([][][]byte, writers)
	for w := range writers {
		n := events / writers
		if w < events%writers {
			n++
		}
		bodies[w] = make([][]byte, n)
		for j := range n {
			bodies[w][j], _ = json.Marshal(ConfigMap(ns, w, j))
		}
	}
	writeErrs := make([]error, writers)
	var wwg sync.WaitGroup
	cpu0 := c.cpuNow()
	start := time.Now()
	for w := range writers {
		wwg.Go(func() {
			for j, body := range bodies[w] {
				var meta struct {
					Metadata struct {
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				}
				t0 := time.Now()
				if err := c.call(ctx, http.MethodPost, base, body, http.StatusCreated, &meta); err != nil {
					writeErrs[w] = err
					return
				}
				rv, _ := strconv.ParseUint(meta.Metadata.ResourceVersion, 10, 64)
				writes[w] = append(writes[w], written{configMapName(w, j), rv, t0})
			}
		})
	}
	wwg.Wait()
	writeEnd := time.Since(start)
	res.WriteSeconds = round(writeEnd.Seconds(), 3)
	res.WritesPerSecond = round(float64(events)/writeEnd.Seconds(), 1)
	if err := errors.Join(writeErrs...); err != nil {
		cancel()
		wg.Wait()
		return res, fmt.Errorf("watch writers: %w", err)
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	complete := true
	select {
	case <-allDone:
		res.CPU = c.cpuSince(cpu0)
		// A short grace period catches duplicates delivered after the last
		// expected event.
		time.Sleep(200 * time.Millisecond)
	case <-timer.C:
		complete = false
	case <-ctx.Done():
		cancel()
		wg.Wait()
		return res, ctx.Err()
	}
	cancel()
	wg.Wait()

	var last time.Time
	for _, t := range doneAt {
		if t.After(last) {
			last = t
		}
	}
	if complete {
		el := last.Sub(start)
		res.Seconds = round(el.Seconds(), 3)
	}

	// Verify: each watcher saw exactly the writes, in resourceVersion order.
	want := slices.Concat(writes...)
	slices.SortFunc(want, func(a, b written) int { return cmpU(a.rv, b.rv) })
	startOf := make(map[string]time.Time, len(want))
	for _, w := range want {
		startOf[w.name] = w.start
	}
	lags := make([]time.Duration, 0, watchers*events)
	for i, g := range got {
		res.Delivered += int64(len(g))
		if problems[i] == "" {
			problems[i] = compareEvents(g, want)
		}
		for _, e := range g {
			if s, ok := startOf[e.name]; ok {
				lags = append(lags, e.at.Sub(s))
			}
		}
	}
	if complete && res.Seconds > 0 {
		res.EventsPerSecond = round(float64(res.Delivered)/res.Seconds, 1)
	}
	res.Lag = Summarize(lags)
	for i, p := range problems {
		if p != "" {
			res.Problems = append(res.Problems, fmt.Sprintf("watcher %d: %s", i, p))
		}
	}
	if !complete && len(res.Problems) == 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("not every event delivered within %v", timeout))
	}
	if len(res.Problems) > 5 {
		n := len(res.Problems)
		res.Problems = append(res.Problems[:5], fmt.Sprintf("… and %d more", n-5))
	}
	res.Verified = len(res.Problems) == 0
	return res, nil
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareEvents describes the first difference between what a watcher
// received and what was written (in resourceVersion order), or "".
func compareEvents(got []received, want []written) string {
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i].name != want[i].name || got[i].rv != want[i].rv {
			return fmt.Sprintf("event %d is %s@%d, want %s@%d", i, got[i].name, got[i].rv, want[i].name, want[i].rv)
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d events, want %d", len(got), len(want))
	}
	return ""
}
