// Package webhook validates how resources name a webhook to call (admission
// webhook configurations, CRD conversion webhooks): its URL or its service
// reference, with upstream's messages (upstream shares one implementation
// between those API groups too).
//
// Invariants: pure functions of their arguments; field paths are the
// caller's.
package webhook
