// Package clusterroleaggregation is upstream's ClusterRole aggregation
// controller ("clusterrole-aggregation-controller"): a ClusterRole with an
// aggregationRule gets as rules the union of the rules of every other
// ClusterRole one of its clusterRoleSelectors matches.
//
// Order and duplicates as upstream: selectors in order, the matching
// roles of each selector by name, their rules in order, a rule already
// collected (semantically equal) skipped; the role itself never counts.
// The rules are written by server-side apply with field manager
// "clusterrole-aggregation-controller" and force, as upstream (an empty
// union applies no rules, which removes the ones it applied before).
//
// Every ClusterRole event queues every aggregated ClusterRole (upstream's
// choice: the set is small and the dependency graph unknown).
//
// Invariants:
//   - Only ClusterRoles with an aggregationRule are written, and only
//     when their rules differ from the union.
//   - The sync of a role (sync) is a function of the lister's state:
//     tests call it directly.
package clusterroleaggregation
