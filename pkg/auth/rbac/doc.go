// Package rbac is the RBAC authorizer: it decides requests from the Roles,
// ClusterRoles, RoleBindings and ClusterRoleBindings the API server holds,
// with upstream's matching (verbs, API groups, resources with the
// "resource/subresource" and "*/subresource" forms, resourceNames,
// non-resource URLs with a trailing "*", "*" wildcards; User, Group and
// ServiceAccount subjects), lists a user's rules for
// SelfSubjectRulesReview, and checks that a user holds the permissions it
// grants (privilege-escalation prevention, upstream's ConfirmNoEscalation).
//
// The API server feeds the Index from its watch cache (Set/Delete/Replace on
// every event of the four resources), so a role or binding change is seen
// by the next request.
//
// Invariants:
//   - Objects given to the Index are shared and never mutated (the watch
//     cache's objects); the Index only stores pointers to them.
//   - Bindings are indexed by subject: a request looks up the user's name,
//     each of its groups and its service account, never scans all
//     bindings. ServiceAccount subjects without a namespace in a
//     ClusterRoleBinding match nobody, as upstream.
//   - Cluster role bindings are visited before the role bindings of the
//     request's namespace; within a binding the first subject that applies
//     is the one reported, as upstream's rule resolver.
//   - A rule with resourceNames never matches a request without a name
//     (list, watch, create of a collection), as upstream.
//   - Aggregated ClusterRoles are evaluated by their stored rules (the
//     clusterrole-aggregation controller keeps them current).
package rbac
