// Package approver is upstream's CSR approving controller
// ("certificatesigningrequest-approving-controller", sarapprove): it
// approves kubernetes.io/kube-apiserver-client-kubelet requests that a
// node makes for its own client certificate, when a SubjectAccessReview
// says the requester may.
//
// A request is recognized when its signer is
// kubernetes.io/kube-apiserver-client-kubelet and it passes the kubelet
// client rules (O=system:nodes, CN=system:node:<name>, no SANs, client
// usages). The requester (spec.username, groups, uid, extra) is then asked
// for "create certificatesigningrequests/selfnodeclient" in
// certificates.k8s.io when the CN is its own user name, else for
// "create certificatesigningrequests/nodeclient"; the first allowed one
// approves with reason AutoApproved and upstream's message, through the
// approval subresource.
//
// skiff's API server answers SubjectAccessReviews (every authenticated
// user is allowed while it has no authorizer), so today every recognized
// request is approved; once RBAC is enforced, upstream's bootstrap
// bindings decide.
//
// Invariants:
//   - Requests already approved, denied or issued are never touched;
//     other signers' requests are never approved.
//   - The decision (handle) depends on the request and the review's answer
//     only: tests call it directly.
package approver
