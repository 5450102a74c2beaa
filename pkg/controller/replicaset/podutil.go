package replicaset

import (
	"math"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

// PodDeletionCostAnnotation ranks pods for deletion (lower first).
const PodDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

func readyCondition(p *corev1.Pod) *corev1.PodCondition { return podutil.ReadyCondition(p) }

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(p *corev1.Pod) bool { return podutil.IsPodReady(p) }

// IsPodAvailable reports whether the pod has been ready for minReadySeconds
// at now (upstream's podutil.IsPodAvailable).
func IsPodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	return podutil.IsPodAvailable(p, minReadySeconds, now)
}

// IsPodActive: not terminated and not being deleted.
func IsPodActive(p *corev1.Pod) bool { return podutil.IsPodActive(p) }

// FilterActivePods keeps the active pods.
func FilterActivePods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

var podPhaseToOrdinal = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// ActivePodsWithRanks sorts pods so that the ones to delete first come
// first (upstream's order; Rank[i] is how many related pods share pod i's
// node).
type ActivePodsWithRanks struct {
	Pods []*corev1.Pod
	Rank []int
	Now  metav1.Time
}

func (s ActivePodsWithRanks) Len() int { return len(s.Pods) }
func (s ActivePodsWithRanks) Swap(i, j int) {
	s.Pods[i], s.Pods[j] = s.Pods[j], s.Pods[i]
	s.Rank[i], s.Rank[j] = s.Rank[j], s.Rank[i]
}

func (s ActivePodsWithRanks) Less(i, j int) bool {
	pi, pj := s.Pods[i], s.Pods[j]
	// 1. Unassigned < assigned.
	if pi.Spec.NodeName != pj.Spec.NodeName && (pi.Spec.NodeName == "" || pj.Spec.NodeName == "") {
		return pi.Spec.NodeName == ""
	}
	// 2. PodPending < PodUnknown < PodRunning.
	if oi, oj := podPhaseToOrdinal[pi.Status.Phase], podPhaseToOrdinal[pj.Status.Phase]; oi != oj {
		return oi < oj
	}
	// 3. Not ready < ready.
	ri, rj := IsPodReady(pi), IsPodReady(pj)
	if ri != rj {
		return !ri
	}
	// 4. Lower pod-deletion-cost < higher.
	if ci, cj := deletionCost(pi), deletionCost(pj); ci != cj {
		return ci < cj
	}
	// 5. Doubled up < not doubled up.
	if s.Rank[i] != s.Rank[j] {
		return s.Rank[i] > s.Rank[j]
	}
	// 6. Been ready for empty time < less time < more time.
	if ri && rj {
		ti, tj := podReadyTime(pi), podReadyTime(pj)
		if !ti.Equal(tj) {
			if s.Now.IsZero() || ti.IsZero() || tj.IsZero() {
				return afterOrZero(ti, tj)
			}
			d := logarithmicRankDiff(*ti, *tj, s.Now)
			if d == 0 {
				return pi.UID < pj.UID
			}
			return d < 0
		}
	}
	// 7. More container restarts < fewer.
	if mi, mj := maxContainerRestarts(pi), maxContainerRestarts(pj); mi != mj {
		return mi > mj
	}
	// 8. Empty creation time < newer < older.
	if !pi.CreationTimestamp.Equal(&pj.CreationTimestamp) {
		if s.Now.IsZero() || pi.CreationTimestamp.IsZero() || pj.CreationTimestamp.IsZero() {
			return afterOrZero(&pi.CreationTimestamp, &pj.CreationTimestamp)
		}
		d := logarithmicRankDiff(pi.CreationTimestamp, pj.CreationTimestamp, s.Now)
		if d == 0 {
			return pi.UID < pj.UID
		}
		return d < 0
	}
	return false
}

func deletionCost(p *corev1.Pod) int32 {
	v, ok := p.Annotations[PodDeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

func afterOrZero(t1, t2 *metav1.Time) bool {
	if t1.Time.IsZero() || t2.Time.IsZero() {
		return t1.Time.IsZero()
	}
	return t1.After(t2.Time)
}

func logarithmicRankDiff(t1, t2, now metav1.Time) int64 {
	d1, d2 := now.Sub(t1.Time), now.Sub(t2.Time)
	r1, r2 := int64(-1), int64(-1)
	if d1 > 0 {
		r1 = int64(math.Log2(float64(d1)))
	}
	if d2 > 0 {
		r2 = int64(math.Log2(float64(d2)))
	}
	return r1 - r2
}

func podReadyTime(p *corev1.Pod) *metav1.Time {
	if c := readyCondition(p); c != nil && c.Status == corev1.ConditionTrue {
		return &c.LastTransitionTime
	}
	return &metav1.Time{}
}

func maxContainerRestarts(p *corev1.Pod) int {
	m := 0
	for _, c := range p.Status.ContainerStatuses {
		m = max(m, int(c.RestartCount))
	}
	return m
}

// PodsToDelete picks diff pods of filtered to delete, by upstream's
// preference; related are all active pods of the owner and its siblings
// (for the doubled-up rank).
func PodsToDelete(filtered, related []*corev1.Pod, diff int, now time.Time) []*corev1.Pod {
	if diff < len(filtered) {
		ranked := rankByRelatedOnSameNode(filtered, related)
		ranked.Now = metav1.NewTime(now)
		sort.Sort(ranked)
		return ranked.Pods[:diff]
	}
	return filtered[:min(diff, len(filtered))]
}

func rankByRelatedOnSameNode(pods, related []*corev1.Pod) ActivePodsWithRanks {
	onNode := map[string]int{}
	for _, p := range related {
		if IsPodActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	ranks := make([]int, len(pods))
	cp := make([]*corev1.Pod, len(pods))
	copy(cp, pods)
	for i, p := range cp {
		ranks[i] = onNode[p.Spec.NodeName]
	}
	return ActivePodsWithRanks{Pods: cp, Rank: ranks}
}
