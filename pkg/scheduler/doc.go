// Package scheduler is skiff's kube-scheduler: it assigns pending pods to
// nodes through the scheduling framework (pkg/scheduler/framework) with
// upstream's default plugins, as upstream's does.
//
//	s, err := scheduler.New(ctx, scheduler.Config{ComponentConfig: cc}) // cc: a KubeSchedulerConfiguration
//	err = s.Run(ctx)
//
// The pieces: informers (pods that are not finished, nodes, and what the
// profiles' plugins registered events for) feed the cache (bound and
// assumed pods per node, pkg/scheduler/internal/cache) and the scheduling
// queue (pending pods of this scheduler's profiles,
// pkg/scheduler/internal/queue). The scheduling loop pops one pod at a
// time and runs its scheduling cycle — snapshot (only changed nodes are
// copied), PreFilter, Filter over the nodes in parallel from a rotating
// start index until percentageOfNodesToScore of them fit, PostFilter
// (preemption) when none fits, PreScore/Score, the best node (ties
// broken at random), assume, Reserve, Permit — and hands the pod to its
// binding cycle (WaitOnPermit, PreBind, Bind, PostBind) in a goroutine,
// so the next pod does not wait for the API server. A failed attempt
// puts the pod back in the queue with the plugins that rejected it (only
// events those plugins registered requeue it), records a FailedScheduling
// event and sets PodScheduled=False with upstream's message ("0/5 nodes
// are available: 3 Insufficient cpu, ...").
//
// Scheduling starts once the informer handlers have handled their
// initial lists (upstream's WaitForHandlersSync), so the first pods meet
// every node. At debug level (skiff -v 2) each scored pod logs upstream's
// -v=10 lines: "Plugin scored node for pod" (pod, plugin, node, weighted
// score) and "Calculated node's final score for pod" (pod, node, score);
// test/compat compares them with kube-scheduler's.
//
// Run serves /healthz and /metrics (scheduler_schedule_attempts_total,
// scheduler_scheduling_attempt_duration_seconds, scheduler_pending_pods,
// ... under upstream's names) and, with leader election, schedules only
// while it leads the kube-system/kube-scheduler Lease.
//
// Invariants:
//   - The scheduler reaches the API server only through pkg/client.
//   - Pods whose schedulerName has no profile are never queued.
//   - A pod is assumed in the cache before its binding starts and is
//     forgotten if the binding fails, so the cache never counts a pod on
//     two nodes and never loses one it bound.
//   - One scheduling cycle at a time; binding cycles run concurrently.
//     The cycle's scratch buffers (filter statuses, scores) belong to the
//     Scheduler and are reused by the next cycle.
//   - Every pod bound gets its Scheduled event: the event sink writes
//     several events at once (as upstream's events library, a goroutine
//     each) instead of dropping them once its queue is full.
//   - No package-level mutable state; clock and randomness are injected.
package scheduler
