// Package structural applies a CustomResourceDefinition version's
// structural schema to custom resource objects (decoded JSON: maps, slices,
// strings, bools, int64, float64), as upstream's apiextensions-apiserver
// does:
//
//   - Validate: the OpenAPI v3 value validations through kube-openapi's
//     validator, with upstream's mapping of its errors to field errors
//     (Required, Unsupported value, Too long, Too many, Invalid value with
//     "<path> in body must be of type integer: \"string\"" and the like);
//     x-kubernetes-embedded-resource objects (apiVersion, kind, metadata);
//     x-kubernetes-list-type set/map uniqueness (Duplicate value).
//   - Prune: drops fields the schema does not declare, except under
//     x-kubernetes-preserve-unknown-fields and the apiVersion, kind and
//     metadata of the root and of embedded resources; it returns the
//     dropped paths (upstream's "unknown field" warnings).
//   - Ratchet: on update, drops errors whose value is unchanged from the
//     old object (upstream's CRDValidationRatcheting, on by default).
//   - Default: fills in defaults of absent (or null and non-nullable)
//     fields, top-down.
//
// Invariants: a Schema is immutable once built and safe for concurrent
// use; Validate never mutates the object; Prune and Default change only the
// object they are given.
package structural
