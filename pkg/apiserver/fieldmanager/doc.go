// Package fieldmanager tracks field ownership (metadata.managedFields) and
// merges server-side apply requests, with apimachinery's managedfields and
// structured-merge-diff over the OpenAPI definitions the server publishes.
//
// Managers keeps one managedfields.FieldManager per served kind and
// subresource. Their type converter is built from one generation of the
// OpenAPI definitions and rebuilt when the served definitions change (custom
// resources added or removed); a custom resource kind without a usable
// schema gets the deduced type converter, as upstream's.
//
// Invariants:
//   - objects handed to a FieldManager are in the hub (storage) version; the
//     managers convert to the served version with the Convertor given, so
//     managedFields entries name the version the client used;
//   - the manager of a request without fieldManager is derived from its
//     User-Agent as upstream's (the part before the first "/", printable,
//     at most 128 bytes);
//   - an update whose field tracking fails keeps the live object's
//     managedFields (UpdateNoErrors), it never fails the write;
//   - definitions that do not build (a schema structured-merge-diff
//     rejects) keep the last good generation's types: one bad custom
//     resource schema never takes field management from the other kinds;
//   - TrackCreate answers exactly what the field manager's UpdateNoErrors
//     would: it memoizes a create's entry by the object's shape (set
//     fields, map keys, list items) and computes it on a miss; objects with
//     free-form JSON, custom resources and version conversions always take
//     the field manager;
//   - apply bodies are decoded as upstream's (apimachinery's YAML, integers
//     stay integers).
package fieldmanager
