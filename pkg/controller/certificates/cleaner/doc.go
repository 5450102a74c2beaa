// Package cleaner is upstream's CSR cleaner
// ("certificatesigningrequest-cleaner-controller", csrcleaner): once at
// start and then every hour it deletes the requests that are done with,
// by upstream's deadlines:
//   - issued (approved, with a certificate) and approved more than 1 hour ago;
//   - denied more than 1 hour ago;
//   - failed more than 1 hour ago;
//   - pending (neither approved nor denied) and created more than 24
//     hours ago;
//   - issued with a certificate that has expired.
//
// Ages are measured from the condition's lastUpdateTime (the creation
// timestamp for pending requests) with the controller's clock.
//
// Invariants:
//   - An approved request without a certificate is kept (the signer may
//     still issue it), as upstream.
//   - The decision (Expired) is a function of the request and the time:
//     tests call it directly.
package cleaner
