// Package metadata is skiff's metadata client and metadata-only informers
// (client-go's metadata and metadatainformer, written from scratch): get,
// list, watch, patch and delete of any resource as
// metav1.PartialObjectMetadata — names, labels, owner references,
// finalizers, deletion timestamps, without the objects' bodies — for
// controllers that follow every resource of the cluster (garbage collector,
// namespace deletion).
//
// Requests ask for protobuf first and JSON second, as client-go's metadata
// client does:
// "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
// (…List for lists), so custom resources (JSON only) answer in JSON.
//
// Invariants:
//   - Every object returned carries apiVersion meta.k8s.io/v1 and kind
//     PartialObjectMetadata as the server sent them; a server answer of
//     another kind is an error (the server ignored the Accept header).
//   - The informer factory makes one informer per GroupVersionResource; an
//     informer started once is started only once; ForResource after Start
//     needs another Start for the new informer.
package metadata
