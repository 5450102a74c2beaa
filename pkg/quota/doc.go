// Package quota is what the ResourceQuota controller
// (pkg/controller/resourcequota) and the ResourceQuota admission plugin
// (pkg/apiserver/admission) share: upstream's quota evaluators (what a pod,
// a service, a persistent volume claim or any other object counts against
// a quota, which quota resources each tracks, scope matching, the
// "must specify" constraints of compute quotas) and the arithmetic over
// ResourceLists (add, subtract, mask, compare) with upstream's semantics.
//
// Invariants: pure functions of their arguments and the time passed in;
// no I/O; depends on k8s.io/api and apimachinery only (test/arch).
package quota
