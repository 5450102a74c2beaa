package daemon

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/corev1helpers"
	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/nodeaffinity"
)

// Labels and annotation the controller puts on pods, as upstream's.
const (
	// TemplateGenerationLabel is the pod label carrying the DaemonSet's
	// template generation.
	TemplateGenerationLabel = "pod-template-generation"
	// HashLabel is the pod and revision label carrying the template hash.
	HashLabel = appsv1.DefaultDaemonSetUniqueLabelKey
)

// daemonTolerations are the tolerations every daemon pod gets (upstream's
// AddOrUpdateDaemonPodTolerations); network-unavailable only for
// hostNetwork pods.
func daemonTolerations(hostNetwork bool) []corev1.Toleration {
	t := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if hostNetwork {
		t = append(t, corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return t
}

// addDaemonTolerations adds (or replaces, same key/operator/effect... as
// upstream's AddOrUpdateTolerationInPodSpec: same key and effect and
// operator match) the daemon tolerations to spec.
func addDaemonTolerations(spec *corev1.PodSpec) {
	for _, want := range daemonTolerations(spec.HostNetwork) {
		replaced := false
		for i := range spec.Tolerations {
			if spec.Tolerations[i].MatchToleration(&want) {
				spec.Tolerations[i] = want
				replaced = true
				break
			}
		}
		if !replaced {
			spec.Tolerations = append(spec.Tolerations, want)
		}
	}
}

// NodeShouldRunDaemonPod is upstream's: shouldRun is whether a daemon pod
// should be placed on the node (template nodeName, nodeSelector, required
// node affinity, NoSchedule/NoExecute taints tolerated, daemon tolerations
// included); shouldContinueRunning is whether an existing one may stay
// (only untolerated NoExecute taints evict).
func NodeShouldRunDaemonPod(node *corev1.Node, ds *appsv1.DaemonSet) (shouldRun, shouldContinueRunning bool) {
	spec := ds.Spec.Template.Spec.DeepCopy()
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false, false
	}
	addDaemonTolerations(spec)
	// Parse errors of the affinity count as no match, as upstream's.
	if fits, _ := nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: *spec}).Match(node); !fits {
		return false, false
	}
	if _, bad := corev1helpers.FindMatchingUntoleratedTaint(node.Spec.Taints, spec.Tolerations, corev1helpers.DoNotScheduleTaint); bad {
		_, evict := corev1helpers.FindMatchingUntoleratedTaint(node.Spec.Taints, spec.Tolerations, func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute })
		return false, !evict
	}
	return true, true
}

// templateGeneration is the DaemonSet's deprecated.daemonset.template.generation
// annotation (nil when absent or invalid).
func templateGeneration(ds *appsv1.DaemonSet) *int64 {
	v, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// isPodUpdated: the pod carries the current hash or template generation.
func isPodUpdated(p *corev1.Pod, hash string, generation *int64) bool {
	return (generation != nil && p.Labels[TemplateGenerationLabel] == fmt.Sprint(*generation)) ||
		(hash != "" && p.Labels[HashLabel] == hash)
}

// nodeNameAffinity replaces the required node affinity's terms with one
// matching metadata.name = node (upstream's
// ReplaceDaemonSetPodNodeNameNodeAffinity: the scheduler binds the pod).
func nodeNameAffinity(a *corev1.Affinity, node string) *corev1.Affinity {
	term := corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}
	if a == nil {
		a = &corev1.Affinity{}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	if a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = []corev1.NodeSelectorTerm{term}
	return a
}

// targetNodeName is the pod's node: spec.nodeName, else the node its
// required metadata.name affinity names.
func targetNodeName(p *corev1.Pod) (string, error) {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName, nil
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", fmt.Errorf("no spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution for pod %s/%s", p.Namespace, p.Name)
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn {
				if len(f.Values) != 1 {
					return "", fmt.Errorf("the matchFields value of '%s' is not unique for pod %s/%s", metav1.ObjectNameField, p.Namespace, p.Name)
				}
				return f.Values[0], nil
			}
		}
	}
	return "", fmt.Errorf("no node name found for pod %s/%s", p.Namespace, p.Name)
}

func surgeCount(ds *appsv1.DaemonSet, n int) (int, error) {
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		return 0, nil
	}
	r := ds.Spec.UpdateStrategy.RollingUpdate
	if r == nil || r.MaxSurge == nil {
		return 0, nil
	}
	return intstr.GetScaledValueFromIntOrPercent(r.MaxSurge, n, true)
}

func unavailableCount(ds *appsv1.DaemonSet, n int) (int, error) {
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		return 0, nil
	}
	r := ds.Spec.UpdateStrategy.RollingUpdate
	if r == nil || r.MaxUnavailable == nil {
		return 0, nil
	}
	return intstr.GetScaledValueFromIntOrPercent(r.MaxUnavailable, n, true)
}

func allowsSurge(ds *appsv1.DaemonSet) bool {
	n, err := surgeCount(ds, 1)
	return err == nil && n > 0
}

// backoff is upstream's flowcontrol.Backoff for failed daemon pods: per
// key, doubling from initial up to max, forgotten after 2×max quiet.
type backoff struct {
	mu           sync.Mutex
	initial, max time.Duration
	entries      map[string]*backoffEntry
}

type backoffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
}

func newBackoff(initial, max time.Duration) *backoff {
	return &backoff{initial: initial, max: max, entries: map[string]*backoffEntry{}}
}

// inBackoffSinceUpdate: key's last failure was less than its delay ago.
func (b *backoff) inBackoffSinceUpdate(key string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	return ok && now.Sub(e.lastUpdate) < e.delay
}

func (b *backoff) get(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.entries[key]; ok {
		return e.delay
	}
	return 0
}

// next records a failure at now: the delay starts at initial (or after a
// quiet 2×max) and doubles up to max.
func (b *backoff) next(key string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || now.Sub(e.lastUpdate) > 2*b.max {
		b.entries[key] = &backoffEntry{delay: b.initial, lastUpdate: now}
		return
	}
	e.delay = min(2*e.delay, b.max)
	e.lastUpdate = now
}

// gc forgets keys quiet for 2×max.
func (b *backoff) gc(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, e := range b.entries {
		if now.Sub(e.lastUpdate) > 2*b.max {
			delete(b.entries, k)
		}
	}
}
