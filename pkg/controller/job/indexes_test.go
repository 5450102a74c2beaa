package job

import (
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/clock"
)

func clockAt(t time.Time) *clock.Fake { return clock.NewFake(t) }

func TestIntervals(t *testing.T) {
	for _, tc := range []struct {
		in          string
		completions int
		add         []int
		want        string
		total       int
	}{
		{"", 10, []int{3, 1, 2, 7}, "1-3,7", 4},
		{"1,3-5", 10, []int{2}, "1-5", 5},
		{"0,1", 10, nil, "0,1", 2},
		{"0-9", 5, nil, "0-4", 5},
		{"4,8", 6, []int{5}, "4,5", 2},
		{"x,2", 5, nil, "2", 1},
	} {
		iv := parseIndexes(tc.in, tc.completions).withIndexes(tc.add)
		if iv.String() != tc.want || iv.total() != tc.total {
			t.Errorf("%q + %v: %q (%d), want %q (%d)", tc.in, tc.add, iv.String(), iv.total(), tc.want, tc.total)
		}
	}
	iv := parseIndexes("1,3-5", 10)
	for ix, want := range map[int]bool{0: false, 1: true, 2: false, 4: true, 5: true, 6: false} {
		if iv.has(ix) != want {
			t.Errorf("has(%d) = %v", ix, !want)
		}
	}
}

func TestSuccessPolicyRules(t *testing.T) {
	succeeded := parseIndexes("0-2,5", 10)
	for _, tc := range []struct {
		indexes string
		count   int32
		want    bool
	}{
		{"0-2", 0, true},
		{"0-3", 0, false},
		{"0-3", 3, true},
		{"4-6", 2, false},
		{"5", 0, true},
	} {
		if got := matchSucceededIndexesRule(parseIndexes(tc.indexes, 10), succeeded, ptrIf(tc.count)); got != tc.want {
			t.Errorf("%s/%d: %v", tc.indexes, tc.count, got)
		}
	}
}

func ptrIf(v int32) *int32 {
	if v == 0 {
		return nil
	}
	return &v
}

func TestPodGenerateName(t *testing.T) {
	if got := podGenerateName("job", 3); got != "job-3-" {
		t.Fatal(got)
	}
	long := "a123456789a123456789a123456789a123456789a123456789a123456789ab"
	if got := podGenerateName(long, 12); len(got) != 58 || got[len(got)-4:] != "-12-" {
		t.Fatalf("%q", got)
	}
}
