package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// fedMetrics is a MetricsClient fed by the test: usage in milli-units per
// pod, or an error.
type fedMetrics struct {
	usage map[string]int64
	at    time.Time
	err   error
}

func (f *fedMetrics) GetResourceMetric(_ context.Context, _ corev1.ResourceName, _ string, _ labels.Selector, _ string) (PodMetricsInfo, time.Time, error) {
	if f.err != nil {
		return nil, time.Time{}, f.err
	}
	out := PodMetricsInfo{}
	for n, v := range f.usage {
		out[n] = PodMetric{Timestamp: f.at, Window: 30 * time.Second, Value: v}
	}
	return out, f.at, nil
}

type harness struct {
	t       *testing.T
	ctx     context.Context
	c       *client.Client
	clock   *clock.Fake
	metrics *fedMetrics
	events  *record.FakeRecorder
	ctrl    *Controller
	f       *informers.SharedInformerFactory
	ns      string
	env     *testenv.Environment
}

func newHarness(t *testing.T, ns string, metrics MetricsClient) *harness {
	t.Helper()
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ctx: context.Background(), c: c, clock: clock.NewFake(time.Now()), metrics: &fedMetrics{}, events: record.NewFakeRecorder(100), ns: ns, env: env}
	h.metrics.at = h.clock.Now()
	if metrics == nil {
		metrics = h.metrics
	}
	if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(h.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.EnsureServiceAccount(h.ctx, ns, "default"); err != nil {
		t.Fatal(err)
	}
	h.f = informers.NewSharedInformerFactory(c, 0)
	h.ctrl, err = New(Config{Client: c, Informers: h.f, Clock: h.clock, Recorder: h.events, Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// deployment creates the target "web" with replicas and as many Running,
// Ready pods (each requesting 100m cpu) started 10 minutes ago.
func (h *harness) deployment(replicas int32, pods int) {
	h.t.Helper()
	sel := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: h.ns}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	if _, err := client.For[*appsv1.Deployment, *appsv1.DeploymentList](h.c).Create(h.ctx, d, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	podClient := client.For[*corev1.Pod, *corev1.PodList](h.c).Namespace(h.ns)
	started := metav1.NewTime(h.clock.Now().Add(-10 * time.Minute).Truncate(time.Second))
	for i := range pods {
		p, err := podClient.Create(h.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Labels: sel},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}, metav1.CreateOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &started
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}
		if _, err := podClient.UpdateStatus(h.ctx, p, metav1.UpdateOptions{}); err != nil {
			h.t.Fatal(err)
		}
	}
	l, err := podClient.List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	for i := range l.Items {
		_ = h.f.Pods().Informer().GetIndexer().Add(&l.Items[i])
	}
}

func utilization(pct int32) []autoscalingv2.MetricSpec {
	return []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &pct}}}}
}

func (h *harness) hpa(min, max int32, metrics []autoscalingv2.MetricSpec, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior) {
	h.t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: h.ns}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MinReplicas:    &min, MaxReplicas: max, Metrics: metrics, Behavior: behavior}}
	if _, err := client.For[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList](h.c).Create(h.ctx, hpa, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// reconcile runs one sync on the server's current HPA.
func (h *harness) reconcile() error {
	h.t.Helper()
	hpa, err := client.For[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList](h.c).Namespace(h.ns).Get(h.ctx, "web", metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	idx := h.f.InformerFor(hpa, nil).GetIndexer()
	_ = idx.Delete(hpa)
	_ = idx.Add(hpa)
	_, err = h.ctrl.reconcileKey(h.ctx, h.ns+"/web")
	return err
}

func (h *harness) status() autoscalingv2.HorizontalPodAutoscalerStatus {
	h.t.Helper()
	hpa, err := client.For[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList](h.c).Namespace(h.ns).Get(h.ctx, "web", metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return hpa.Status
}

func (h *harness) replicas() int32 {
	h.t.Helper()
	d, err := client.For[*appsv1.Deployment, *appsv1.DeploymentList](h.c).Namespace(h.ns).Get(h.ctx, "web", metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return *d.Spec.Replicas
}

// conditions renders the conditions as "Type=Status/Reason".
func conditions(s autoscalingv2.HorizontalPodAutoscalerStatus) string {
	var out []string
	for _, c := range s.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(out, " ")
}

func condition(s autoscalingv2.HorizontalPodAutoscalerStatus, t autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c
		}
	}
	return autoscalingv2.HorizontalPodAutoscalerCondition{}
}

func (h *harness) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestScaleUpLimitedByRate(t *testing.T) {
	h := newHarness(t, "up", nil)
	h.deployment(2, 2)
	h.hpa(1, 10, utilization(50), nil)
	h.metrics.usage = map[string]int64{"web-0": 200, "web-1": 200} // 200% of request
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	// 4x the target: 8 wanted, at most max(2*2, 4) = 4 at once.
	if got := h.replicas(); got != 4 {
		t.Errorf("deployment scaled to %d, want 4", got)
	}
	s := h.status()
	if want := "AbleToScale=True/SucceededRescale ScalingActive=True/ValidMetricFound ScalingLimited=True/ScaleUpLimit"; conditions(s) != want {
		t.Errorf("conditions %s, want %s", conditions(s), want)
	}
	if m := condition(s, autoscalingv2.ScalingActive).Message; m != "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)" {
		t.Errorf("ScalingActive message %q", m)
	}
	if s.CurrentReplicas != 2 || s.DesiredReplicas != 4 || s.LastScaleTime == nil || !s.LastScaleTime.Time.Equal(h.clock.Now().Truncate(time.Second)) {
		t.Errorf("status replicas %d -> %d, lastScaleTime %v", s.CurrentReplicas, s.DesiredReplicas, s.LastScaleTime)
	}
	if len(s.CurrentMetrics) != 1 || s.CurrentMetrics[0].Resource == nil || *s.CurrentMetrics[0].Resource.Current.AverageUtilization != 200 ||
		s.CurrentMetrics[0].Resource.Current.AverageValue.String() != "200m" {
		t.Errorf("current metrics %+v", s.CurrentMetrics)
	}
	events := h.drainEvents()
	if want := "Normal SuccessfulRescale New size: 4; reason: cpu resource utilization (percentage of request) above target"; len(events) != 1 || events[0] != want {
		t.Errorf("events %q, want %q", events, want)
	}
}

// laterMetrics is a MetricsClient set once the harness (and its API
// server) exists.
type laterMetrics struct{ MetricsClient }

// The REST metrics client reads PodMetrics from an aggregated metrics
// server through the API server, as upstream's HPA reads metrics-server.
func TestMetricsFromAggregatedServer(t *testing.T) {
	mc := &laterMetrics{}
	h := newHarness(t, "agg", mc)
	var (
		mu        sync.Mutex
		selectors []string
	)
	metricsServer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/metrics.k8s.io/v1beta1":
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1","resources":[{"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get","list"]}]}`)
		case "/apis/metrics.k8s.io/v1beta1/namespaces/agg/pods":
			mu.Lock()
			selectors = append(selectors, r.URL.Query().Get("labelSelector"))
			mu.Unlock()
			item := func(name string) string {
				return `{"metadata":{"name":"` + name + `","namespace":"agg"},"timestamp":"` + h.clock.Now().UTC().Format(time.RFC3339) +
					`","window":"30s","containers":[{"name":"c","usage":{"cpu":"150m","memory":"10Mi"}}]}`
			}
			fmt.Fprint(w, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[`+item("web-0")+`,`+item("web-1")+`]}`)
		default:
			http.NotFound(w, r)
		}
	})
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	if _, err := h.env.ServeAggregatedAPI(ctx, "metrics.k8s.io", "v1beta1", "metrics-server", metricsServer); errors.Is(err, testenv.ErrNoHostIP) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	mc.MetricsClient = RESTMetricsClient{Client: h.c}
	h.deployment(2, 2)
	h.hpa(1, 10, utilization(100), nil)
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	// 150% of the requests against a 100% target: 3 replicas.
	if got := h.replicas(); got != 3 {
		t.Errorf("deployment scaled to %d, want 3 (conditions %s)", got, conditions(h.status()))
	}
	if s := h.status(); len(s.CurrentMetrics) != 1 || s.CurrentMetrics[0].Resource == nil || *s.CurrentMetrics[0].Resource.Current.AverageUtilization != 150 {
		t.Errorf("current metrics %+v", s.CurrentMetrics)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(selectors) == 0 || selectors[0] != "app=web" {
		t.Errorf("metrics server saw label selectors %q, want app=web", selectors)
	}
}

func TestWithinTolerance(t *testing.T) {
	h := newHarness(t, "tolerance", nil)
	h.deployment(2, 2)
	h.hpa(1, 10, utilization(50), nil)
	h.metrics.usage = map[string]int64{"web-0": 54, "web-1": 54} // 108% of the target
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 2 {
		t.Errorf("deployment scaled to %d within the tolerance", got)
	}
	s := h.status()
	if want := "AbleToScale=True/ReadyForNewScale ScalingActive=True/ValidMetricFound ScalingLimited=False/DesiredWithinRange"; conditions(s) != want {
		t.Errorf("conditions %s, want %s", conditions(s), want)
	}
	if s.DesiredReplicas != 2 || s.LastScaleTime != nil {
		t.Errorf("desired %d, lastScaleTime %v", s.DesiredReplicas, s.LastScaleTime)
	}
}

func TestDownscaleStabilization(t *testing.T) {
	h := newHarness(t, "down", nil)
	h.deployment(4, 4)
	h.hpa(1, 10, utilization(50), nil)
	h.metrics.usage = map[string]int64{"web-0": 20, "web-1": 20, "web-2": 20, "web-3": 20} // 20% of request, 0.4 of the target: 2 wanted
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 4 {
		t.Fatalf("scaled down to %d within the stabilization window", got)
	}
	if c := condition(h.status(), autoscalingv2.AbleToScale); c.Reason != "ScaleDownStabilized" {
		t.Errorf("AbleToScale %s/%s", c.Reason, c.Message)
	}
	h.clock.Step(4 * time.Minute)
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 4 {
		t.Fatalf("scaled down to %d after 4 minutes", got)
	}
	h.clock.Step(61 * time.Second) // the first recommendation (4) is now 5m1s old
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 2 {
		t.Errorf("after the window: %d replicas, want 2", got)
	}
	if e := h.drainEvents(); len(e) != 1 || e[0] != "Normal SuccessfulRescale New size: 2; reason: All metrics below target" {
		t.Errorf("events %q", e)
	}
}

func TestLimits(t *testing.T) {
	t.Run("max", func(t *testing.T) {
		h := newHarness(t, "max", nil)
		h.deployment(4, 4)
		h.hpa(1, 5, utilization(50), nil)
		h.metrics.usage = map[string]int64{"web-0": 100, "web-1": 100, "web-2": 100, "web-3": 100}
		if err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		if got := h.replicas(); got != 5 {
			t.Errorf("%d replicas, want max 5", got)
		}
		if c := condition(h.status(), autoscalingv2.ScalingLimited); c.Status != corev1.ConditionTrue || c.Reason != "TooManyReplicas" ||
			c.Message != "the desired replica count is more than the maximum replica count" {
			t.Errorf("ScalingLimited %+v", c)
		}
	})
	t.Run("below min", func(t *testing.T) {
		h := newHarness(t, "min", nil)
		h.deployment(1, 1)
		h.hpa(3, 5, utilization(50), nil)
		if err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		if got := h.replicas(); got != 3 {
			t.Errorf("%d replicas, want min 3", got)
		}
		if e := h.drainEvents(); len(e) != 1 || e[0] != "Normal SuccessfulRescale New size: 3; reason: Current number of replicas below Spec.MinReplicas" {
			t.Errorf("events %q", e)
		}
	})
	t.Run("target at zero", func(t *testing.T) {
		h := newHarness(t, "zero", nil)
		h.deployment(0, 0)
		h.hpa(1, 5, utilization(50), nil)
		if err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		if got := h.replicas(); got != 0 {
			t.Errorf("%d replicas, want 0", got)
		}
		if c := condition(h.status(), autoscalingv2.ScalingActive); c.Reason != "ScalingDisabled" || c.Message != "scaling is disabled since the replica count of the target is zero" {
			t.Errorf("ScalingActive %+v", c)
		}
	})
}

func TestAverageValue(t *testing.T) {
	h := newHarness(t, "value", nil)
	h.deployment(2, 2)
	v := resource.MustParse("150m")
	h.hpa(1, 10, []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &v}}}}, nil)
	h.metrics.usage = map[string]int64{"web-0": 300, "web-1": 300} // 2x: 4 wanted
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 4 {
		t.Errorf("%d replicas, want 4", got)
	}
	s := h.status()
	if len(s.CurrentMetrics) != 1 || s.CurrentMetrics[0].Resource.Current.AverageValue.String() != "300m" || s.CurrentMetrics[0].Resource.Current.AverageUtilization != nil {
		t.Errorf("current metrics %+v", s.CurrentMetrics)
	}
	if m := condition(s, autoscalingv2.ScalingActive).Message; m != "the HPA was able to successfully calculate a replica count from cpu resource" {
		t.Errorf("ScalingActive message %q", m)
	}
}

func TestBehaviorRate(t *testing.T) {
	h := newHarness(t, "behavior", nil)
	h.deployment(2, 2)
	zero := int32(0)
	h.hpa(1, 10, utilization(50), &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &zero, Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}},
	})
	h.metrics.usage = map[string]int64{"web-0": 200, "web-1": 200}
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 3 {
		t.Fatalf("%d replicas, want 3 (one pod per minute)", got)
	}
	if c := condition(h.status(), autoscalingv2.ScalingLimited); c.Reason != "ScaleUpLimit" {
		t.Errorf("ScalingLimited %+v", c)
	}
	h.clock.Step(30 * time.Second)
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 3 {
		t.Fatalf("%d replicas 30s later, want still 3", got)
	}
	h.clock.Step(31 * time.Second)
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 4 {
		t.Fatalf("%d replicas a minute later, want 4", got)
	}
}

// TestMissingMetrics: with the real metrics client there is no
// metrics.k8s.io to read; the conditions say so as upstream's do.
func TestMissingMetrics(t *testing.T) {
	h := newHarness(t, "nometrics", nil)
	h.ctrl.cfg.Metrics = RESTMetricsClient{Client: h.c}
	h.deployment(2, 2)
	h.hpa(1, 10, utilization(50), nil)
	err := h.reconcile()
	if err == nil || !strings.Contains(err.Error(), "failed to compute desired number of replicas based on listed metrics for Deployment/nometrics/web") {
		t.Errorf("reconcile error %v", err)
	}
	s := h.status()
	if want := "AbleToScale=True/SucceededGetScale ScalingActive=False/FailedGetResourceMetric"; conditions(s) != want {
		t.Errorf("conditions %s, want %s", conditions(s), want)
	}
	const why = "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
	if m := condition(s, autoscalingv2.ScalingActive).Message; m != "the HPA was unable to compute the replica count: "+why {
		t.Errorf("ScalingActive message %q", m)
	}
	if h.replicas() != 2 || s.CurrentReplicas != 2 || s.DesiredReplicas != 0 {
		t.Errorf("replicas %d, status %d -> %d", h.replicas(), s.CurrentReplicas, s.DesiredReplicas)
	}
	events := h.drainEvents()
	want := []string{"Warning FailedGetResourceMetric " + why,
		"Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: " + why}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	// A second sync changes nothing on the server.
	before := s
	_ = h.reconcile()
	if after := h.status(); conditions(after) != conditions(before) || !condition(after, autoscalingv2.ScalingActive).LastTransitionTime.Time.Equal(before.Conditions[1].LastTransitionTime.Time) {
		t.Errorf("second sync changed the status: %+v", after)
	}
}

func TestFailedGetScale(t *testing.T) {
	h := newHarness(t, "notarget", nil)
	h.hpa(1, 10, utilization(50), nil)
	if err := h.reconcile(); err == nil {
		t.Error("no error for a missing target")
	}
	c := condition(h.status(), autoscalingv2.AbleToScale)
	if c.Status != corev1.ConditionFalse || c.Reason != "FailedGetScale" ||
		c.Message != `the HPA controller was unable to get the target's current scale: deployments.apps "web" not found` {
		t.Errorf("AbleToScale %+v", c)
	}
}

func TestMetricErrorsAndMissingPods(t *testing.T) {
	h := newHarness(t, "partial", nil)
	h.deployment(2, 2)
	h.hpa(1, 10, utilization(50), nil)
	// web-1 has no metric and web-0 is far below the target (ratio 0.2):
	// on a scale down a pod without a metric counts as using its whole
	// request, (10+100)/200 = 55%, ratio 1.1: within the tolerance, so no
	// scale down at all, as upstream.
	h.metrics.usage = map[string]int64{"web-0": 10}
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := h.replicas(); got != 2 {
		t.Errorf("%d replicas, want 2", got)
	}
	h.metrics.err = errors.New("boom")
	if err := h.reconcile(); err == nil {
		t.Error("no error from a failing metrics client")
	}
	if c := condition(h.status(), autoscalingv2.ScalingActive); c.Reason != "FailedGetResourceMetric" ||
		c.Message != "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: boom" {
		t.Errorf("ScalingActive %+v", c)
	}
}

// TestBehaviorTolerance: a behavior's scaleUp tolerance replaces the
// global 0.1 on the way up only.
func TestBehaviorTolerance(t *testing.T) {
	for _, tt := range []struct {
		name  string
		up    string
		usage int64
		want  int32
	}{
		{name: "global tolerance: 108% stays", usage: 54, want: 2},
		{name: "scaleUp tolerance 5%: 108% scales", up: "0.05", usage: 54, want: 3},
		{name: "scaleUp tolerance does not apply down: 92% stays", up: "0.05", usage: 46, want: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "tol", nil)
			h.deployment(2, 2)
			b := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{}}
			if tt.up != "" {
				q := resource.MustParse(tt.up)
				b.ScaleUp.Tolerance = &q
			}
			h.hpa(1, 10, utilization(50), b)
			h.metrics.usage = map[string]int64{"web-0": tt.usage, "web-1": tt.usage}
			if err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			if got := h.replicas(); got != tt.want {
				t.Errorf("%d replicas, want %d", got, tt.want)
			}
		})
	}
}

// TestAmbiguousSelector: two HPAs scaling the same pods: neither scales.
func TestAmbiguousSelector(t *testing.T) {
	h := newHarness(t, "ambiguous", nil)
	h.deployment(2, 2)
	h.hpa(1, 10, utilization(50), nil)
	other := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: h.ns}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 10, Metrics: utilization(50)}}
	other, err := client.For[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList](h.c).Create(h.ctx, other, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = h.f.InformerFor(other, nil).GetIndexer().Add(other)
	h.metrics.usage = map[string]int64{"web-0": 200, "web-1": 200}
	if _, err := h.ctrl.reconcileKey(h.ctx, h.ns+"/other"); err != nil {
		t.Fatal(err) // the first one alone is not ambiguous yet
	}
	if err := h.reconcile(); err == nil {
		t.Error("no error for an ambiguous selector")
	}
	c := condition(h.status(), autoscalingv2.ScalingActive)
	if c.Reason != "AmbiguousSelector" || c.Message != "pods by selector app=web are controlled by multiple HPAs: [ambiguous/other ambiguous/web]" {
		t.Errorf("ScalingActive %+v", c)
	}
}
