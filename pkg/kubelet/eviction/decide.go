package eviction

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/corev1helpers"
)

// Upstream's reason and message formats.
const (
	Reason                  = "Evicted"
	nodeLowMessageFmt       = "The node was low on resource: %v. "
	nodeConditionMessageFmt = "The node had condition: %v. "
	containerMessageFmt     = "Container %s was using %s, request is %s, has larger consumption of %v. "
	thresholdMetMessageFmt  = "Threshold quantity: %v, available: %v. "

	// ImmediateGracePeriodSeconds is the grace period of a pod evicted
	// for a hard threshold (upstream's immediateEvictionGracePeriodSeconds).
	ImmediateGracePeriodSeconds = 1
)

// State is what the decision carries from one pass to the next.
type State struct {
	thresholdsFirstObservedAt map[string]firstObserved
	conditionsLastObservedAt  map[corev1.NodeConditionType]time.Time
	thresholdsMet             []Threshold
}

type firstObserved struct {
	t  Threshold
	at time.Time
}

// Input is what one pass decides from.
type Input struct {
	Thresholds   []Threshold
	Observations Observations
	// Pods are the active pods (not terminated), Stats their usage.
	Pods  []*corev1.Pod
	Stats StatsFunc
	// PressureTransitionPeriod: a pressure condition stays that long after
	// its signal recovered (5 min).
	PressureTransitionPeriod time.Duration
	// MaxPodGracePeriodSeconds bounds the grace period of soft evictions.
	MaxPodGracePeriodSeconds int64
	// DedicatedImageFs: the images are on a filesystem of their own
	// (ranking for nodefs then ignores writable layers).
	DedicatedImageFs bool
}

// Decision is one pass's outcome.
type Decision struct {
	// Conditions are the node's pressure conditions (True).
	Conditions []corev1.NodeConditionType
	// Thresholds met past their grace period, memory first.
	Thresholds []Threshold
	// Signal and Resource to reclaim ("" when none).
	Signal   Signal
	Resource corev1.ResourceName
	// Ranked are the pods in eviction order for Signal; Evict the first
	// that may be evicted (critical pods never are), with its grace
	// period and upstream's message.
	Ranked      []*corev1.Pod
	Evict       *corev1.Pod
	GracePeriod int64
	Message     string
	Annotations map[string]string
}

// Decide is one pass of upstream's eviction manager synchronize, without
// its I/O: the thresholds met (a met one stays met until the signal is
// back above it plus its minimum reclaim), the node conditions (kept for
// the transition period), the thresholds whose grace period elapsed, and
// the pod to evict for the first of them.
func Decide(in Input, prev State, now time.Time) (Decision, State) {
	met := ThresholdsMet(in.Thresholds, in.Observations, false)
	if len(prev.thresholdsMet) > 0 {
		met = mergeThresholds(met, ThresholdsMet(prev.thresholdsMet, in.Observations, true))
	}
	first := map[string]firstObserved{}
	for _, t := range met {
		at := now
		if o, ok := prev.thresholdsFirstObservedAt[t.key()]; ok {
			at = o.at
		}
		first[t.key()] = firstObserved{t, at}
	}
	var conds []corev1.NodeConditionType
	for _, t := range met {
		if c, ok := signalToCondition[t.Signal]; ok && !hasCondition(conds, c) {
			conds = append(conds, c)
		}
	}
	lastObserved := map[corev1.NodeConditionType]time.Time{}
	for c, at := range prev.conditionsLastObservedAt {
		lastObserved[c] = at
	}
	for _, c := range conds {
		lastObserved[c] = now
	}
	var d Decision
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if at, ok := lastObserved[c]; ok && now.Sub(at) < in.PressureTransitionPeriod {
			d.Conditions = append(d.Conditions, c)
		} else if ok && now.Sub(at) >= in.PressureTransitionPeriod && !hasCondition(conds, c) {
			delete(lastObserved, c)
		}
	}
	for _, f := range first {
		if now.Sub(f.at) >= f.t.GracePeriod {
			d.Thresholds = append(d.Thresholds, f.t)
		}
	}
	// Memory first (upstream's byEvictionPriority), then in order.
	sort.SliceStable(d.Thresholds, func(i, j int) bool {
		mi := d.Thresholds[i].Signal == SignalMemoryAvailable || d.Thresholds[i].Signal == SignalAllocatableMemoryAvailable
		mj := d.Thresholds[j].Signal == SignalMemoryAvailable || d.Thresholds[j].Signal == SignalAllocatableMemoryAvailable
		if mi != mj {
			return mi
		}
		return d.Thresholds[i].key() < d.Thresholds[j].key()
	})
	next := State{thresholdsFirstObservedAt: first, conditionsLastObservedAt: lastObserved, thresholdsMet: d.Thresholds}
	if len(d.Thresholds) == 0 {
		return d, next
	}
	t := d.Thresholds[0]
	d.Signal, d.Resource = t.Signal, signalToResource[t.Signal]
	stats := in.Stats
	if stats == nil {
		stats = func(*corev1.Pod) (PodStats, bool) { return PodStats{}, false }
	}
	d.Ranked = Rank(t.Signal, in.Pods, stats, in.DedicatedImageFs)
	for _, p := range d.Ranked {
		if IsCriticalPod(p) {
			continue
		}
		d.Evict = p
		d.GracePeriod = ImmediateGracePeriodSeconds
		if !t.IsHard() {
			d.GracePeriod = in.MaxPodGracePeriodSeconds
			if p.Spec.TerminationGracePeriodSeconds != nil {
				d.GracePeriod = min(d.GracePeriod, *p.Spec.TerminationGracePeriodSeconds)
			}
		}
		d.Message, d.Annotations = Message(d.Resource, p, stats, d.Thresholds, in.Observations)
		break
	}
	return d, next
}

// ThresholdsMet are the thresholds whose signal is below them (plus their
// minimum reclaim when enforceMinReclaim).
func ThresholdsMet(thresholds []Threshold, obs Observations, enforceMinReclaim bool) []Threshold {
	var out []Threshold
	for _, t := range thresholds {
		o, ok := obs[t.Signal]
		if !ok || o.Available == nil {
			continue
		}
		q := t.Value.Of(o.Capacity)
		if enforceMinReclaim && t.MinReclaim != nil {
			q.Add(*t.MinReclaim.Of(o.Capacity))
		}
		if q.Cmp(*o.Available) > 0 {
			out = append(out, t)
		}
	}
	return out
}

func mergeThresholds(a, b []Threshold) []Threshold {
	out := a
	for _, t := range b {
		dup := false
		for _, x := range out {
			dup = dup || x.key() == t.key()
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out
}

func hasCondition(list []corev1.NodeConditionType, c corev1.NodeConditionType) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

// IsCriticalPod is upstream's: a static or mirror pod, or priority at
// least system-cluster-critical's (2000000000).
func IsCriticalPod(p *corev1.Pod) bool {
	if src, ok := p.Annotations["kubernetes.io/config.source"]; ok && src != "api" {
		return true
	}
	if _, ok := p.Annotations["kubernetes.io/config.mirror"]; ok {
		return true
	}
	return p.Spec.Priority != nil && *p.Spec.Priority >= 2000000000
}

// QOSClass is the pod's status.qosClass, computed when absent.
func QOSClass(p *corev1.Pod) corev1.PodQOSClass {
	if p.Status.QOSClass != "" {
		return p.Status.QOSClass
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		n := 0
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; ok && !q.IsZero() {
				addTo(requests, name, q)
			}
			if q, ok := c.Resources.Limits[name]; ok && !q.IsZero() {
				addTo(limits, name, q)
				n++
			}
		}
		guaranteed = guaranteed && n == 2
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, r := range requests {
			if l, ok := limits[name]; !ok || l.Cmp(r) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(limits) == 2 {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

func addTo(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	cur := l[name]
	cur.Add(q)
	l[name] = cur
}

// podRequest is the pod's effective request of name (upstream's
// PodRequests: regular and sidecar containers summed, each init container
// with the sidecars started before it, the larger; plus overhead).
func podRequest(p *corev1.Pod, name corev1.ResourceName) resource.Quantity {
	var sum resource.Quantity
	for _, c := range p.Spec.Containers {
		sum.Add(c.Resources.Requests[name])
	}
	var sidecars, maxInit resource.Quantity
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Add(c.Resources.Requests[name])
			continue
		}
		q := c.Resources.Requests[name].DeepCopy()
		q.Add(sidecars)
		if q.Cmp(maxInit) > 0 {
			maxInit = q
		}
	}
	sum.Add(sidecars)
	if maxInit.Cmp(sum) > 0 {
		sum = maxInit
	}
	if o, ok := p.Spec.Overhead[name]; ok {
		sum.Add(o)
	}
	return sum
}

func qty(q *resource.Quantity) resource.Quantity {
	if q == nil {
		return resource.Quantity{Format: resource.BinarySI}
	}
	return q.DeepCopy()
}

// diskUsage is the pod's ephemeral storage (or inode) usage: writable
// layers (unless the images have a filesystem of their own and the signal
// is the node fs), logs and local volumes.
func diskUsage(s PodStats, inodes, withRootfs bool) resource.Quantity {
	var u resource.Quantity
	for _, c := range s.Containers {
		if inodes {
			if withRootfs {
				u.Add(qty(c.RootfsInodes))
			}
			u.Add(qty(c.LogsInodes))
		} else {
			if withRootfs {
				u.Add(qty(c.Rootfs))
			}
			u.Add(qty(c.Logs))
		}
	}
	if inodes {
		u.Add(qty(s.VolumeInodes))
	} else {
		u.Add(qty(s.Volumes))
	}
	return u
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// Rank orders pods for eviction under signal, as upstream's rank
// functions: memory — usage above requests first, then lower priority,
// then usage minus requests (largest first); disk — the same with
// ephemeral storage (or inodes); PIDs — lower priority, then more
// processes. Pods without stats come first.
func Rank(signal Signal, pods []*corev1.Pod, stats StatsFunc, dedicatedImageFs bool) []*corev1.Pod {
	out := append([]*corev1.Pod(nil), pods...)
	priority := func(a, b *corev1.Pod) int {
		pa, pb := corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)
		switch {
		case pa == pb:
			return 0
		case pa < pb:
			return -1
		}
		return 1
	}
	var usage func(p *corev1.Pod, s PodStats) resource.Quantity
	var request func(p *corev1.Pod) resource.Quantity
	switch signal {
	case SignalMemoryAvailable, SignalAllocatableMemoryAvailable:
		usage = func(_ *corev1.Pod, s PodStats) resource.Quantity { return qty(s.Memory) }
		request = func(p *corev1.Pod) resource.Quantity { return podRequest(p, corev1.ResourceMemory) }
	case SignalPIDAvailable:
	default:
		inodes := signal == SignalNodeFsInodesFree || signal == SignalImageFsInodesFree
		withRootfs := !dedicatedImageFs || signal == SignalImageFsAvailable || signal == SignalImageFsInodesFree
		usage = func(_ *corev1.Pod, s PodStats) resource.Quantity { return diskUsage(s, inodes, withRootfs) }
		request = func(p *corev1.Pod) resource.Quantity {
			if inodes {
				return resource.Quantity{}
			}
			return podRequest(p, corev1.ResourceEphemeralStorage)
		}
	}
	cmp := func(a, b *corev1.Pod) int {
		sa, oka := stats(a)
		sb, okb := stats(b)
		if !oka || !okb {
			if c := cmpBool(!oka, !okb); c != 0 {
				return c
			}
			return priority(a, b)
		}
		if usage == nil { // PIDs
			if c := priority(a, b); c != 0 {
				return c
			}
			switch {
			case sa.Processes > sb.Processes:
				return -1
			case sa.Processes < sb.Processes:
				return 1
			}
			return 0
		}
		ua, ub := usage(a, sa), usage(b, sb)
		ra, rb := request(a), request(b)
		if c := cmpBool(ua.Cmp(ra) > 0, ub.Cmp(rb) > 0); c != 0 {
			return c
		}
		if c := priority(a, b); c != 0 {
			return c
		}
		ua.Sub(ra)
		ub.Sub(rb)
		return ub.Cmp(ua)
	}
	sort.SliceStable(out, func(i, j int) bool { return cmp(out[i], out[j]) < 0 })
	return out
}

// Message is upstream's eviction message and annotations: the resource
// the node was low on, the threshold and what was available, and each
// container using more than it requested.
func Message(res corev1.ResourceName, p *corev1.Pod, stats StatsFunc, thresholds []Threshold, obs Observations) (string, map[string]string) {
	msg := fmt.Sprintf(nodeLowMessageFmt, res)
	for _, t := range thresholds {
		if signalToResource[t.Signal] != res {
			continue
		}
		if o, ok := obs[t.Signal]; ok && o.Available != nil {
			msg += fmt.Sprintf(thresholdMetMessageFmt, t.Value.Of(o.Capacity), o.Available)
		}
		break
	}
	ann := map[string]string{}
	s, ok := stats(p)
	if !ok {
		return msg, ann
	}
	var names, usages []string
	containers := append(append([]corev1.Container{}, p.Spec.Containers...), p.Spec.InitContainers...)
	for _, cs := range s.Containers {
		for _, c := range containers {
			if c.Name != cs.Name {
				continue
			}
			req := c.Resources.Requests[res]
			var use *resource.Quantity
			switch res {
			case corev1.ResourceMemory:
				use = cs.Memory
			case corev1.ResourceEphemeralStorage:
				if cs.Rootfs != nil && cs.Logs != nil {
					u := cs.Rootfs.DeepCopy()
					u.Add(*cs.Logs)
					use = &u
				}
			}
			if use != nil && use.Cmp(req) > 0 {
				msg += fmt.Sprintf(containerMessageFmt, c.Name, use.String(), req.String(), res)
				names = append(names, c.Name)
				usages = append(usages, use.String())
			}
			break
		}
	}
	ann["offending_containers"] = strings.Join(names, ",")
	ann["offending_containers_usage"] = strings.Join(usages, ",")
	ann["starved_resource"] = string(res)
	return msg, ann
}

// Admit is upstream's eviction admit handler: under no pressure all pods
// are admitted, critical pods always; under memory pressure alone only
// BestEffort pods not tolerating the memory-pressure taint are refused;
// under any other pressure every other pod is. It returns the refusal's
// reason and message.
func Admit(conditions []corev1.NodeConditionType, p *corev1.Pod) (bool, string, string) {
	if len(conditions) == 0 || IsCriticalPod(p) {
		return true, "", ""
	}
	if len(conditions) == 1 && conditions[0] == corev1.NodeMemoryPressure {
		if QOSClass(p) != corev1.PodQOSBestEffort {
			return true, "", ""
		}
		if corev1helpers.TolerationsTolerateTaint(p.Spec.Tolerations, &corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}) {
			return true, "", ""
		}
	}
	return false, Reason, fmt.Sprintf(nodeConditionMessageFmt, conditions)
}
