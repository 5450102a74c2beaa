// Package jsonpath evaluates the JSONPath subset that CustomResourceDefinition
// additionalPrinterColumns, selectableFields and scale subresource paths use
// (kubectl's template syntax without ranges or functions):
//
//	.spec.replicas   {.spec.replicas}   .spec.ports[0].port   .items[*].name
//	.metadata.labels['app.kubernetes.io/name']   .status.conditions[?(@.type=="Ready")].status
//
// over decoded JSON values (map[string]any, []any, string, bool, int64,
// float64). It is a small, dependency-free stand-in for client-go's jsonpath
// (which the product may not import).
//
// Invariants: Parse never panics on any input; evaluation never mutates the
// object it reads.
package jsonpath
