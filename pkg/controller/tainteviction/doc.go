// Package tainteviction is the taint eviction controller (upstream's
// taint-eviction-controller, the former NoExecute taint manager): it
// deletes the pods bound to a node tainted NoExecute that do not tolerate
// the taint.
//
// For a pod bound to a node (on every change of the pod's node or
// tolerations, and of the node's taints), over the node's NoExecute
// taints, as upstream's processPodOnNode:
//   - no NoExecute taint: a scheduled deletion is cancelled;
//   - a taint no toleration of the pod tolerates: the pod is deleted now;
//   - every taint tolerated, one of the tolerations used without
//     tolerationSeconds and none with: tolerated forever, a scheduled
//     deletion is cancelled;
//   - else the deletion is scheduled the smallest tolerationSeconds of the
//     tolerations used (0 or less: now) after the controller first saw the
//     taints; an already scheduled earlier deletion is kept.
//
// A deletion adds the pod condition DisruptionTarget=True
// (DeletionByTaintManager, "Taint manager: deleting due to NoExecute
// taint") through the status subresource, then deletes the pod with its
// own grace period, with a TaintManagerEviction event ("Marking for
// deletion Pod ns/name"); a cancelled one records "Cancelling deletion of
// Pod ns/name". Metric (Config.Registry), upstream's:
// taint_eviction_controller_pod_deletions_total.
//
// Invariants:
//   - Time is the Config's Clock: deletions wait on a delaying workqueue
//     driven by it, so fake-clock tests step through tolerationSeconds.
//   - A pod gone (404) is not an error; a failed deletion is retried with
//     the queue's rate limit.
//   - Pods are matched to nodes through spec.nodeName only; unscheduled
//     pods are never touched.
package tainteviction
