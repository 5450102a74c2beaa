// Package builtin lists every resource the API server serves out of the box.
package builtin
