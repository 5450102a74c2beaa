package interpodaffinity

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

// Name is the plugin's name in profiles.
const Name = names.InterPodAffinity

var (
	_ framework.PreFilterPlugin     = (*InterPodAffinity)(nil)
	_ framework.PreFilterExtensions = (*InterPodAffinity)(nil)
	_ framework.FilterPlugin        = (*InterPodAffinity)(nil)
	_ framework.PreScorePlugin      = (*InterPodAffinity)(nil)
	_ framework.ScorePlugin         = (*InterPodAffinity)(nil)
	_ framework.ScoreExtensions     = (*InterPodAffinity)(nil)
	_ framework.EnqueueExtensions   = (*InterPodAffinity)(nil)
)

// InterPodAffinity checks and scores inter-pod affinity.
type InterPodAffinity struct {
	handle       framework.Handle
	parallelizer framework.Parallelizer
	// hardPodAffinityWeight and ignorePreferredTermsOfExistingPods are
	// the plugin's args (defaults 1 and false).
	hardPodAffinityWeight              int32
	ignorePreferredTermsOfExistingPods bool
	// nsLister reads namespaces (their labels, for namespace selectors);
	// nil without an informer factory (every namespace then has no
	// labels).
	nsLister cache.Lister[*corev1.Namespace]

	// Per-node results kept across cycles (memo.go).
	incomingMemos memoTable[incomingResult]
	existingMemos memoTable[scoreResult]
	scoreMemos    memoTable[scoreResult]
}

// New builds the plugin from *config.InterPodAffinityArgs (nil: the
// defaults).
func New(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	if h == nil || h.SnapshotSharedLister() == nil {
		return nil, fmt.Errorf("SnapshotSharedlister is nil")
	}
	args := &config.InterPodAffinityArgs{}
	if obj != nil {
		a, ok := obj.(*config.InterPodAffinityArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type InterPodAffinityArgs, got %T", obj)
		}
		args = a.DeepCopyObject().(*config.InterPodAffinityArgs)
	}
	config.SetDefaultsArgs(args)
	if errs := config.ValidateInterPodAffinityArgs(nil, args); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	pl := &InterPodAffinity{
		handle:                             h,
		parallelizer:                       h.Parallelizer(),
		hardPodAffinityWeight:              *args.HardPodAffinityWeight,
		ignorePreferredTermsOfExistingPods: args.IgnorePreferredTermsOfExistingPods,
	}
	if f := h.SharedInformerFactory(); f != nil {
		pl.nsLister = f.Namespaces().Lister()
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *InterPodAffinity) Name() string { return Name }

func (pl *InterPodAffinity) snapshot() (framework.NodeInfoLister, error) {
	l := pl.handle.SnapshotSharedLister()
	if l == nil {
		return nil, fmt.Errorf("empty shared lister in InterPodAffinity")
	}
	return l.NodeInfos(), nil
}

// namespaceLabels returns the labels of namespace ns (nil when it is not
// known: upstream assumes an empty set then). The informer's object is
// never modified, so it is not copied.
func (pl *InterPodAffinity) namespaceLabels(ns string) labels.Set {
	if pl.nsLister == nil {
		return nil
	}
	n, err := pl.nsLister.Get(ns)
	if err != nil {
		return nil
	}
	return n.Labels
}

// term is a parsed affinity term of the incoming pod, with its namespace
// selector resolved (upstream's mergeAffinityTermNamespacesIfNotEmpty):
// it matches pods of allNamespaces, or of namespace single (when
// hasSingle), or of ns.
type term struct {
	single    string
	hasSingle bool
	// few holds a few namespaces (compared directly), ns more of them.
	few           []string
	ns            sets.Set[string]
	allNamespaces bool
	selector      labels.Selector
	topologyKey   string
	weight        int32
}

// matches reports whether the term selects pod (namespace and labels).
func (t *term) matches(pod *corev1.Pod) bool {
	if !t.allNamespaces && !(t.hasSingle && pod.Namespace == t.single) && !t.inFew(pod.Namespace) && !t.ns.Has(pod.Namespace) {
		return false
	}
	return t.selector.Matches(labels.Set(pod.Labels))
}

func (t *term) inFew(ns string) bool {
	for _, n := range t.few {
		if n == ns {
			return true
		}
	}
	return false
}

// addNamespace adds ns to the namespaces the term selects.
func (t *term) addNamespace(ns string) {
	switch {
	case !t.hasSingle:
		t.single, t.hasSingle = ns, true
	case t.ns != nil:
		t.ns.Insert(ns)
	case len(t.few) < 4:
		t.few = append(t.few, ns)
	default:
		t.ns = sets.New(t.few...)
		t.few = nil
		t.ns.Insert(ns)
	}
}

// matchesAll reports whether pod matches every term (false for none), as
// upstream's podMatchesAllAffinityTerms.
func matchesAll(terms []term, pod *corev1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].matches(pod) {
			return false
		}
	}
	return true
}

// podTerms are the incoming pod's parsed terms.
type podTerms struct {
	affinity, antiAffinity                   []term
	preferredAffinity, preferredAntiAffinity []term
}

// parseTerms parses the pod's affinity terms as upstream's NewPodInfo
// (the same error text: "requiredAffinityTerms: ..." and so on, several
// errors as "[a, b]"), resolving namespace selectors when resolve is set
// (required terms for PreFilter, preferred ones for PreScore).
func (pl *InterPodAffinity) parseTerms(pod *corev1.Pod, resolveRequired, resolvePreferred bool) (*podTerms, error) {
	pt := &podTerms{}
	var errs []string
	var req, reqAnti []corev1.PodAffinityTerm
	var pref, prefAnti []corev1.WeightedPodAffinityTerm
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			req = a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			pref = a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
		if a.PodAntiAffinity != nil {
			reqAnti = a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			prefAnti = a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
	}
	var err error
	if pt.affinity, err = pl.terms(pod, len(req), func(i int) (*corev1.PodAffinityTerm, int32) { return &req[i], 0 }, resolveRequired); err != nil {
		errs = append(errs, "requiredAffinityTerms: "+err.Error())
	}
	if pt.antiAffinity, err = pl.terms(pod, len(reqAnti), func(i int) (*corev1.PodAffinityTerm, int32) { return &reqAnti[i], 0 }, resolveRequired); err != nil {
		errs = append(errs, "requiredAntiAffinityTerms: "+err.Error())
	}
	if pt.preferredAffinity, err = pl.terms(pod, len(pref), func(i int) (*corev1.PodAffinityTerm, int32) {
		return &pref[i].PodAffinityTerm, pref[i].Weight
	}, resolvePreferred); err != nil {
		errs = append(errs, "preferredAffinityTerms: "+err.Error())
	}
	if pt.preferredAntiAffinity, err = pl.terms(pod, len(prefAnti), func(i int) (*corev1.PodAffinityTerm, int32) {
		return &prefAnti[i].PodAffinityTerm, prefAnti[i].Weight
	}, resolvePreferred); err != nil {
		errs = append(errs, "preferredAntiAffinityTerms: "+err.Error())
	}
	switch len(errs) {
	case 0:
		return pt, nil
	case 1:
		return pt, fmt.Errorf("%s", errs[0])
	default:
		return pt, fmt.Errorf("[%s]", strings.Join(errs, ", "))
	}
}

// terms parses n terms; the first error drops them all, as upstream's
// getAffinityTerms.
func (pl *InterPodAffinity) terms(pod *corev1.Pod, n int, get func(int) (*corev1.PodAffinityTerm, int32), resolve bool) ([]term, error) {
	if n == 0 {
		return nil, nil
	}
	out := make([]term, 0, n)
	for i := 0; i < n; i++ {
		in, weight := get(i)
		sel, err := metav1.LabelSelectorAsSelector(in.LabelSelector)
		if err != nil {
			return nil, err
		}
		t := term{selector: sel, topologyKey: in.TopologyKey, weight: weight}
		if len(in.Namespaces) == 0 && in.NamespaceSelector == nil {
			t.addNamespace(pod.Namespace)
		}
		for _, ns := range in.Namespaces {
			t.addNamespace(ns)
		}
		if in.NamespaceSelector != nil {
			nsSel, err := metav1.LabelSelectorAsSelector(in.NamespaceSelector)
			if err != nil {
				return nil, err
			}
			if nsSel.Empty() {
				t.allNamespaces = true
			} else if resolve && pl.nsLister != nil {
				nss, err := pl.nsLister.List(nsSel)
				if err != nil {
					return nil, err
				}
				for _, ns := range nss {
					t.addNamespace(ns.Name)
				}
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// EventsToRegister: assigned pods added, deleted or relabelled, and nodes
// added or relabelled, with upstream's queueing hints (the node events
// without UpdateNodeTaint, as upstream registers them with queueing hints
// enabled, its 1.34 default).
func (pl *InterPodAffinity) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete}, QueueingHintFn: pl.isSchedulableAfterPodChange},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

func as[T any](oldObj, newObj any) (T, T, error) {
	var o, n T
	if oldObj != nil {
		v, ok := oldObj.(T)
		if !ok {
			return o, n, fmt.Errorf("expected %T, but got %T", o, oldObj)
		}
		o = v
	}
	if newObj != nil {
		v, ok := newObj.(T)
		if !ok {
			return o, n, fmt.Errorf("expected %T, but got %T", n, newObj)
		}
		n = v
	}
	return o, n, nil
}

// requiredTerms parses the pod's required (anti-)affinity terms as
// upstream's framework.GetAffinityTerms (namespace selectors not
// resolved: hints match them against no namespace labels, as upstream).
func requiredTerms(pod *corev1.Pod) (aff, anti []framework.AffinityTerm, err error) {
	a := pod.Spec.Affinity
	if a == nil {
		return nil, nil, nil
	}
	parse := func(in []corev1.PodAffinityTerm) ([]framework.AffinityTerm, error) {
		var out []framework.AffinityTerm
		for i := range in {
			t, err := framework.NewAffinityTerm(pod, &in[i])
			if err != nil {
				return nil, err
			}
			out = append(out, *t)
		}
		return out, nil
	}
	if a.PodAffinity != nil {
		if aff, err = parse(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			return nil, nil, err
		}
	}
	if a.PodAntiAffinity != nil {
		if anti, err = parse(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			return nil, nil, err
		}
	}
	return aff, anti, nil
}

func matchesAllTerms(terms []framework.AffinityTerm, pod *corev1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// isSchedulableAfterPodChange is upstream 1.34's hint: an assigned pod
// added that matches all the pod's affinity terms, updated to start
// matching them or to stop matching all its anti-affinity terms, or
// deleted while matching all its anti-affinity terms.
func (pl *InterPodAffinity) isSchedulableAfterPodChange(logger *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := as[*corev1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if (modified != nil && modified.Spec.NodeName == "") || (original != nil && original.Spec.NodeName == "") {
		return framework.QueueSkip, nil
	}
	terms, antiTerms, err := requiredTerms(pod)
	if err != nil {
		return framework.Queue, err
	}
	switch {
	case modified != nil && original != nil:
		if !matchesAllTerms(terms, original) && matchesAllTerms(terms, modified) {
			return framework.Queue, nil
		}
		if matchesAllTerms(antiTerms, original) && !matchesAllTerms(antiTerms, modified) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	case modified != nil:
		if matchesAllTerms(terms, modified) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if original == nil || !matchesAllTerms(antiTerms, original) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// isSchedulableAfterNodeChange is upstream 1.34's hint: for an affinity
// term, a node added with its topology key, or updated to get the key or
// another value of it; for an anti-affinity term, any node added, or a
// node updated to lose the key or change its value.
func (pl *InterPodAffinity) isSchedulableAfterNodeChange(logger *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	original, modified, err := as[*corev1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if modified == nil {
		return framework.QueueSkip, nil
	}
	terms, antiTerms, err := requiredTerms(pod)
	if err != nil {
		return framework.Queue, err
	}
	for _, t := range terms {
		newV, newHas := modified.Labels[t.TopologyKey]
		if original == nil {
			if newHas {
				return framework.Queue, nil
			}
			continue
		}
		oldV, oldHas := original.Labels[t.TopologyKey]
		if newHas && (!oldHas || oldV != newV) {
			return framework.Queue, nil
		}
	}
	for _, t := range antiTerms {
		if original == nil {
			return framework.Queue, nil
		}
		oldV, oldHas := original.Labels[t.TopologyKey]
		newV, newHas := modified.Labels[t.TopologyKey]
		if oldHas && (!newHas || oldV != newV) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}
