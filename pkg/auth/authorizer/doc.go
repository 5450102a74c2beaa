// Package authorizer is the API server's authorization contract, shaped as
// upstream's k8s.io/apiserver/pkg/authorization/authorizer: the Attributes
// of a request (who, which verb on which resource or path), the Decision an
// Authorizer reaches, the union of authorizers that --authorization-mode
// builds, the built-in modes (AlwaysAllow, AlwaysDeny, the system:masters
// short circuit, a graph-less Node placeholder; the real Node mode is
// pkg/auth/node) and the
// RuleResolver that answers SelfSubjectRulesReview.
//
// Invariants:
//   - An Authorizer never mutates the Attributes or the user they carry.
//   - DecisionAllow and DecisionDeny are final in a Union; DecisionNoOpinion
//     passes the request to the next authorizer, and a Union whose members
//     all have no opinion has none (the API server then answers 403).
//   - Members of the system:masters group are allowed everything, before
//     any other authorizer is asked (upstream's privileged group).
//   - The package depends on k8s.io/api and apimachinery only: the API
//     server, the registry and the RBAC authorizer all import it.
package authorizer
