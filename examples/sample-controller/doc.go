// Command sample-controller is skiff's version of upstream's
// sample-controller: the pattern every Kubernetes controller follows, built
// on skiff's client library (informers, listers, a rate-limited work queue,
// events). It keeps a Deployment in line with each Foo, a custom resource
// (samplecontroller.k8s.io/v1alpha1, artifacts/examples/crd.yaml, Go types
// in pkg/apis/samplecontroller/v1alpha1). README.md walks through it step
// by step.
//
// Invariants: handlers only enqueue keys; the sync reads current state
// from listers (level-triggered) and never mutates cached objects; a key is
// processed by one worker at a time and retried with backoff on error; a
// Deployment the Foo does not control is never modified (ErrResourceExists).
package main
