// Package serviceaccount is upstream's ServiceAccountsController
// ("serviceaccount-controller"): every active namespace has the service
// accounts of Config.ServiceAccounts (upstream's default: "default").
//
// A namespace is queued when it is added or updated and when one of its
// service accounts is deleted; syncing it creates each listed service
// account the cache does not have.
//
// Invariants:
//   - Nothing is created in a namespace that is not Active (Terminating)
//     or no longer exists; the API server's "namespace is being
//     terminated" refusal is not an error either.
//   - An existing service account is never modified (its secrets, labels
//     or automount setting belong to the user); AlreadyExists is success.
//   - The sync of a namespace (sync) is a function of the listers' state:
//     tests call it directly.
package serviceaccount
