// Package record records Kubernetes events (core/v1 Event) and writes them
// to the API with client-go's semantics (its tools/record, written from
// scratch).
//
// A component makes one EventBroadcaster, starts the watchers it wants
// (StartRecordingToSink to write to the Events API, StartStructuredLogging,
// StartEventWatcher for anything else), and hands out EventRecorders from
// NewRecorder(source). Recording an event never blocks the caller:
//
//	recorder --Event()--> [bounded incoming queue] --> distributor
//	    --copy--> [watcher buffer] --> handler goroutine (sink, log, ...)
//
// When the incoming queue or a watcher's buffer is full the event is
// dropped for that queue (and logged), as client-go does: a slow API server
// or a stuck handler must never stall a controller.
//
// The sink path runs each event through an EventCorrelator, in this order:
//
//   - Aggregation: events that share source, involved object, type, reason
//     and reporter but differ in message form a group; once a group holds
//     MaxEvents (10) distinct messages, each further message in it is
//     written as one combined event "(combined from similar events):
//     <message>". A group is forgotten 10 minutes after its last event.
//   - Deduplication: an event identical to one already written (same
//     source, object, type, reason and message; or the same combined event)
//     is written as a strategic merge patch of the existing Event's count,
//     lastTimestamp and message; a new one is created. A patch that finds
//     the Event gone creates it again.
//   - Spam filter: a token bucket per source + involved object + type
//     (burst 25, then one per 5 minutes) drops the rest. It counts every
//     event, repeats included; dropped repeats still raise the count of the
//     next one that passes.
//
// A failed write is retried up to 12 times 10 s apart (the first wait
// randomized), on the broadcaster's clock, unless the API server rejected
// the event (an API status error), which is final. Events are written one
// at a time, or with WithConcurrentWrites(n) up to n at once (correlation
// still in recording order), as upstream's events.k8s.io library writes
// each event in its own goroutine.
//
// Invariants:
//   - Recorders and the broadcaster never block on a watcher or the API.
//   - Each watcher sees events in recording order, each as its own copy.
//   - Events are named "<object name>.<hex unix nanoseconds>" and live in
//     the object's namespace ("default" for cluster-scoped objects). One
//     broadcaster never reuses a nanosecond, so a clock that stands still
//     (a fake one) does not make two events collide.
//   - No package-level state: every cache, clock and limit belongs to a
//     broadcaster or correlator.
//
// FakeRecorder turns events into strings on a channel for tests of other
// packages.
package record
