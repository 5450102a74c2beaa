package podtopologyspread

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/corev1helpers"
	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/nodeaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
)

// topologySpreadConstraint is a parsed TopologySpreadConstraint.
type topologySpreadConstraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy corev1.NodeInclusionPolicy
	NodeTaintsPolicy   corev1.NodeInclusionPolicy
}

// matchNodeInclusionPolicies: the node counts for the constraint under
// its nodeAffinityPolicy and nodeTaintsPolicy.
func (c *topologySpreadConstraint) matchNodeInclusionPolicies(pod *corev1.Pod, node *corev1.Node, required nodeaffinity.RequiredNodeAffinity) bool {
	if c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor {
		// Parse errors count as no match, as upstream's.
		if match, _ := required.Match(node); !match {
			return false
		}
	}
	if c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, corev1helpers.DoNotScheduleTaint); untolerated {
			return false
		}
	}
	return true
}

// buildDefaultConstraints: the default constraints of action, with the
// selector of the pod's Services and controller; none when that selector
// is empty.
func (pl *PodTopologySpread) buildDefaultConstraints(p *corev1.Pod, action corev1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	constraints, err := filterTopologySpreadConstraints(pl.defaultConstraints, p.Labels, action)
	if err != nil || len(constraints) == 0 {
		return nil, err
	}
	selector := helper.DefaultSelector(p, pl.services, pl.replicationCtrls, pl.replicaSets, pl.statefulSets)
	if selector.Empty() {
		return nil, nil
	}
	for i := range constraints {
		constraints[i].Selector = selector
	}
	return constraints, nil
}

// nodeLabelsMatchSpreadConstraints: the node has every topology key.
func nodeLabelsMatchSpreadConstraints(nodeLabels map[string]string, constraints []topologySpreadConstraint) bool {
	for i := range constraints {
		if _, ok := nodeLabels[constraints[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// filterTopologySpreadConstraints parses the constraints of action:
// matchLabelKeys present in the pod's labels are ANDed into the selector;
// minDomains defaults to 1, nodeAffinityPolicy to Honor, nodeTaintsPolicy
// to Ignore.
func filterTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, podLabels map[string]string, action corev1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	var result []topologySpreadConstraint
	for i := range constraints {
		c := &constraints[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			matchLabels := make(labels.Set)
			for _, k := range c.MatchLabelKeys {
				if v, ok := podLabels[k]; ok {
					matchLabels[k] = v
				}
			}
			if len(matchLabels) > 0 {
				selector = mergeLabelSetWithSelector(matchLabels, selector)
			}
		}
		tsc := topologySpreadConstraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           selector,
			MinDomains:         1,
			NodeAffinityPolicy: corev1.NodeInclusionPolicyHonor,
			NodeTaintsPolicy:   corev1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			tsc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			tsc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			tsc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		result = append(result, tsc)
	}
	return result, nil
}

func mergeLabelSetWithSelector(matchLabels labels.Set, s labels.Selector) labels.Selector {
	merged := labels.SelectorFromSet(matchLabels)
	if reqs, ok := s.Requirements(); ok {
		for _, r := range reqs {
			merged = merged.Add(r)
		}
	}
	return merged
}

// countPodsMatchSelector counts the non-terminating pods of namespace ns
// the selector matches.
func countPodsMatchSelector(podInfos []*framework.PodInfo, selector labels.Selector, ns string) int {
	n := 0
	for _, pi := range podInfos {
		p := pi.Pod
		// Terminating pods are not counted (upstream #87621).
		if p.DeletionTimestamp != nil || p.Namespace != ns {
			continue
		}
		if selector.Matches(labels.Set(p.Labels)) {
			n++
		}
	}
	return n
}

// podLabelsMatchSpreadConstraints: a constraint selects pods with these
// labels.
func podLabelsMatchSpreadConstraints(constraints []topologySpreadConstraint, podLabels map[string]string) bool {
	for i := range constraints {
		if constraints[i].Selector.Matches(labels.Set(podLabels)) {
			return true
		}
	}
	return false
}
