// Package nodename is the NodeName plugin, as upstream kube-scheduler's:
// a pod with spec.nodeName fits only the node of that name ("node(s)
// didn't match the requested node name", UnschedulableAndUnresolvable).
//
// Invariants: Filter reads only the pod and the node's name; only a new
// node can change its verdict (Node/Add).
package nodename
