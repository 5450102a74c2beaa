// Package client is skiff's REST client for the Kubernetes API (client-go's
// rest and typed clients, written from scratch): Config from a kubeconfig
// ($KUBECONFIG, current context, certificates, tokens) or from inside a
// pod (service account token and CA), a Client that throttles with a token
// bucket (QPS/Burst, a log line when a request waited long), retries what
// the server asks to retry (429 and 5xx with Retry-After) and returns API
// errors as *apierrors.StatusError, and generic typed clients —
// Typed[*corev1.Pod, *corev1.PodList] — plus an unstructured Dynamic client
// with get, list, watch, create, update, patch and delete.
//
// Invariants:
//   - The client never imports the server (storage, registry, apiserver):
//     it speaks HTTP and the k8s.io/api types only.
//   - Every request passes the token bucket, retries included.
//   - A watch's result channel closes when the stream ends for any reason;
//     the caller resumes from the last resourceVersion it saw.
//   - Decoding is case-sensitive, as the API server's.
package client
