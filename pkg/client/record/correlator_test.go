package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/clock"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testEvent(names *nameGenerator, obj, reason, message string, at time.Time) *corev1.Event {
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "ns", Name: obj, UID: types.UID("uid-" + obj)}
	e := makeEvent(ref, names.next(obj, at), at, nil, corev1.EventTypeNormal, reason, message)
	e.Source = corev1.EventSource{Component: "test-controller", Host: "node-1"}
	e.ReportingController, e.ReportingInstance = "test-controller", "node-1"
	return e
}

// step is one event fed to the correlator in a scenario.
type step struct {
	advance time.Duration // clock step before the event
	obj     string        // involved object name ("pod" if empty)
	reason  string        // ("Reason" if empty)
	message string

	skip    bool  // want: dropped by the spam filter
	count   int32 // want: the written event's count
	combine bool  // want: a combined event
	sameAs  int   // want: same event name as the result of step sameAs-1 (0 = don't check)
	newName bool  // want: a name not seen before
}

func TestEventCorrelator(t *testing.T) {
	repeat := func(n int, s step) []step {
		out := make([]step, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	distinct := func(from, to int) []step {
		var out []step
		for i := from; i <= to; i++ {
			out = append(out, step{message: fmt.Sprintf("message %d", i), count: 1, newName: true})
		}
		return out
	}
	cat := func(parts ...[]step) []step {
		var out []step
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		opts  CorrelatorOptions
		steps []step
	}{
		{
			name: "identical events are deduplicated into a count",
			steps: []step{
				{message: "pulled", count: 1, newName: true},
				{advance: time.Second, message: "pulled", count: 2, sameAs: 1},
				{advance: time.Minute, message: "pulled", count: 3, sameAs: 1},
			},
		},
		{
			name: "different objects and reasons are separate events",
			steps: []step{
				{message: "m", count: 1, newName: true},
				{obj: "other", message: "m", count: 1, newName: true},
				{reason: "Other", message: "m", count: 1, newName: true},
				{message: "m", count: 2, sameAs: 1},
			},
		},
		{
			name: "ten distinct messages start aggregation",
			steps: cat(
				distinct(1, 9),
				[]step{
					{message: "message 10", count: 1, combine: true, newName: true},
					{message: "message 11", count: 2, combine: true, sameAs: 10},
					{message: "message 12", count: 3, combine: true, sameAs: 10},
				},
			),
		},
		{
			name: "repeats do not count as distinct messages",
			steps: cat(
				distinct(1, 8),
				[]step{
					{message: "message 1", count: 2, sameAs: 1},
					{message: "message 1", count: 3, sameAs: 1},
					{message: "message 9", count: 1, newName: true},
					{message: "message 10", count: 1, combine: true, newName: true},
				},
			),
		},
		{
			name: "a group is forgotten 10 minutes after its last event",
			steps: cat(
				distinct(1, 9),
				[]step{
					{advance: 10*time.Minute + time.Second, message: "message 10", count: 1, newName: true},
					{message: "message 11", count: 1, newName: true},
				},
			),
		},
		{
			name: "events within 10 minutes of each other keep the group",
			steps: cat(
				[]step{{message: "message 0", count: 1, newName: true}},
				func() []step {
					var out []step
					for i := 1; i <= 8; i++ {
						out = append(out, step{advance: 9 * time.Minute, message: fmt.Sprintf("message %d", i), count: 1, newName: true})
					}
					return out
				}(),
				[]step{{advance: 9 * time.Minute, message: "message 9", count: 1, combine: true, newName: true}},
			),
		},
		{
			name: "spam filter: burst 25 per source and object, then one per 5 minutes",
			steps: cat(
				[]step{{message: "m", count: 1, newName: true}},
				func() []step {
					var out []step
					for i := 2; i <= 25; i++ {
						out = append(out, step{message: "m", count: int32(i), sameAs: 1})
					}
					return out
				}(),
				[]step{
					{message: "m", skip: true},
					{message: "another message", skip: true},
					{reason: "OtherReason", message: "m", skip: true},
					{obj: "other", message: "m", count: 1, newName: true},
					{advance: 4 * time.Minute, message: "m", skip: true},
					// The dropped repeats still counted: 25 + 2 dropped + this.
					{advance: time.Minute, message: "m", count: 28, sameAs: 1},
					{message: "m", skip: true},
				},
			),
		},
		{
			name: "spam filter options",
			opts: CorrelatorOptions{BurstSize: 2, QPS: 1},
			steps: cat(
				[]step{{message: "m", count: 1, newName: true}, {message: "m", count: 2, sameAs: 1}},
				[]step{{message: "m", skip: true}, {advance: time.Second, message: "m", count: 4, sameAs: 1}},
			),
		},
		{
			name: "aggregation options",
			opts: CorrelatorOptions{MaxEvents: 2, MaxInterval: time.Minute},
			steps: cat(
				repeat(1, step{message: "a", count: 1, newName: true}),
				[]step{
					{message: "b", count: 1, combine: true, newName: true},
					{advance: 61 * time.Second, message: "c", count: 1, newName: true},
				},
			),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := clock.NewFake(t0)
			tc.opts.Clock = fc
			c := NewEventCorrelatorWithOptions(tc.opts)
			gen := c.names // shared, as the broadcaster shares it with its recorders
			var names []string
			seen := map[string]bool{}
			for i, s := range tc.steps {
				fc.Step(s.advance)
				obj, reason := s.obj, s.reason
				if obj == "" {
					obj = "pod"
				}
				if reason == "" {
					reason = "Reason"
				}
				in := testEvent(gen, obj, reason, s.message, fc.Now())
				inCopy := in.DeepCopy()
				res, err := c.EventCorrelate(in)
				if err != nil {
					t.Fatalf("step %d: %v", i+1, err)
				}
				if in.String() != inCopy.String() {
					t.Fatalf("step %d: EventCorrelate modified its input", i+1)
				}
				if res.Skip != s.skip {
					t.Fatalf("step %d (%q): skip = %v, want %v", i+1, s.message, res.Skip, s.skip)
				}
				if s.skip {
					names = append(names, "")
					continue
				}
				e := res.Event
				names = append(names, e.Name)
				if e.Count != s.count {
					t.Fatalf("step %d (%q): count = %d, want %d", i+1, s.message, e.Count, s.count)
				}
				if got := strings.HasPrefix(e.Message, "(combined from similar events): "); got != s.combine {
					t.Fatalf("step %d: message %q, combined = %v, want %v", i+1, e.Message, got, s.combine)
				}
				if s.combine && e.Message != "(combined from similar events): "+s.message {
					t.Fatalf("step %d: message %q", i+1, e.Message)
				}
				if s.sameAs > 0 && e.Name != names[s.sameAs-1] {
					t.Fatalf("step %d: name %q, want step %d's %q", i+1, e.Name, s.sameAs, names[s.sameAs-1])
				}
				if s.newName && seen[e.Name] {
					t.Fatalf("step %d: name %q reused", i+1, e.Name)
				}
				seen[e.Name] = true
				if !e.LastTimestamp.Time.Equal(fc.Now()) {
					t.Fatalf("step %d: lastTimestamp %v, want %v", i+1, e.LastTimestamp, fc.Now())
				}
				if e.Count > 1 {
					var patch map[string]any
					if err := json.Unmarshal(res.Patch, &patch); err != nil {
						t.Fatalf("step %d: patch %q: %v", i+1, res.Patch, err)
					}
					want := map[string]any{"count": float64(e.Count), "lastTimestamp": fc.Now().Format(time.RFC3339), "message": e.Message}
					if fmt.Sprint(patch) != fmt.Sprint(want) {
						t.Fatalf("step %d: patch %v, want %v", i+1, patch, want)
					}
					if e.FirstTimestamp.Time.After(e.LastTimestamp.Time) || e.FirstTimestamp.Time.Equal(e.LastTimestamp.Time) && s.advance > 0 {
						t.Fatalf("step %d: firstTimestamp %v lastTimestamp %v", i+1, e.FirstTimestamp, e.LastTimestamp)
					}
				} else if res.Patch != nil {
					t.Fatalf("step %d: patch for a new event: %s", i+1, res.Patch)
				}
			}
		})
	}
}

func TestCorrelatorUpdateStateTakesServerView(t *testing.T) {
	fc := clock.NewFake(t0)
	c := NewEventCorrelator(fc)
	res, _ := c.EventCorrelate(testEvent(c.names, "pod", "R", "m", fc.Now()))
	stored := res.Event.DeepCopy()
	stored.ResourceVersion = "42"
	stored.Count = 7 // someone else's writes were merged on the server
	c.UpdateState(stored)
	res, _ = c.EventCorrelate(testEvent(c.names, "pod", "R", "m", fc.Now()))
	if res.Event.Count != 8 || res.Event.ResourceVersion != "42" || res.Event.Name != stored.Name {
		t.Fatalf("event after UpdateState = count %d rv %q name %q", res.Event.Count, res.Event.ResourceVersion, res.Event.Name)
	}
	if _, err := c.EventCorrelate(nil); err == nil {
		t.Fatal("nil event accepted")
	}
}

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	l := newLRU[int](2)
	l.add("a", 1)
	l.add("b", 2)
	l.get("a")
	l.add("c", 3)
	if _, ok := l.get("b"); ok {
		t.Fatal("b not evicted")
	}
	if v, ok := l.get("a"); !ok || v != 1 {
		t.Fatal("a evicted")
	}
	l.add("a", 4)
	if v, _ := l.get("a"); v != 4 || l.len() != 2 {
		t.Fatal("update in place failed")
	}
}

func TestCorrelatorCachesAreBounded(t *testing.T) {
	fc := clock.NewFake(t0)
	c := NewEventCorrelatorWithOptions(CorrelatorOptions{Clock: fc, LRUCacheSize: 3})
	for i := range 10 {
		c.EventCorrelate(testEvent(c.names, fmt.Sprintf("pod-%d", i), "R", "m", fc.Now()))
	}
	if c.observed.len() != 3 || c.aggregates.len() != 3 || c.spam.len() != 3 {
		t.Fatalf("cache sizes %d %d %d", c.observed.len(), c.aggregates.len(), c.spam.len())
	}
}
