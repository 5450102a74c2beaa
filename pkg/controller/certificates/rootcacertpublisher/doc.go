// Package rootcacertpublisher is upstream's root CA certificate publisher
// ("root-ca-certificate-publisher-controller"): every namespace has the
// ConfigMap kube-root-ca.crt whose key ca.crt holds the cluster's root CA
// (PEM), so that pods can trust the API server, with the
// kubernetes.io/description annotation upstream sets.
//
// A namespace is queued when it is added or updated and when its
// kube-root-ca.crt is updated or deleted; syncing it creates the
// ConfigMap, or puts back its data and annotation when they differ.
//
// Invariants:
//   - Only the ConfigMap named kube-root-ca.crt is ever written; other
//     data keys are not kept (data is exactly {ca.crt: RootCA}, as
//     upstream; binaryData is left alone), other annotations and labels
//     are kept.
//   - A create refused because the namespace is gone or terminating is not
//     retried (as upstream); any other failure is retried rate-limited.
//   - The sync of a namespace (sync) is a function of the listers' state:
//     tests call it directly.
package rootcacertpublisher
