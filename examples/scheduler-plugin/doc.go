// Command scheduler-plugin is a scheduler with two out-of-tree plugins
// added to skiff's in-tree ones, the way upstream's scheduler-plugins
// project extends kube-scheduler: plugins implement the framework's
// extension-point interfaces (pkg/scheduler/framework), a factory builds
// each from its args, and the scheduler is started with them in its
// OutOfTreeRegistry; a KubeSchedulerConfiguration profile enables them.
//
//   - Hold (Filter, EnqueueExtensions): a pod annotated example.com/hold
//     fits no node ("pod is on hold (example.com/hold)"); removing the
//     annotation requeues it at once (its own update is an event the queue
//     always considers).
//   - PreferLabel (Score, args): nodes carrying the configured label score
//     MaxNodeScore, others 0; args {label: ..., value: ...}.
//
// README.md walks through it step by step.
//
// Invariants: the plugins read only the pod and the NodeInfo they are
// given (no API calls in Filter or Score); Filter never changes the
// NodeInfo.
package main
