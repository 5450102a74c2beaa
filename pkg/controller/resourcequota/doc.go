// Package resourcequota is upstream's ResourceQuota controller
// ("resourcequota-controller"): every ResourceQuota's status says what it
// allows (status.hard = spec.hard) and what its namespace uses
// (status.used), for each resource of spec.hard that an evaluator tracks,
// as upstream's evaluators count it:
//   - pods: pods, count/pods (every pod, terminal ones included), cpu,
//     memory, ephemeral-storage, requests.* and limits.* of them, hugepages-*
//     and requests.<extended resource> (upstream's PodRequests/PodLimits:
//     containers summed, sidecars added, the largest init container,
//     overhead, pod-level resources); terminal pods and pods terminating past
//     their grace period count only in count/pods;
//   - services: services, count/services, services.nodeports (the ports of
//     NodePort and LoadBalancer services), services.loadbalancers;
//   - persistentvolumeclaims: persistentvolumeclaims,
//     count/persistentvolumeclaims, requests.storage and the per-class
//     <class>.storageclass.storage.k8s.io/{requests.storage,persistentvolumeclaims};
//   - object counts: count/<resource>[.<group>] of any namespaced resource
//     served (custom resources included, found by discovery), and the legacy
//     names configmaps, secrets, replicationcontrollers, resourcequotas.
//
// Scopes and the scopeSelector restrict the pods counted (Terminating,
// NotTerminating, BestEffort, NotBestEffort, PriorityClass with In, NotIn,
// Exists, DoesNotExist, CrossNamespacePodAffinity); other evaluators count
// nothing under a scope, as upstream.
//
// A quota is synced when it is added, when its spec.hard or status.used
// changes (admission's charges arrive on their own stream), when an
// object it counts is added or deleted, or updated in a way that changes
// its usage (a pod turning terminal, a service changing type, a claim's
// storage changing), and every ResyncPeriod
// (--resource-quota-sync-period, 5m) for all quotas. (Upstream skips adds:
// its quota admission has charged them already; skiff's adds recalculate,
// which also corrects charges of requests that failed after admission.)
// The evaluators live in pkg/quota, shared with the ResourceQuota
// admission plugin. Object counts other than pods,
// services and claims are followed with metadata informers started for the
// resources quotas name.
//
// Invariants:
//   - status.used holds only resources of spec.hard; a resource no
//     evaluator can count keeps its previous observation, as upstream.
//   - The status is written (through /status) only when hard or used
//     differ from what is stored.
//   - The sync of a quota (sync) is a function of the listers' state and
//     the clock: tests call it directly.
package resourcequota
