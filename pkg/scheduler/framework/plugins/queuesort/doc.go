// Package queuesort is the PrioritySort plugin: the QueueSort plugin that
// orders the scheduler's activeQ, as upstream kube-scheduler's.
//
// Invariants: Less is a strict weak order: higher pod priority
// (spec.priority, nil = 0) first, then the earlier queue timestamp; it
// reads nothing but its two arguments.
package queuesort
