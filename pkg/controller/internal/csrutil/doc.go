// Package csrutil is what the CertificateSigningRequest controllers
// (approver, signer, cleaner) share, as upstream's pkg/controller/certificates
// and the helpers of pkg/apis/certificates: parsing a request, reading its
// conditions, the subject and usage rules of the kubelet signers, and the
// base controller that feeds a handler the requests of an informer.
//
// Invariants:
//   - Validation answers with upstream's error messages (they end up in a
//     Failed condition's message).
//   - The base controller hands its handler a deep copy: the informer's
//     cache is never modified. A request that already has a certificate is
//     never handed to the handler.
package csrutil
