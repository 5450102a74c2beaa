// Package nodeaffinity is upstream's
// k8s.io/component-helpers/scheduling/corev1/nodeaffinity: node selectors
// (NodeSelectorTerms ORed, each term's matchExpressions over the node's
// labels and matchFields over metadata.name ANDed) parsed once and matched
// against many nodes, preferred scheduling terms scored by summed weights,
// and a pod's required placement (spec.nodeSelector AND the required node
// affinity).
//
// Invariants:
//   - The semantics are upstream's exactly: an empty term matches nothing;
//     In/NotIn/Exists/DoesNotExist/Gt/Lt as labels.Requirement (NotIn and
//     DoesNotExist match a node without the label; Gt/Lt compare integers
//     and fail on a non-integer label); matchFields only In/NotIn with one
//     value, ignored for a node without a name; a term that does not parse
//     never matches, and its error is reported only when no term matched
//     (LazyErrorNodeSelector) or at construction (NodeSelector).
//   - Parsing validates with labels.NewRequirement (upstream's error
//     messages); matching does not allocate.
package nodeaffinity
