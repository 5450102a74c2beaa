// Package pki makes and keeps the certificates of a cluster: a CA, the API
// server's serving certificate and client certificates (the admin's), stored
// as PEM files so that a restarted cluster keeps its identity.
//
// Invariants: existing files are reused as long as they are valid for what
// is asked (not expiring within a day, the serving certificate covering
// every requested name); private keys are written 0600.
package pki
