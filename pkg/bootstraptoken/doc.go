// Package bootstraptoken makes bootstrap tokens as `kubeadm token create`
// does (`skiff token create`): a token "<id>.<secret>" (6 and 16
// characters of [a-z0-9], from crypto/rand) stored as the Secret
// kube-system/bootstrap-token-<id> of type bootstrap.kubernetes.io/token
// with upstream's keys (token-id, token-secret, expiration in RFC 3339,
// description, usage-bootstrap-*, auth-extra-groups). The API server
// (--enable-bootstrap-token-auth) authenticates such a token as
// system:bootstrap:<id> in system:bootstrappers and the extra groups; a
// kubelet uses it to ask for its client certificate (TLS bootstrapping,
// pkg/kubelet/certificate). It also writes the bootstrap kubeconfig a
// joining kubelet is given.
//
// Invariants: a Secret is only created (an existing token id is an error,
// never overwritten); the token is validated before anything is written;
// the package reaches the API only through pkg/client.
package bootstraptoken
