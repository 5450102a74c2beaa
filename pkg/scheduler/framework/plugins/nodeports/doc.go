// Package nodeports is the NodePorts plugin, as upstream kube-scheduler's:
// a pod's host ports (of its containers and sidecar init containers) must
// be free on the node ("node(s) didn't have free ports for the requested
// pod ports", Unschedulable). PreFilter collects the ports into
// CycleState ("PreFilterNodePorts") and Skips pods without host ports.
//
// Invariants: Filter reads only the PreFilter state and the node's
// UsedPorts, and never changes them; the pod is requeued by a node being
// added or by the deletion of a scheduled (or nominated) pod that held a
// port the pod wants.
package nodeports
