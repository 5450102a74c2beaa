package helper

import "github.com/skiff-sh/skiff/pkg/scheduler/framework"

// DefaultNormalizeScore scales scores to [0, maxPriority] in proportion to
// the highest score (upstream's): score*maxPriority/max, reversed
// (maxPriority - that) when reverse. All zero: every score stays 0, or
// becomes maxPriority when reverse.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores framework.NodeScoreList) *framework.Status {
	var maxCount int64
	for i := range scores {
		if scores[i].Score > maxCount {
			maxCount = scores[i].Score
		}
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return nil
	}
	for i := range scores {
		s := maxPriority * scores[i].Score / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
	return nil
}
