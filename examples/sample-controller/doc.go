// Command sample-controller is skiff's version of upstream's
// sample-controller: the pattern every Kubernetes controller follows, built
// on skiff's client library (informers, listers, a rate-limited work queue,
// events). It keeps a Deployment in line with each "Foo" (a labelled
// ConfigMap until skiff serves custom resources). README.md walks through
// it step by step.
//
// Invariants: handlers only enqueue keys; the sync reads current state
// from listers (level-triggered) and never mutates cached objects; a key is
// processed by one worker at a time and retried with backoff on error.
package main
