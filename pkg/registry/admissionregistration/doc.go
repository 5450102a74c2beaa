// Package admissionregistration defines the admissionregistration.k8s.io/v1
// resources: mutating and validating webhook configurations, validating
// admission policies (with status) and their bindings, and mutating
// admission policies and their bindings (GA and on by default since
// 1.36). The webhooks are called by pkg/apiserver/admission/webhook, the
// policies enforced by pkg/apiserver/admission/policy. CEL expressions
// are parsed with cel-go when written (syntax errors refused as upstream's "compilation failed"), and
// a result type that is definitely wrong is refused; see cel.go for what
// is not checked. MarkTypeChecked records a policy generation's
// type-checking result (the API server's type checker consults the
// schemas: pkg/apiserver/admission/policy).
//
// Invariants: defaulting is idempotent and only fills unset fields;
// validation never mutates; error paths and messages follow upstream's; an
// update is validated strictly only where the stored object was (what an
// older server accepted stays updatable, as upstream ratchets).
package admissionregistration
