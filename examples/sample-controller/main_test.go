package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplev1alpha1 "github.com/skiff-sh/skiff/examples/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/skiff-sh/skiff/pkg/client"
)

// TestRunServesQueueMetrics runs the program's whole wiring (kubeconfig,
// informers, recorder, controller, metrics endpoint) against an API server
// and checks that the work queue's metrics, under client-go's names, are on
// /metrics once a Foo has been handled.
func TestRunServesQueueMetrics(t *testing.T) {
	env, c := startEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	done := make(chan error, 1)
	go func() { done <- run(ctx, env.KubeconfigPath, 2, ln, logger) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	foo := &samplev1alpha1.Foo{TypeMeta: metav1.TypeMeta{APIVersion: "samplecontroller.k8s.io/v1alpha1", Kind: "Foo"}, ObjectMeta: metav1.ObjectMeta{Name: "metrics-foo", Namespace: "default"},
		Spec: samplev1alpha1.FooSpec{DeploymentName: "metrics-foo"}}
	if _, err := client.NewTyped[*samplev1alpha1.Foo, *samplev1alpha1.FooList](c, samplev1alpha1.FoosResource).Namespace("default").Create(ctx, foo, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deps := client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace("default")
	eventually(t, "the Foo's deployment", func() (bool, string) {
		_, err := deps.Get(ctx, "metrics-foo", metav1.GetOptions{})
		return err == nil, errString(err)
	})

	scrape := func() string {
		resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	value := func(body, metric string) (float64, bool) {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + ` (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(m[1], 64)
		return v, err == nil
	}
	// The worker records its work duration after the sync returns, so
	// wait for that too.
	eventually(t, "queue metrics for the handled Foo", func() (bool, string) {
		body := scrape()
		adds, ok1 := value(body, `workqueue_adds_total{name="Foos"}`)
		work, ok2 := value(body, `workqueue_work_duration_seconds_count{name="Foos"}`)
		_, ok3 := value(body, `workqueue_depth{name="Foos"}`)
		_, ok4 := value(body, `workqueue_retries_total{name="Foos"}`)
		return ok1 && ok2 && ok3 && ok4 && adds >= 1 && work >= 1, body
	})
}
