package batch

// A small parser for CronJob schedules, accepting what upstream accepts
// (github.com/robfig/cron/v3 ParseStandard) and failing with the same
// messages:
//
//	minute hour day-of-month month day-of-week
//
// Each field is a comma-separated list of "*", "?", "N", "N-M", each
// optionally followed by "/step"; months and weekdays also accept names
// (jan..dec, sun..sat). Instead of the five fields a schedule may be one of
// the descriptors @yearly (@annually), @monthly, @weekly, @daily
// (@midnight), @hourly or "@every <duration>". An optional leading
// "TZ=<zone>" or "CRON_TZ=<zone>" is parsed here but rejected by validation,
// which wants spec.timeZone instead.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cronField describes the values one schedule field may take.
type cronField struct {
	min, max uint
	names    func(string) (uint, bool)
}

func monthName(s string) (uint, bool) {
	for i, n := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
		if s == n {
			return uint(i + 1), true
		}
	}
	return 0, false
}

func weekdayName(s string) (uint, bool) {
	for i, n := range []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"} {
		if s == n {
			return uint(i), true
		}
	}
	return 0, false
}

// cronFields lists the five fields in order.
func cronFields() []cronField {
	return []cronField{
		{min: 0, max: 59},                    // minute
		{min: 0, max: 23},                    // hour
		{min: 1, max: 31},                    // day of month
		{min: 1, max: 12, names: monthName},  // month
		{min: 0, max: 6, names: weekdayName}, // day of week
	}
}

// parseCronSchedule checks a schedule and returns, for the five-field form,
// one bit mask per field (bit n set when value n matches). Descriptors and
// @every return nil masks.
func parseCronSchedule(spec string) ([]uint64, error) {
	if spec == "" {
		return nil, fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		i := strings.Index(spec, " ")
		if i < 0 {
			i = len(spec)
		}
		zone := spec[strings.Index(spec, "=")+1 : i]
		if _, err := time.LoadLocation(zone); err != nil {
			return nil, fmt.Errorf("provided bad location %s: %v", zone, err)
		}
		spec = strings.TrimSpace(spec[i:])
	}
	if strings.HasPrefix(spec, "@") {
		switch spec {
		case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
			return nil, nil
		}
		if d, ok := strings.CutPrefix(spec, "@every "); ok {
			if _, err := time.ParseDuration(d); err != nil {
				return nil, fmt.Errorf("failed to parse duration %s: %s", spec, err)
			}
			return nil, nil
		}
		return nil, fmt.Errorf("unrecognized descriptor: %s", spec)
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return nil, fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	masks := make([]uint64, 5)
	for i, f := range cronFields() {
		for _, expr := range strings.FieldsFunc(fields[i], func(r rune) bool { return r == ',' }) {
			bits, err := parseCronRange(expr, f)
			if err != nil {
				return nil, err
			}
			masks[i] |= bits
		}
	}
	return masks, nil
}

// parseCronRange parses one "*", "N", "N-M" with an optional "/step".
func parseCronRange(expr string, f cronField) (uint64, error) {
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	var start, end, step uint
	var err error
	if lowAndHigh[0] == "*" || lowAndHigh[0] == "?" {
		start, end = f.min, f.max
	} else {
		if start, err = parseCronValue(lowAndHigh[0], f); err != nil {
			return 0, err
		}
		switch len(lowAndHigh) {
		case 1:
			end = start
		case 2:
			if end, err = parseCronValue(lowAndHigh[1], f); err != nil {
				return 0, err
			}
		default:
			return 0, fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	switch len(rangeAndStep) {
	case 1:
		step = 1
	case 2:
		if step, err = parseCronInt(rangeAndStep[1]); err != nil {
			return 0, err
		}
		// "N/step" means "N-max/step".
		if len(lowAndHigh) == 1 {
			end = f.max
		}
	default:
		return 0, fmt.Errorf("too many slashes: %s", expr)
	}
	switch {
	case start < f.min:
		return 0, fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, f.min, expr)
	case end > f.max:
		return 0, fmt.Errorf("end of range (%d) above maximum (%d): %s", end, f.max, expr)
	case start > end:
		return 0, fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	case step == 0:
		return 0, fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	var bits uint64
	for v := start; v <= end; v += step {
		bits |= 1 << v
	}
	return bits, nil
}

func parseCronValue(s string, f cronField) (uint, error) {
	if f.names != nil {
		if v, ok := f.names(strings.ToLower(s)); ok {
			return v, nil
		}
	}
	return parseCronInt(s)
}

func parseCronInt(s string) (uint, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", s, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, s)
	}
	return uint(n), nil
}
