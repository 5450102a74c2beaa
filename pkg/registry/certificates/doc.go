// Package certificates defines the certificates.k8s.io/v1
// certificatesigningrequests with their status and approval
// subresources: upstream's defaulting, validation and strategy as pure
// functions over the k8s.io/api types, and the registry Definition.
//
// Invariants: the requester fields (spec.username, uid, groups, extra) are
// the server's: set from the authenticated user on create, never from the
// client; the spec never changes after create; the main resource never
// changes status; the status subresource cannot add or remove Approved or
// Denied conditions, and the approval subresource changes nothing but
// conditions other than Failed; no update removes an Approved, Denied or
// Failed condition or replaces an issued certificate.
package certificates
