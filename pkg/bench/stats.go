package bench

import (
	"math"
	"slices"
	"time"
)

// Latency summarises a set of durations in milliseconds.
type Latency struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// Summarize computes the latency summary of ds (nearest-rank percentiles).
// ds is sorted in place.
func Summarize(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return Latency{
		Count: len(ds),
		Mean:  ms(sum / time.Duration(len(ds))),
		P50:   ms(percentile(ds, 50)),
		P90:   ms(percentile(ds, 90)),
		P99:   ms(percentile(ds, 99)),
		Max:   ms(ds[len(ds)-1]),
	}
}

// percentile is the nearest-rank percentile of sorted ds.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// median of ds (the lower middle for an even count); ds is sorted in place.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)-1)/2]
}

// ms is d in milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

func round(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(f*p) / p
}
