package printers

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Annotations in which autoscaling/v1 round-trips what only v2 can express.
const (
	hpaMetricSpecsAnnotation    = "autoscaling.alpha.kubernetes.io/metrics"
	hpaMetricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	// hpaDefaultCPUUtilization is the implicit target of a v1 HPA that sets none.
	hpaDefaultCPUUtilization = 80
)

// hpaHandler prints autoscaling/v1 and autoscaling/v2 HPAs alike. Upstream
// prints the internal (v2-shaped) object whatever version was requested, so a
// v1 object is first lifted to v2 the way the v1 conversion does it.
//
// The column descriptions come from autoscaling/v2: upstream used
// autoscaling/v2beta1, which k8s.io/api no longer ships.
func hpaHandler() Handler {
	specDoc := autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
	return Handler{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Reference", "string", specDoc["scaleTargetRef"]),
			col("Targets", "string", specDoc["metrics"]),
			col("MinPods", "string", specDoc["minReplicas"]),
			col("MaxPods", "string", specDoc["maxReplicas"]),
			col("Replicas", "string", autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]),
			ageColumn(),
		},
		Cells: func(obj runtime.Object, now time.Time) ([]interface{}, error) {
			switch h := obj.(type) {
			case *autoscalingv2.HorizontalPodAutoscaler:
				return hpaCells(h, now), nil
			case *autoscalingv1.HorizontalPodAutoscaler:
				v2, err := hpaV1ToV2(h)
				if err != nil {
					return nil, err
				}
				return hpaCells(v2, now), nil
			}
			return nil, fmt.Errorf("printers: cannot print %T as a HorizontalPodAutoscaler", obj)
		},
	}
}

func hpaCells(h *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []interface{} {
	minPods := "<unset>"
	if h.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *h.Spec.MinReplicas)
	}
	return []interface{}{
		h.Name,
		h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name,
		hpaTargets(h.Spec.Metrics, h.Status.CurrentMetrics),
		minPods,
		int64(h.Spec.MaxReplicas),
		int64(h.Status.CurrentReplicas),
		age(h.CreationTimestamp, now),
	}
}

// hpaTargets renders "current/target" for the first two metrics (spec and
// status are matched by index), then " + N more...".
func hpaTargets(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const limit = 2
	list := make([]string, 0, len(specs))
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		list = append(list, hpaTarget(spec, st))
	}
	if len(list) > limit {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:limit], ", "), len(list)-limit)
	}
	return strings.Join(list, ", ")
}

// hpaTarget renders one metric; st is the status at the same index, if any.
func hpaTarget(spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	switch spec.Type {
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External.Target.AverageValue != nil {
			current := unknown
			if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
				current = st.External.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String())
		}
		current := unknown
		if st != nil && st.External != nil {
			current = st.External.Current.Value.String()
		}
		return fmt.Sprintf("%s/%s", current, spec.External.Target.Value.String())
	case autoscalingv2.PodsMetricSourceType:
		current := unknown
		if st != nil && st.Pods != nil {
			current = st.Pods.Current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String())
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object.Target.AverageValue != nil {
			current := unknown
			if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
				current = st.Object.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String())
		}
		current := unknown
		if st != nil && st.Object != nil {
			current = st.Object.Current.Value.String()
		}
		return fmt.Sprintf("%s/%s", current, spec.Object.Target.Value.String())
	case autoscalingv2.ResourceMetricSourceType:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.Resource != nil {
			cur = &st.Resource.Current
		}
		return resourceTarget(spec.Resource.Name, spec.Resource.Target, cur)
	case autoscalingv2.ContainerResourceMetricSourceType:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.ContainerResource != nil {
			cur = &st.ContainerResource.Current
		}
		return resourceTarget(spec.ContainerResource.Name, spec.ContainerResource.Target, cur)
	}
	return "<unknown type>"
}

// resourceTarget renders "name: current/target" for a (container) resource
// metric, by average value or by utilization percentage.
func resourceTarget(name corev1.ResourceName, target autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if target.AverageValue != nil {
		if cur != nil {
			current = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s: %s/%s", name, current, target.AverageValue.String())
	}
	if cur != nil && cur.AverageUtilization != nil {
		current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s: %s/%s", name, current, want)
}

// hpaV1ToV2 lifts what the HPA table shows from an autoscaling/v1 object:
// the CPU target, the extra metrics kept in annotations, and the implicit
// 80% CPU target when no metric is set at all.
func hpaV1ToV2(in *autoscalingv1.HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				Kind: in.Spec.ScaleTargetRef.Kind, Name: in.Spec.ScaleTargetRef.Name, APIVersion: in.Spec.ScaleTargetRef.APIVersion,
			},
			MinReplicas: in.Spec.MinReplicas,
			MaxReplicas: in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: in.Status.CurrentReplicas,
			DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
	if p := in.Spec.TargetCPUUtilizationPercentage; p != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(*p)}
	}
	if p := in.Status.CurrentCPUUtilizationPercentage; p != nil {
		u := *p
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type:     autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: &u}},
		}}
	}
	if enc, ok := in.Annotations[hpaMetricSpecsAnnotation]; ok {
		var others []autoscalingv1.MetricSpec
		if err := json.Unmarshal([]byte(enc), &others); err != nil {
			return nil, fmt.Errorf("printers: bad %s annotation: %w", hpaMetricSpecsAnnotation, err)
		}
		metrics := make([]autoscalingv2.MetricSpec, 0, len(others)+1)
		for _, m := range others {
			metrics = append(metrics, metricSpecV1ToV2(m))
		}
		// the CPU target from the spec field goes after the annotated ones
		metrics = append(metrics, out.Spec.Metrics...)
		out.Spec.Metrics = metrics
	}
	if enc, ok := in.Annotations[hpaMetricStatusesAnnotation]; ok {
		var current []autoscalingv1.MetricStatus
		if err := json.Unmarshal([]byte(enc), &current); err != nil {
			return nil, fmt.Errorf("printers: bad %s annotation: %w", hpaMetricStatusesAnnotation, err)
		}
		// the annotation carries more detail than the CPU status field: it replaces it
		out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, 0, len(current))
		for _, m := range current {
			out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, metricStatusV1ToV2(m))
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(hpaDefaultCPUUtilization)}
	}
	return out, nil
}

func cpuUtilizationMetric(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &percent},
		},
	}
}

func qtyPtr(q resource.Quantity) *resource.Quantity { return &q }

func resourceTargetV1(utilization *int32, average *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: average, AverageUtilization: utilization}
	if utilization != nil {
		t.Type = autoscalingv2.UtilizationMetricType
	}
	return t
}

func metricSpecV1ToV2(in autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: qtyPtr(o.TargetValue), AverageValue: o.AverageValue}
		if o.AverageValue != nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: o.Target.Kind, Name: o.Target.Name, APIVersion: o.Target.APIVersion},
			Metric:          autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Target:          t,
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: qtyPtr(p.TargetAverageValue)},
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: r.Name, Target: resourceTargetV1(r.TargetAverageUtilization, r.TargetAverageValue)}
	}
	if r := in.ContainerResource; r != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{
			Name: r.Name, Container: r.Container, Target: resourceTargetV1(r.TargetAverageUtilization, r.TargetAverageValue),
		}
	}
	if e := in.External; e != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: e.TargetValue, AverageValue: e.TargetAverageValue}
		if e.TargetValue == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Target: t,
		}
	}
	return out
}

func metricStatusV1ToV2(in autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: o.Target.Kind, Name: o.Target.Name, APIVersion: o.Target.APIVersion},
			Metric:          autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: qtyPtr(o.CurrentValue), AverageValue: o.AverageValue},
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: qtyPtr(p.CurrentAverageValue)},
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{
			Name:    r.Name,
			Current: autoscalingv2.MetricValueStatus{AverageValue: qtyPtr(r.CurrentAverageValue), AverageUtilization: r.CurrentAverageUtilization},
		}
	}
	if r := in.ContainerResource; r != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{
			Name: r.Name, Container: r.Container,
			Current: autoscalingv2.MetricValueStatus{AverageValue: qtyPtr(r.CurrentAverageValue), AverageUtilization: r.CurrentAverageUtilization},
		}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: qtyPtr(e.CurrentValue), AverageValue: e.CurrentAverageValue},
		}
	}
	return out
}
