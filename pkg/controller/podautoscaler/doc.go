// Package podautoscaler is upstream's horizontal pod autoscaler
// ("horizontal-pod-autoscaler-controller") for autoscaling/v2: every sync
// period (--horizontal-pod-autoscaler-sync-period, 15s) each
// HorizontalPodAutoscaler's target is read through its scale subresource
// (found by discovery, custom resources included), the replica count its
// metrics call for is computed, normalized and written back to the scale
// subresource, and the HPA's status and conditions say what happened.
//
// Metrics: Resource and ContainerResource metrics (Utilization, a percent
// of the pods' requests, and AverageValue) are read through the
// MetricsClient interface. The real one (RESTMetricsClient) asks
// metrics.k8s.io, which an aggregated metrics server serves through the
// API server (metrics-server, as upstream). Without one the HPA says so
// plainly, as upstream's does — AbleToScale True
// (SucceededGetScale), ScalingActive False (FailedGetResourceMetric, "the
// HPA was unable to compute the replica count: failed to get cpu
// utilization: unable to get metrics for resource cpu: unable to fetch
// metrics from resource metrics API: the server could not find the
// requested resource (get pods.metrics.k8s.io)"), and the
// FailedGetResourceMetric and FailedComputeMetricsReplicas events. Pods,
// Object and External metrics fail the same way (no custom or external
// metrics API).
//
// The computation is upstream's replica calculator: tolerance 0.1
// (--horizontal-pod-autoscaler-tolerance); pods
// deleted or failed ignored; pending pods, and for cpu pods not ready or
// within the 5m initialization period, left out and counted as using
// nothing on a scale up; pods without a metric counted as using their
// request (or the target) on a scale down and nothing on a scale up; no
// change that would reverse the direction. Normalization: without
// spec.behavior the highest recommendation of the downscale stabilization
// window (5m), a scale up of at most max(2*current, 4), min/max replicas;
// with spec.behavior the scaleUp/scaleDown stabilization windows and rate
// policies (Pods, Percent; Max, Min, Disabled), with upstream's defaults.
// Conditions AbleToScale, ScalingActive and ScalingLimited carry
// upstream's reasons and messages; status.currentMetrics,
// currentReplicas, desiredReplicas and lastScaleTime as upstream.
//
// The behavior's scaleUp/scaleDown tolerance replaces the global one
// for its direction (upstream's HPAConfigurableTolerance). An HPA whose
// target's pods are also selected by another HPA's target does not scale
// (ScalingActive False, AmbiguousSelector), as upstream.
//
// Invariants:
//   - The target is only written when the desired count differs from its
//     current spec.replicas; the HPA's status only when it changed.
//   - Recommendations and scale events are kept per HPA in memory and
//     forgotten when the HPA is deleted.
//   - The reconcile of an HPA is a function of the listers' state, the
//     metrics and the clock: tests call it directly with fed metrics and a
//     fake clock.
package podautoscaler
