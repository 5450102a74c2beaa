// Package signer is upstream's CSR signing controller
// ("certificatesigningrequest-signing-controller", csrsigning): it signs
// approved requests of the kubernetes.io signers it has a CA for —
// kubernetes.io/kube-apiserver-client, kubernetes.io/kubelet-serving and
// kubernetes.io/kube-apiserver-client-kubelet — and writes the PEM
// certificate to status.certificate through the status subresource.
//
// Each signer checks its rules first, as upstream: kube-apiserver-client
// needs the client auth usage and allows only digital signature and key
// encipherment besides; kubelet-serving needs O=system:nodes,
// CN=system:node:<name>, DNS or IP SANs only and the serving usages;
// kube-apiserver-client-kubelet needs O=system:nodes,
// CN=system:node:<name>, no SANs and the client usages. A request that
// fails them gets a Failed condition (reason SignerValidationFailure, the
// rule's message) instead of a certificate. kubernetes.io/legacy-unknown
// (which certificates.k8s.io/v1 refuses anyway) and other signers are
// never signed.
//
// The certificate: the request's subject, SANs and public key, the
// request's usages, not a CA, NotBefore = now-5m, NotAfter = now+TTL-5m
// (now+TTL when TTL < 8h), cut at the CA's own NotAfter; TTL is
// Duration (--cluster-signing-duration, 1 year), or
// spec.expirationSeconds when shorter (10 minutes at least).
//
// With Config.Reload the CA files are read again every minute, so that a
// rotated CA signs from then on (upstream follows its files too).
//
// Invariants:
//   - Only approved requests without a Failed condition and without a
//     certificate are signed; the request's signature is checked.
//   - The decision (handle) is a function of the request and the clock:
//     tests call it directly.
package signer
