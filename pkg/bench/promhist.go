package bench

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// histogram is a Prometheus histogram's cumulative bucket counts, summed
// over the series a scrape selected.
type histogram struct {
	Buckets map[float64]float64 // upper bound (le) → cumulative count
	Count   float64
	Sum     float64
}

// parseHistograms reads the Prometheus text exposition format and returns
// the histogram named name, summing every series whose labels include all
// of match (other series, and the other metrics, are skipped). found is
// false when no series of it was present.
func parseHistogram(r io.Reader, name string, match map[string]string) (h histogram, found bool, err error) {
	h.Buckets = map[float64]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || !strings.HasPrefix(line, name) {
			continue
		}
		metric, labels, value, ok := splitSample(line)
		if !ok {
			continue
		}
		selected := true
		for k, v := range match {
			if labels[k] != v {
				selected = false
				break
			}
		}
		if !selected {
			continue
		}
		switch metric {
		case name + "_bucket":
			le, err := strconv.ParseFloat(labels["le"], 64)
			if labels["le"] == "+Inf" {
				le, err = math.Inf(1), nil
			}
			if err != nil {
				continue
			}
			h.Buckets[le] += value
			found = true
		case name + "_count":
			h.Count += value
			found = true
		case name + "_sum":
			h.Sum += value
		}
	}
	return h, found, sc.Err()
}

// splitSample splits `name{k="v",…} value [timestamp]`.
func splitSample(line string) (name string, labels map[string]string, value float64, ok bool) {
	labels = map[string]string{}
	rest := line
	if i := strings.IndexAny(line, "{ "); i >= 0 {
		name, rest = line[:i], line[i:]
	} else {
		return "", nil, 0, false
	}
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, ", ")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.IndexByte(rest, '=')
			if eq < 0 || len(rest) < eq+2 || rest[eq+1] != '"' {
				return "", nil, 0, false
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var val strings.Builder
			closed := false
			for j := 0; j < len(rest); j++ {
				c := rest[j]
				if c == '\\' && j+1 < len(rest) {
					j++
					switch rest[j] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[j])
					}
					continue
				}
				if c == '"' {
					rest = rest[j+1:]
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return "", nil, 0, false
			}
			labels[key] = val.String()
		}
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "", nil, 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return "", nil, 0, false
	}
	return name, labels, v, true
}

// sub is h minus an earlier scrape of the same histogram.
func (h histogram) sub(before histogram) histogram {
	out := histogram{Buckets: map[float64]float64{}, Count: h.Count - before.Count, Sum: h.Sum - before.Sum}
	for le, n := range h.Buckets {
		out.Buckets[le] = n - before.Buckets[le]
	}
	return out
}

// quantile estimates the q-quantile (0 < q < 1) as Prometheus's
// histogram_quantile does: linear interpolation inside the bucket the
// rank falls in, the lower bound of the first bucket being 0; a rank in
// the +Inf bucket answers the highest finite bound. NaN without
// observations.
func (h histogram) quantile(q float64) float64 {
	les := make([]float64, 0, len(h.Buckets))
	for le := range h.Buckets {
		les = append(les, le)
	}
	slices.Sort(les)
	if len(les) == 0 {
		return math.NaN()
	}
	total := h.Buckets[les[len(les)-1]]
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	prevLE, prevCount := 0.0, 0.0
	for _, le := range les {
		c := h.Buckets[le]
		if c >= rank {
			if math.IsInf(le, 1) {
				return prevLE
			}
			if c == prevCount {
				return le
			}
			return prevLE + (le-prevLE)*(rank-prevCount)/(c-prevCount)
		}
		prevLE, prevCount = le, c
	}
	return prevLE
}
