// Package kubeconfig reads and writes kubeconfig files (the format kubectl
// uses: clusters, users, contexts and the current context).
//
// Invariant: Write produces a file kubectl reads unchanged; certificate and
// key data are embedded base64, as `kubectl config view --raw` shows them.
package kubeconfig
