// Package registrytest holds the assertions the registry group packages'
// validation tests share: matching field errors by path and type.
//
// Invariant: test helpers only; nothing here is imported by non-test code.
package registrytest
