// Package policy is upstream's CEL admission policies: the
// ValidatingAdmissionPolicy admission plugin (and MutatingAdmissionPolicy,
// mutating.go), as k8s.io/apiserver's admission/plugin/policy packages
// behave in 1.34.
//
// Policies and bindings are read from the watch cache on every request
// (so a change applies as soon as the cache has it) and each policy is
// compiled once per resourceVersion. A policy with no binding does
// nothing. For a request (policies, webhooks configurations and
// bindings themselves are exempt), a policy applies when its
// matchConstraints match (resourceRules with resourceNames,
// excludeResourceRules, namespaceSelector, objectSelector, matchPolicy
// Exact/Equivalent: package matching) and then each binding whose
// matchResources match; the binding's paramRef selects params (by name or
// selector, in the request's namespace or paramRef.namespace, of any
// resource the server serves, custom resources included, converted to the
// paramKind's version; none found: nothing to evaluate with
// parameterNotFoundAction Allow, "no params found for policy binding with
// `Deny` parameterNotFoundAction" with Deny). For each param the
// matchConditions run (any false: skipped), then every validation, the
// messages of the failed ones and the audit annotations.
//
// CEL: object and oldObject (the request's objects in the matched
// version, null where absent), request (upstream's AdmissionRequest
// without the objects), params (declared only with a paramKind),
// namespaceObject, authorizer and authorizer.requestResource (upstream's
// authorizer library over pkg/auth/authorizer: group/resource/
// subresource/namespace/name/check, path/check, serviceAccount, allowed,
// reason, errored, error; decisions cached for the request, as upstream's
// caching authorizer; a nil Config.Authorizer allows everything, as the
// API server without authorization), and variables (evaluated lazily,
// at most once per binding and param, composable, their cost charged to
// the expression that uses them). The library is upstream's base
// environment plus the Kubernetes functions of pkg/registry/customresource/
// cel. Upstream's limits: 1,000,000 per expression ("operation cancelled:
// actual cost limit exceeded"), 10,000,000 per binding and param ("validation
// failed due to running out of cost budget, no further validation rules
// will be run"), 2,500,000 for matchConditions.
//
// Outcomes, with upstream's texts: a failed validation's message is its
// messageExpression's (non-empty, one line, at most 5 KiB), else message,
// else "failed expression: <expression>"; an evaluation error (or a
// missing param, an unknown paramKind) denies with failurePolicy Fail and
// is ignored with Ignore. Each binding's validationActions decide: Deny
// refuses the request (`<resource> "<name>" is forbidden:
// ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied
// request: <message>`, the first denial, reason from the validation,
// Invalid 422 by default), Warn adds a Warning header ("Validation failed
// for ValidatingAdmissionPolicy '<policy>' with binding '<binding>':
// <message>"), Audit records the validation.policy.admission.k8s.io/
// validation_failure audit annotation. Audit annotations
// (<policy>/<key>) are recorded on the admission attributes and logged at
// debug level: skiff has no audit log.
//
// MutatingAdmissionPolicy (mutating.go) matches, binds and params the
// same way and runs for creates, updates and connects. Each invocation
// (policy, binding, param) whose matchConditions hold applies its
// mutations in order to the object in the matched version: an
// ApplyConfiguration expression builds an Object value (`Object{spec:
// Object.spec{replicas: 3}}`, nested type names checked against their
// field path as upstream) merged into the object with server-side apply's
// merge semantics (structured-merge-diff over the kind's OpenAPI schema,
// the deduced schema for custom resources without one; no field
// ownership recorded, as upstream; an atomic list, map or struct may not
// be set: "may not mutate atomic arrays, maps or structs"); a JSONPatch
// expression builds a list
// of JSONPatch{op, path, from, value} applied as RFC 6902 (a failed test
// operation leaves the object unchanged; jsonpatch.escapeKey escapes path
// keys). A changed object is decoded back into its storage form and
// defaulted as a request body, and asks the chain to reinvoke: with
// reinvocationPolicy IfNeeded a policy runs again when a later plugin
// changed the object. Errors deny with upstream's text ("policy '<p>'
// with binding '<b>' denied request: <error>", reason Invalid with
// Forbidden's 403 code, as upstream) unless the failurePolicy is Ignore.
// The mutated object then goes through the registry's validation and the
// validating plugins (ValidatingAdmissionPolicy among them). Upstream 1.34
// has the API as v1beta1 behind a feature gate that is off by default;
// skiff serves admissionregistration.k8s.io/v1 (GA in 1.36), so the
// plugin is on by default; --disable-admission-plugins turns it off.
//
// Status: TypeChecker (typecheck.go) is upstream's type checking of
// validations against the schemas of the kinds a policy names; the API
// server records its warnings in status.typeChecking once per generation.
//
// request and namespaceObject are typed as upstream's
// kubernetes.AdmissionRequest and kubernetes.Namespace (an unknown field
// is a compile error); their values are JSON maps at run time, as
// upstream's.
//
// Differences from upstream: when evaluating, variables are typed dyn (an
// undefined variable is an evaluation error, not a compile error; the
// type checker does type them); object/oldObject/params are dyn as in
// upstream's runtime environment.
//
// Invariants: evaluation never mutates the request's objects and never
// writes to storage; compiled policies are immutable and shared by
// concurrent requests; all per-request state lives in the request.
package policy
