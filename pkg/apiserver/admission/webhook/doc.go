// Package webhook is upstream's MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook admission plugins: the webhooks of
// MutatingWebhookConfigurations and ValidatingWebhookConfigurations are
// called over HTTPS with an AdmissionReview for every request they match.
//
// What it does, as upstream 1.34:
//   - Configurations are read from the watch cache on every request (a
//     change takes effect as soon as the cache has it), sorted by name,
//     webhooks in order; the compiled form of the last set seen is kept.
//     Webhook configurations and admission policies themselves are exempt.
//   - Matching: namespaceSelector (the namespace's labels, read from the
//     watch cache then from storage; a namespace request by its own labels;
//     a cluster-scoped request always matches), objectSelector (new or old
//     object), rules (operations, groups, versions, resources with
//     subresources and wildcards, scope), matchPolicy Equivalent (another
//     served version of the same stored resource, other groups included:
//     core/v1 and events.k8s.io/v1 events; the webhook receives that
//     version), then matchConditions in CEL (object, oldObject, request,
//     authorizer and authorizer.requestResource answered by the server's
//     authorizer with the request's user, upstream's authorizer library of
//     package policy; the matching itself is package matching's, shared
//     with the policies). A condition error fails the request as 403 with
//     failurePolicy Fail and skips the webhook with Ignore.
//   - Calling: AdmissionReview v1 (or v1beta1, the first of
//     admissionReviewVersions skiff speaks) POSTed with ?timeout=, within
//     timeoutSeconds. clientConfig.url is called as given; clientConfig.service
//     is called as https://<name>.<namespace>.svc:<port><path> (the name
//     the certificate must carry, verified against caBundle, or the system
//     roots when it is empty) and dialed at a ready endpoint of the service
//     (EndpointSlices, then Endpoints: ResolveService, reusable by other
//     callers of services). A call that fails or answers nonsense is
//     upstream's "failed calling webhook" error: 500 InternalError with
//     failurePolicy Fail, ignored (logged, "failed-open" annotation) with
//     Ignore. An answer read after the timeout passed counts as none: the
//     call failed with `Post "<url>?timeout=Ns": context deadline exceeded`,
//     even when the HTTP transport handed over a response that raced the
//     deadline. An empty 2xx answer is upstream's "0-length response"
//     error. A denial is the webhook's status with upstream's
//     `admission webhook "<name>" denied the request: <message>`.
//     Warnings reach the client as Warning headers (admission.AddWarning).
//   - Audit annotations (the webhook's, prefixed with its name, and the
//     mutation/patch/failed-open ones) are recorded on the request's
//     admission.Attributes and logged at debug level: skiff has no audit
//     log to write them to.
//   - A dry-run request is refused for a webhook whose sideEffects are not
//     None or NoneOnDryRun (upstream's "does not support dry run"); the
//     others are called with dryRun=true.
//   - Mutating webhooks run one by one after the built-in mutating plugins;
//     a JSON patch is applied to the object in the version the webhook saw,
//     which is then decoded, defaulted and converted back to the storage
//     form. reinvocationPolicy IfNeeded: when a later webhook changes the
//     object, the admission chain runs once more and those webhooks are
//     called again (upstream's reinvocation). Validating webhooks run in
//     parallel after the registry's validation; the first refusal in
//     webhook order is returned.
//
// The scale subresource's requests carry the autoscaling/v1 Scale, as
// upstream's (a patch of its replicas reaches the parent).
//
// Not done: webhooks on CONNECT requests (exec, attach, port-forward,
// proxy), on pods/binding and pods/eviction, client certificates for
// webhooks (upstream's admission kubeconfig), upstream's webhook metrics.
//
// Invariants: a plugin never writes to storage; the object handed on is
// always in storage form; a configuration change needs no restart.
package webhook
