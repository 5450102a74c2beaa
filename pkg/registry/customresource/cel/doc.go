// Package cel evaluates a custom resource schema's x-kubernetes-validations
// rules with github.com/google/cel-go, as upstream's apiextensions-apiserver
// does:
//
//   - Compile checks every rule and messageExpression of a schema when the
//     CRD is written ("compilation failed: ...", "cel expression must
//     evaluate to a bool") and estimates its cost: the rule's worst case
//     times the number of times it can run (maxItems/maxProperties of the
//     enclosing lists and maps, or what a 3 MiB request can hold) may not
//     exceed 10,000,000, nor may the total of the schema exceed 100,000,000
//     ("estimated rule cost exceeds budget by factor of ...").
//   - Validator.Validate evaluates the rules of every node of an object
//     with self bound to the node's value (and oldSelf to the correlated old
//     value on update: transition rules run only where one exists), with
//     upstream's per-call limit (1,000,000) and per-object budget
//     (10,000,000), and reports failures as upstream: message,
//     messageExpression, or "failed rule: <rule>"; reason
//     (FieldValueInvalid, Forbidden, Required, Duplicate) and fieldPath.
//     As upstream's ratcheting, a rule without oldSelf does not fail an
//     update that leaves its value unchanged.
//
// The environment is upstream's base: cel-go's standard library with
// optional types, cross-type numeric comparisons and the strings (v2),
// sets, lists (v3) and two-variable comprehension extensions, plus the
// commonly used part of the Kubernetes libraries (library.go): isSorted,
// sum, min, max, indexOf, lastIndexOf on lists, find/findAll, isIP, isCIDR,
// isURL, isQuantity, and the ip(), cidr(), url() and quantity() value types
// with their common members (values.go). Not yet: semver, format.named()
// and the authorizer library (admission policies only).
//
// self and oldSelf are typed from the schema node (typed.go), so an
// undeclared field or a type mismatch is a compile error when the CRD is
// written, as upstream; at run time the values are the decoded JSON.
//
// Invariants: a Validator is immutable and safe for concurrent use;
// evaluation never mutates the objects.
package cel
