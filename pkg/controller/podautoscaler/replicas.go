package podautoscaler

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's replica calculator defaults.
const (
	DefaultTolerance                     = 0.1
	DefaultCPUInitializationPeriod       = 5 * time.Minute
	DefaultDelayOfInitialReadinessStatus = 30 * time.Second
)

// calculator is upstream's ReplicaCalculator over a given set of pods.
type calculator struct {
	// tolerance is how far below and above 1.0 a usage ratio may be
	// without a change (the HPA's behavior may set each side).
	tolerance                     tolerances
	cpuInitializationPeriod       time.Duration
	delayOfInitialReadinessStatus time.Duration
	now                           time.Time
}

type tolerances struct{ scaleDown, scaleUp float64 }

func (c calculator) within(ratio float64) bool {
	return 1.0-c.tolerance.scaleDown <= ratio && ratio <= 1.0+c.tolerance.scaleUp
}

// groupPods sorts the pods: ignored (deleted or failed), unready
// (pending; for cpu not ready or within the initialization period),
// missing a metric, or ready.
func (c calculator) groupPods(pods []*corev1.Pod, metrics PodMetricsInfo, resource corev1.ResourceName) (ready int, unready, missing, ignored map[string]bool) {
	unready, missing, ignored = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			ignored[pod.Name] = true
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			unready[pod.Name] = true
			continue
		}
		metric, found := metrics[pod.Name]
		if !found {
			missing[pod.Name] = true
			continue
		}
		if resource == corev1.ResourceCPU {
			var cond *corev1.PodCondition
			for i := range pod.Status.Conditions {
				if pod.Status.Conditions[i].Type == corev1.PodReady {
					cond = &pod.Status.Conditions[i]
				}
			}
			isUnready := false
			switch {
			case cond == nil || pod.Status.StartTime == nil:
				isUnready = true
			case pod.Status.StartTime.Add(c.cpuInitializationPeriod).After(c.now):
				isUnready = cond.Status == corev1.ConditionFalse || metric.Timestamp.Before(cond.LastTransitionTime.Add(metric.Window))
			default:
				isUnready = cond.Status == corev1.ConditionFalse && pod.Status.StartTime.Add(c.delayOfInitialReadinessStatus).After(cond.LastTransitionTime.Time)
			}
			if isUnready {
				unready[pod.Name] = true
				continue
			}
		}
		ready++
	}
	return ready, unready, missing, ignored
}

// podRequests is the request of resource of each pod (of one container
// when container is set); a container without one is an error.
func podRequests(pods []*corev1.Pod, container string, resource corev1.ResourceName) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for _, pod := range pods {
		var sum int64
		containers := append([]corev1.Container{}, pod.Spec.Containers...)
		for _, ic := range pod.Spec.InitContainers {
			if ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				containers = append(containers, ic)
			}
		}
		for _, ctr := range containers {
			if container != "" && ctr.Name != container {
				continue
			}
			q, ok := ctr.Resources.Requests[resource]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, ctr.Name, pod.Name)
			}
			sum += q.MilliValue()
		}
		out[pod.Name] = sum
	}
	return out, nil
}

// utilizationRatio is upstream's GetResourceUtilizationRatio.
func utilizationRatio(metrics PodMetricsInfo, requests map[string]int64, target int32) (float64, int32, int64, error) {
	var metricsTotal, requestsTotal int64
	n := 0
	for name, m := range metrics {
		req, ok := requests[name]
		if !ok {
			continue
		}
		metricsTotal += m.Value
		requestsTotal += req
		n++
	}
	if requestsTotal == 0 {
		return 0, 0, 0, fmt.Errorf("no metrics returned matched known pods")
	}
	current := int32((metricsTotal * 100) / requestsTotal)
	return float64(current) / float64(target), current, metricsTotal / int64(n), nil
}

// usageRatio is upstream's GetMetricUsageRatio.
func usageRatio(metrics PodMetricsInfo, target int64) (float64, int64) {
	var total int64
	for _, m := range metrics {
		total += m.Value
	}
	current := total / int64(len(metrics))
	return float64(current) / float64(target), current
}

// resourceReplicas is upstream's GetResourceReplicas once the metrics
// are in: the replica count for a target utilization (percent of
// request), the current utilization and the average raw usage.
func (c calculator) resourceReplicas(current int32, target int32, resource corev1.ResourceName, container string, pods []*corev1.Pod, metrics PodMetricsInfo) (int32, int32, int64, error) {
	if len(pods) == 0 {
		return 0, 0, 0, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	ready, unready, missing, ignored := c.groupPods(pods, metrics, resource)
	for n := range ignored {
		delete(metrics, n)
	}
	for n := range unready {
		delete(metrics, n)
	}
	if len(metrics) == 0 {
		return 0, 0, 0, fmt.Errorf("did not receive metrics for targeted pods (pods might be unready)")
	}
	requests, err := podRequests(pods, container, resource)
	if err != nil {
		return 0, 0, 0, err
	}
	ratio, utilization, raw, err := utilizationRatio(metrics, requests, target)
	if err != nil {
		return 0, 0, 0, err
	}
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if c.within(ratio) {
			return current, utilization, raw, nil
		}
		return int32(math.Ceil(ratio * float64(ready))), utilization, raw, nil
	}
	if len(missing) > 0 {
		if ratio < 1.0 {
			fallback := int64(max(100, target))
			for n := range missing {
				metrics[n] = PodMetric{Value: requests[n] * fallback / 100}
			}
		} else if ratio > 1.0 {
			for n := range missing {
				metrics[n] = PodMetric{Value: 0}
			}
		}
	}
	if scaleUpWithUnready {
		for n := range unready {
			metrics[n] = PodMetric{Value: 0}
		}
	}
	newRatio, _, _, err := utilizationRatio(metrics, requests, target)
	if err != nil {
		return 0, utilization, raw, err
	}
	if c.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current, utilization, raw, nil
	}
	replicas := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && replicas > current) || (newRatio > 1.0 && replicas < current) {
		return current, utilization, raw, nil
	}
	return replicas, utilization, raw, nil
}

// rawResourceReplicas is upstream's GetRawResourceReplicas once the
// metrics are in: the replica count for a target average value
// (milli-units) and the current average.
func (c calculator) rawResourceReplicas(current int32, target int64, resource corev1.ResourceName, pods []*corev1.Pod, metrics PodMetricsInfo) (int32, int64, error) {
	if len(pods) == 0 {
		return 0, 0, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	ready, unready, missing, ignored := c.groupPods(pods, metrics, resource)
	for n := range ignored {
		delete(metrics, n)
	}
	for n := range unready {
		delete(metrics, n)
	}
	if len(metrics) == 0 {
		return 0, 0, fmt.Errorf("did not receive metrics for targeted pods (pods might be unready)")
	}
	ratio, usage := usageRatio(metrics, target)
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if c.within(ratio) {
			return current, usage, nil
		}
		return int32(math.Ceil(ratio * float64(ready))), usage, nil
	}
	if len(missing) > 0 {
		v := int64(0)
		if ratio < 1.0 {
			v = target
		}
		for n := range missing {
			metrics[n] = PodMetric{Value: v}
		}
	}
	if scaleUpWithUnready {
		for n := range unready {
			metrics[n] = PodMetric{Value: 0}
		}
	}
	newRatio, _ := usageRatio(metrics, target)
	if c.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current, usage, nil
	}
	replicas := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && replicas > current) || (newRatio > 1.0 && replicas < current) {
		return current, usage, nil
	}
	return replicas, usage, nil
}
