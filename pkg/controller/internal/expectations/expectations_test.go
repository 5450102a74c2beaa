package expectations

import (
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestExpectations(t *testing.T) {
	fc := clock.NewFake(t0)
	e := New(fc)
	if !e.Satisfied("k") {
		t.Fatal("no expectations: satisfied")
	}
	e.ExpectCreations("k", 2)
	e.CreationObserved("k")
	if e.Satisfied("k") {
		t.Fatal("one creation unobserved")
	}
	e.CreationObserved("k")
	if !e.Satisfied("k") {
		t.Fatal("all observed")
	}
	e.ExpectDeletions("k", []string{"ns/a", "ns/b"})
	e.DeletionObserved("k", "ns/a")
	if e.Satisfied("k") {
		t.Fatal("one deletion unobserved")
	}
	fc.Step(Timeout + time.Second)
	if !e.Satisfied("k") {
		t.Fatal("expired expectations no longer hold the sync back")
	}
}

func TestSetExpectationsAndLower(t *testing.T) {
	e := New(clock.NewFake(t0))
	e.SetExpectations("k", 3, []string{"ns/x"})
	e.LowerCreations("k", 2)
	e.CreationObserved("k")
	if e.Satisfied("k") {
		t.Fatal("deletion of ns/x unobserved")
	}
	e.DeletionObserved("k", "ns/x")
	if !e.Satisfied("k") {
		t.Fatal("all observed or lowered")
	}
	if a, d := e.Pending("k"); a != 0 || d != 0 {
		t.Fatalf("pending %d %d", a, d)
	}
}
