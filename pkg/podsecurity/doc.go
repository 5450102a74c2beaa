// Package podsecurity is the Pod Security Standards as upstream's
// pod-security-admission library evaluates them (1.34): the levels
// privileged, baseline and restricted, at a version ("latest" or v1.N,
// where checks that changed between versions answer as they did then),
// each check a pure function of a pod's ObjectMeta and PodSpec with
// upstream's reason and detail text; the namespace labels
// pod-security.kubernetes.io/{enforce,audit,warn}[-version] parsed into a
// Policy with upstream's defaulting (warn follows enforce when unset) and
// errors; the pod templates of the workload resources.
//
// Invariants: no I/O, no clock; results are in upstream's order (baseline
// checks by ID, then restricted ones; a restricted check replaces the
// baseline check it overrides); depends on k8s.io/api and apimachinery
// only (test/arch). The admission plugin lives in pkg/apiserver/admission.
package podsecurity
