package nodeaffinity

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NodeSelector is a parsed corev1.NodeSelector that parsed without
// errors.
type NodeSelector struct {
	lazy LazyErrorNodeSelector
}

// NewNodeSelector parses ns; an error (every parse error, flattened) when
// a term does not parse.
func NewNodeSelector(ns *corev1.NodeSelector, opts ...field.PathOption) (*NodeSelector, error) {
	lazy := NewLazyErrorNodeSelector(ns, opts...)
	var errs []error
	for i := range lazy.terms {
		errs = append(errs, lazy.terms[i].parseErrs...)
	}
	if len(errs) != 0 {
		return nil, utilerrors.Flatten(utilerrors.NewAggregate(errs))
	}
	return &NodeSelector{lazy: *lazy}, nil
}

// Match reports whether a term matches node.
func (ns *NodeSelector) Match(node *corev1.Node) bool {
	m, _ := ns.lazy.Match(node)
	return m
}

// LazyErrorNodeSelector is a parsed corev1.NodeSelector whose parse
// errors are reported by Match, and only when no term matched.
type LazyErrorNodeSelector struct {
	terms []nodeSelectorTerm
}

// NewLazyErrorNodeSelector parses ns; empty terms are dropped (they match
// nothing).
func NewLazyErrorNodeSelector(ns *corev1.NodeSelector, opts ...field.PathOption) *LazyErrorNodeSelector {
	path := field.ToPath(opts...).Child("nodeSelectorTerms")
	terms := make([]nodeSelectorTerm, 0, len(ns.NodeSelectorTerms))
	for i := range ns.NodeSelectorTerms {
		t := &ns.NodeSelectorTerms[i]
		if isEmptyTerm(t) {
			continue
		}
		terms = append(terms, newNodeSelectorTerm(t, path.Index(i)))
	}
	return &LazyErrorNodeSelector{terms: terms}
}

// Match reports whether a term matches node (ORed); the parse errors of
// the terms are returned when none matched. A nil node matches nothing.
func (ns *LazyErrorNodeSelector) Match(node *corev1.Node) (bool, error) {
	if node == nil {
		return false, nil
	}
	var errs []error
	for i := range ns.terms {
		t := &ns.terms[i]
		if len(t.parseErrs) > 0 {
			errs = append(errs, t.parseErrs...)
			continue
		}
		if t.match(node) {
			return true, nil
		}
	}
	return false, utilerrors.Flatten(utilerrors.NewAggregate(errs))
}

// PreferredSchedulingTerms are parsed preferred node affinity terms.
type PreferredSchedulingTerms struct {
	terms []preferredTerm
}

type preferredTerm struct {
	nodeSelectorTerm
	weight int64
}

// NewPreferredSchedulingTerms parses terms (those of weight 0 or empty are
// skipped); an error with every parse error when one does not parse.
func NewPreferredSchedulingTerms(terms []corev1.PreferredSchedulingTerm, opts ...field.PathOption) (*PreferredSchedulingTerms, error) {
	p := field.ToPath(opts...)
	var errs []error
	parsed := make([]preferredTerm, 0, len(terms))
	for i := range terms {
		if terms[i].Weight == 0 || isEmptyTerm(&terms[i].Preference) {
			continue
		}
		t := preferredTerm{nodeSelectorTerm: newNodeSelectorTerm(&terms[i].Preference, p.Index(i)), weight: int64(terms[i].Weight)}
		if len(t.parseErrs) > 0 {
			errs = append(errs, t.parseErrs...)
			continue
		}
		parsed = append(parsed, t)
	}
	if len(errs) != 0 {
		return nil, utilerrors.Flatten(utilerrors.NewAggregate(errs))
	}
	return &PreferredSchedulingTerms{terms: parsed}, nil
}

// Score is the sum of the weights of the terms node matches.
func (t *PreferredSchedulingTerms) Score(node *corev1.Node) int64 {
	var score int64
	for i := range t.terms {
		if t.terms[i].match(node) {
			score += t.terms[i].weight
		}
	}
	return score
}

// RequiredNodeAffinity is a pod's required placement: spec.nodeSelector
// AND spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.
type RequiredNodeAffinity struct {
	nodeSelector []labelPair // nil: no nodeSelector
	hasSelector  bool
	affinity     *LazyErrorNodeSelector // nil: no required node affinity
}

type labelPair struct{ key, value string }

// GetRequiredNodeAffinity parses the pod's nodeSelector and required node
// affinity.
func GetRequiredNodeAffinity(pod *corev1.Pod) RequiredNodeAffinity {
	var r RequiredNodeAffinity
	if len(pod.Spec.NodeSelector) > 0 {
		r.hasSelector = true
		r.nodeSelector = make([]labelPair, 0, len(pod.Spec.NodeSelector))
		for k, v := range pod.Spec.NodeSelector {
			r.nodeSelector = append(r.nodeSelector, labelPair{k, v})
		}
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		r.affinity = NewLazyErrorNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	}
	return r
}

// IsEmpty reports whether the pod has neither a nodeSelector nor a
// required node affinity (every node matches).
func (r RequiredNodeAffinity) IsEmpty() bool { return !r.hasSelector && r.affinity == nil }

// Match reports whether node satisfies both the nodeSelector and the
// required node affinity; the error is the affinity's parse errors when no
// term matched.
func (r RequiredNodeAffinity) Match(node *corev1.Node) (bool, error) {
	if r.hasSelector {
		if node == nil {
			return false, nil
		}
		for _, p := range r.nodeSelector {
			v, ok := node.Labels[p.key]
			if !ok || v != p.value {
				return false, nil
			}
		}
	}
	if r.affinity != nil {
		return r.affinity.Match(node)
	}
	return true, nil
}

func isEmptyTerm(t *corev1.NodeSelectorTerm) bool {
	return len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0
}

// nodeSelectorTerm is a parsed term: every requirement must match.
type nodeSelectorTerm struct {
	exprs     []requirement
	fields    []requirement
	parseErrs []error
}

type requirement struct {
	key    string
	op     corev1.NodeSelectorOperator
	values []string
	num    int64 // Gt/Lt operand
}

var validSelectorOperators = []string{
	string(corev1.NodeSelectorOpIn), string(corev1.NodeSelectorOpNotIn), string(corev1.NodeSelectorOpExists),
	string(corev1.NodeSelectorOpDoesNotExist), string(corev1.NodeSelectorOpGt), string(corev1.NodeSelectorOpLt),
}

var validFieldSelectorOperators = []string{string(corev1.NodeSelectorOpIn), string(corev1.NodeSelectorOpNotIn)}

var toSelection = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
	corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan,
}

func newNodeSelectorTerm(t *corev1.NodeSelectorTerm, path *field.Path) nodeSelectorTerm {
	var out nodeSelectorTerm
	if len(t.MatchExpressions) != 0 {
		p := path.Child("matchExpressions")
		out.exprs = make([]requirement, 0, len(t.MatchExpressions))
		for i, e := range t.MatchExpressions {
			ip := p.Index(i)
			op, ok := toSelection[e.Operator]
			if !ok {
				out.parseErrs = append(out.parseErrs, field.NotSupported(ip.Child("operator"), e.Operator, validSelectorOperators))
				continue
			}
			// labels.NewRequirement validates key, operator and values
			// with upstream's messages.
			if _, err := labels.NewRequirement(e.Key, op, e.Values, field.WithPath(ip)); err != nil {
				out.parseErrs = append(out.parseErrs, err)
				continue
			}
			r := requirement{key: e.Key, op: e.Operator, values: e.Values}
			if e.Operator == corev1.NodeSelectorOpGt || e.Operator == corev1.NodeSelectorOpLt {
				r.num, _ = strconv.ParseInt(e.Values[0], 10, 64) // validated above
			}
			out.exprs = append(out.exprs, r)
		}
	}
	if len(t.MatchFields) != 0 {
		p := path.Child("matchFields")
		out.fields = make([]requirement, 0, len(t.MatchFields))
		for i, e := range t.MatchFields {
			ip := p.Index(i)
			switch e.Operator {
			case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
				if len(e.Values) != 1 {
					out.parseErrs = append(out.parseErrs, field.Invalid(ip.Child("values"), e.Values, "must have one element"))
					continue
				}
				out.fields = append(out.fields, requirement{key: e.Key, op: e.Operator, values: e.Values})
			default:
				out.parseErrs = append(out.parseErrs, field.NotSupported(ip.Child("operator"), e.Operator, validFieldSelectorOperators))
			}
		}
	}
	return out
}

// match: every expression over the labels, and (for a node with a name)
// every field requirement over metadata.name. Callers check parseErrs.
func (t *nodeSelectorTerm) match(node *corev1.Node) bool {
	if len(t.parseErrs) > 0 {
		return false
	}
	for i := range t.exprs {
		if !t.exprs[i].matchLabels(node.Labels) {
			return false
		}
	}
	if node.Name != "" {
		for i := range t.fields {
			r := &t.fields[i]
			v := ""
			if r.key == metav1.ObjectNameField {
				v = node.Name
			}
			if (v == r.values[0]) != (r.op == corev1.NodeSelectorOpIn) {
				return false
			}
		}
	}
	return true
}

func (r *requirement) matchLabels(ls map[string]string) bool {
	v, ok := ls[r.key]
	switch r.op {
	case corev1.NodeSelectorOpIn:
		return ok && r.has(v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !r.has(v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		if r.op == corev1.NodeSelectorOpGt {
			return n > r.num
		}
		return n < r.num
	}
	return false
}

func (r *requirement) has(v string) bool {
	for _, x := range r.values {
		if x == v {
			return true
		}
	}
	return false
}
