// Package clock is the injectable time source every skiff component takes:
// Real in production, Fake in tests so that time-driven behaviour (timers,
// tickers, backoff, ages) is tested without sleeping.
//
// Invariant: a Fake's time moves only when Step or SetTime is called, and
// every timer or ticker due at the new time fires, in due order, before the
// call returns.
package clock
