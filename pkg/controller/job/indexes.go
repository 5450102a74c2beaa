package job

import (
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// unknownIndex is the completion index of a pod without a valid one.
const unknownIndex = -1

// interval is a closed range of completion indexes.
type interval struct{ First, Last int }

// intervals are sorted, non-overlapping, non-adjacent index ranges: the
// representation of status.completedIndexes and status.failedIndexes
// ("1,3-5,7").
type intervals []interval

// parseIndexes reads a compressed index list, keeping indexes below
// completions; malformed parts are skipped (the API server validates).
func parseIndexes(s string, completions int) intervals {
	var out intervals
	if s == "" {
		return out
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			continue
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				continue
			}
		}
		if first >= completions {
			continue
		}
		last = min(last, completions-1)
		out = out.add(interval{first, last})
	}
	return out
}

// add merges one interval in.
func (iv intervals) add(n interval) intervals {
	return iv.merge(intervals{n})
}

// merge returns the union of two interval lists.
func (iv intervals) merge(other intervals) intervals {
	all := make(intervals, 0, len(iv)+len(other))
	all = append(all, iv...)
	all = append(all, other...)
	sort.Slice(all, func(i, j int) bool { return all[i].First < all[j].First })
	var out intervals
	for _, x := range all {
		if n := len(out); n > 0 && x.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, x.Last)
			continue
		}
		out = append(out, x)
	}
	return out
}

// withIndexes returns the union with single indexes.
func (iv intervals) withIndexes(ixs []int) intervals {
	add := make(intervals, 0, len(ixs))
	for _, x := range ixs {
		add = append(add, interval{x, x})
	}
	return iv.merge(add)
}

func (iv intervals) total() int {
	n := 0
	for _, x := range iv {
		n += x.Last - x.First + 1
	}
	return n
}

func (iv intervals) has(ix int) bool {
	i := sort.Search(len(iv), func(i int) bool { return iv[i].Last >= ix })
	return i < len(iv) && iv[i].First <= ix
}

// String is the compressed form: ranges of three or more as "a-b", two
// adjacent indexes as "a,b" (as upstream writes them).
func (iv intervals) String() string {
	var b strings.Builder
	for _, x := range iv {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(x.First))
		switch {
		case x.Last == x.First+1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(x.Last))
		case x.Last > x.First:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(x.Last))
		}
	}
	return b.String()
}

func isIndexed(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

// completionIndex is the pod's batch.kubernetes.io/job-completion-index
// annotation, or unknownIndex.
func completionIndex(p *corev1.Pod) int {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return unknownIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return unknownIndex
	}
	return i
}

// validIndex reports whether the pod has an index below completions.
func validIndex(job *batchv1.Job, p *corev1.Pod) bool {
	ix := completionIndex(p)
	return ix != unknownIndex && job.Spec.Completions != nil && ix < int(*job.Spec.Completions)
}

// succeededIndexes returns the indexes already in status.completedIndexes
// and those plus the indexes of succeeded pods still carrying the tracking
// finalizer (not counted yet).
func succeededIndexes(job *batchv1.Job, pods []*corev1.Pod) (prev, cur intervals) {
	completions := int(*job.Spec.Completions)
	prev = parseIndexes(job.Status.CompletedIndexes, completions)
	var ixs []int
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded && hasFinalizer(p) && validIndex(job, p) {
			ixs = append(ixs, completionIndex(p))
		}
	}
	return prev, prev.withIndexes(ixs)
}

// indexesOf are the valid indexes of pods.
func indexesOf(job *batchv1.Job, pods []*corev1.Pod) []int {
	var out []int
	for _, p := range pods {
		if validIndex(job, p) {
			out = append(out, completionIndex(p))
		}
	}
	return out
}

// firstPendingIndexes returns up to count of the lowest indexes below
// completions that are neither succeeded, failed, active nor (when only
// failed pods are replaced) held by a terminating pod.
func firstPendingIndexes(sc *syncCtx, count, completions int) []int {
	if count <= 0 {
		return nil
	}
	busy := sc.succeededIndexes.withIndexes(indexesOf(sc.job, sc.activePods))
	if sc.failedIndexes != nil {
		busy = busy.merge(*sc.failedIndexes)
	}
	if onlyReplaceFailedPods(sc.job) {
		busy = busy.withIndexes(indexesOf(sc.job, terminatingPods(sc.pods)))
	}
	var out []int
	for ix := 0; ix < completions && len(out) < count; ix++ {
		if !busy.has(ix) {
			out = append(out, ix)
		}
	}
	return out
}

// duplicateIndexPods splits active pods into those to remove (invalid
// index, or a second pod of the same index: the most advanced one of an
// index is kept) and the rest.
func duplicateIndexPods(job *batchv1.Job, pods []*corev1.Pod) (rm, keep []*corev1.Pod) {
	byIndex := map[int][]*corev1.Pod{}
	for _, p := range pods {
		if !validIndex(job, p) {
			rm = append(rm, p)
			continue
		}
		ix := completionIndex(p)
		byIndex[ix] = append(byIndex[ix], p)
	}
	ixs := make([]int, 0, len(byIndex))
	for ix := range byIndex {
		ixs = append(ixs, ix)
	}
	sort.Ints(ixs)
	for _, ix := range ixs {
		group := byIndex[ix]
		sort.SliceStable(group, func(i, j int) bool { return activePodLess(group[i], group[j]) })
		rm = append(rm, group[:len(group)-1]...)
		keep = append(keep, group[len(group)-1])
	}
	return rm, keep
}

// podGenerateName is "<job>-<index>-", the job name cut so that the
// generated name fits 63 characters.
func podGenerateName(jobName string, index int) string {
	const maxGeneratedNameLength = 63 - 5
	suffix := "-" + strconv.Itoa(index) + "-"
	prefix := jobName + suffix
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength-len(suffix)] + suffix
	}
	return prefix
}
