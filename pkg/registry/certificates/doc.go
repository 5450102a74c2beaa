// Package certificates defines the certificates.k8s.io/v1
// certificatesigningrequests with their status and approval
// subresources, clustertrustbundles and podcertificaterequests (+status;
// both stable in 1.37): upstream's
// defaulting, validation and strategy as pure functions over the
// k8s.io/api types, and the registry Definitions.
//
// Invariants: the requester fields (spec.username, uid, groups, extra) are
// the server's: set from the authenticated user on create, never from the
// client; the spec never changes after create; the main resource never
// changes status; the status subresource cannot add or remove Approved or
// Denied conditions, and the approval subresource changes nothing but
// conditions other than Failed; no update removes an Approved, Denied or
// Failed condition or replaces an issued certificate. A ClusterTrustBundle
// for a signer is named after it and its signer never changes; its bundle
// holds at least one CA certificate, each once (an unchanged bundle is not
// parsed again on update). A PodCertificateRequest's spec never changes;
// its stub PKCS#10 request must verify and use a supported key type; its
// status only moves to one terminal condition (Issued, Denied, Failed) and
// then never changes; an issued chain certifies the requested key with
// consistent times. (1.37 moved the request's key from pkixPublicKey and
// proofOfPossession into stubPKCS10Request; the messages about that field
// are skiff's own wording.)
package certificates
