// Package compat checks real client-go against skiff's API server and
// compares skiff's client library (pkg/client/...) with client-go side by
// side.
//
// Everything lives in the tests: the *_test.go files start an in-process
// API server (pkg/testenv) and drive it with client-go's clientset,
// discovery, informers, leader election and event recorder; bench_test.go
// holds the side-by-side benchmarks (Benchmark<Thing>/skiff and
// Benchmark<Thing>/clientgo). This is a separate Go module so that the main
// module never depends on k8s.io/client-go.
package compat
