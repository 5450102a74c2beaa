// Package defaultpreemption is the DefaultPreemption plugin, as upstream
// kube-scheduler 1.34's (plugins/defaultpreemption plus the preemption
// Evaluator): when no node fits a pod, PostFilter looks for a node where
// deleting lower-priority pods makes room, deletes them and nominates the
// pod to that node.
//
// The algorithm, as upstream's:
//   - eligibility: preemptionPolicy Never never preempts; a pod nominated
//     to a node where a lower-priority pod preempted by the scheduler is
//     still terminating waits (unless its nominated node is now
//     UnschedulableAndUnresolvable);
//   - candidates: the nodes whose filter status is Unschedulable (never
//     UnschedulableAndUnresolvable ones), dry-run from a random offset
//     until max(minCandidateNodesPercentage% of them,
//     minCandidateNodesAbsolute) candidates are found (at least one not
//     violating a PodDisruptionBudget);
//   - dry run per node on a NodeInfo.Snapshot and a CycleState.Clone:
//     remove every lower-priority pod (PreFilter RemovePod extensions),
//     check the pod fits (filters with nominated pods), then reprieve
//     victims by descending importance (priority, then earlier start),
//     PDB-violating ones first; violating victims that must go count as
//     PDB violations;
//   - the best candidate: fewest PDB violations, lowest highest-victim
//     priority, smallest priority sum, fewest victims, latest start time
//     of the highest-priority victims, then the first in dry-run order;
//   - preparation: each victim gets the DisruptionTarget condition
//     (reason PreemptionByScheduler) and is deleted (waiting pods are
//     rejected instead), a "Preempted" event is recorded on it, and
//     lower-priority pods nominated to the node lose their nomination.
//     As upstream 1.34 (SchedulerAsyncPreemption on by default) this runs
//     in a goroutine and PreEnqueue holds the preemptor back until the
//     deletion of its last victim has started (upstream's later fix of
//     the 1.34 window); Async=false does it in the scheduling cycle.
//
// Metrics: scheduler_preemption_attempts_total and
// scheduler_preemption_victims, package-wide as upstream's globals; the
// scheduler adds them to its registry with Register.
//
// Invariants: the dry run never changes the snapshot or the cycle state
// it is given (it works on copies); the plugin writes to the API only in
// the preparation of the chosen candidate; failure messages have
// upstream's shape ("preemption: 0/N nodes are available: ...").
package defaultpreemption
