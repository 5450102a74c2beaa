// Package certificate gets and keeps the kubelet's client certificate, as
// upstream's kubelet TLS bootstrapping (pkg/kubelet/certificate/bootstrap)
// and client certificate rotation (client-go's certificate manager) do.
//
// Bootstrap (LoadClientCert): when the kubelet's --kubeconfig does not
// exist or its client certificate cannot be loaded or has expired, the
// bootstrap kubeconfig (a bootstrap token, `skiff token create`) is used to
// create a CertificateSigningRequest for signer
// kubernetes.io/kube-apiserver-client-kubelet with subject
// CN=system:node:<node>, O=system:nodes, an ECDSA P-256 key and usages
// digital signature + client auth, named node-csr-<digest of key, subject
// and usages> (so that a restarted kubelet finds its request again); it
// waits (watch) until the CSR is approved and issued (denied or failed is
// an error), stores certificate and key in the cert directory as
// kubelet-client-<timestamp>.pem with the symlink kubelet-client-current.pem
// (upstream's file store), and writes --kubeconfig with the bootstrap
// kubeconfig's cluster and that file as client certificate and key. A
// still valid kubelet-client-current.pem is reused without a new request.
// The key of a request in flight is kept in kubelet-client.key.tmp so that
// a restart waits for the same CSR.
//
// Rotation (Manager): the current certificate is renewed at a random point
// in 70–90% of its lifetime (upstream's jitter) with a CSR of the same
// signer made with the current certificate (the node's own identity: the
// approver's selfnodeclient check), the new pair replaces the current one
// in the store, and Manager.Current (for the client's
// GetClientCertificate) returns it; the client's connections are closed so
// that new ones present it.
//
// Invariants: the package reaches the API only through pkg/client; files
// are written atomically (temporary file, rename); time comes from
// pkg/clock.
package certificate
