// Package leaderelection elects one leader among a set of candidates through
// a coordination.k8s.io/v1 Lease, with client-go's semantics (its
// tools/leaderelection, written from scratch).
//
// A LeaderElector runs a loop against a Lock (LeaseLock in production):
//
//  1. Acquire: every RetryPeriod (jittered up to RetryPeriod*JitterFactor
//     more) it reads the record; it takes the lock when the record does not
//     exist, has no holder, is already ours, or has expired.
//  2. Lead: once it holds the lock it calls OnStartedLeading in a new
//     goroutine with a context that is cancelled when leadership ends, and
//     renews the record every RetryPeriod.
//  3. Stop: when no renewal succeeded within RenewDeadline (or Run's context
//     ends) it cancels the leading context, optionally releases the lock
//     (ReleaseOnCancel), and calls OnStoppedLeading.
//
// Invariants:
//   - Another candidate's record is taken only after it expired, and expiry
//     is judged on our own clock: a record is valid until LeaseDurationSeconds
//     (the holder's duration, from the record) after the moment WE last saw
//     the record change. Timestamps written by other candidates are never
//     compared with our clock, so clock skew between candidates is harmless
//     (differing clock rates are not).
//   - A leader that cannot renew gives up after RenewDeadline, which is
//     shorter than LeaseDuration, so it stops acting before any other
//     candidate may take over. In-flight renewals are cancelled at the
//     deadline.
//   - The leading context is cancelled before the lock is released and
//     before OnStoppedLeading is called. OnStoppedLeading is called exactly
//     once when Run returns, even if we never led (as upstream).
//   - OnNewLeader is called, in order and off the election goroutine, each
//     time the observed holder changes (including the first observation).
//   - Releasing writes an empty holder with a 1 s duration, and only when
//     the stored record still names us.
//   - The library does not fence: leadership is a best-effort belief, as
//     upstream.
//
// LeaseLock maps LeaderElectionRecord onto the Lease spec as upstream does:
// holderIdentity, leaseDurationSeconds, acquireTime, renewTime and
// leaseTransitions.
package leaderelection
