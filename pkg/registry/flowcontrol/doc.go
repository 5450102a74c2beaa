// Package flowcontrol defines the flowcontrol.apiserver.k8s.io/v1
// flowschemas and prioritylevelconfigurations (API Priority and Fairness
// configuration; requests are classified by it (Classifier) but not queued
// or rejected): upstream's defaulting and validation as pure functions over
// the k8s.io/api types, the registry Definitions, upstream's mandatory and
// suggested bootstrap objects with the rule that keeps them up to date
// (the API server applies it at start and periodically), and the Dangling
// condition a FlowSchema carries when its priority level is missing.
//
// Invariants: defaulting is idempotent and only fills unset fields;
// validation never mutates; error paths and messages follow upstream's;
// the bootstrap objects are fresh copies on every call, already defaulted
// (defaulting changes nothing in them) and valid; the mandatory objects'
// specs are fixed (except the exempt level's spec.exempt).
package flowcontrol
