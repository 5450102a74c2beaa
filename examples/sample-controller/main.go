package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	samplev1alpha1 "github.com/skiff-sh/skiff/examples/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	workers := flag.Int("workers", 2, "number of workers")
	metricsAddr := flag.String("metrics-bind-address", "", "serve Prometheus metrics (work queue depth, latency, retries...) on this address, e.g. :8080")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))

	// 1. A context that ends on the first Ctrl-C (a second one exits).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The metrics port is opened first, so that a busy port is an error at
	// start rather than a silent lack of metrics.
	var metricsLn net.Listener
	if *metricsAddr != "" {
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			logger.Error("metrics endpoint", "err", err)
			os.Exit(1)
		}
		metricsLn = ln
	}
	if err := run(ctx, *kubeconfig, *workers, metricsLn, logger); err != nil {
		logger.Error("sample-controller failed", "err", err)
		os.Exit(1)
	}
}

// run runs the controller until ctx ends; with metricsLn it serves the
// Prometheus metrics on it (and closes it on return).
func run(ctx context.Context, kubeconfig string, workers int, metricsLn net.Listener, logger *slog.Logger) error {
	// 2. How to reach the API server.
	cfg, err := client.LoadKubeconfig(kubeconfig, "")
	if err != nil {
		return err
	}
	// 3. One REST client serves every typed client.
	c, err := client.New(cfg)
	if err != nil {
		return err
	}
	// 4. Two informer factories, as upstream's kubeInformerFactory and
	// exampleInformerFactory: one for the built-in Deployments, one for the
	// Foo custom resource (any resource works: its Go type, its list type
	// and where it is served, samplev1alpha1.FoosResource).
	kubeInformers := informers.NewSharedInformerFactory(c, 30*time.Second)
	fooInformers := informers.NewSharedInformerFactory(c, 30*time.Second)

	// 5. Events go to the Events API (and to the log). The scheme knows
	// the Foo types, so that events name their object's kind.
	scheme := runtime.NewScheme()
	if err := samplev1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithLogger(logger), record.WithScheme(scheme))
	defer broadcaster.Shutdown()
	broadcaster.StartStructuredLogging(logger, slog.LevelInfo)
	broadcaster.StartRecordingToSink(record.NewClientSink(c))
	recorder := broadcaster.NewRecorder(corev1.EventSource{Component: controllerAgentName})

	// 6. The work queue's metrics (client-go's workqueue_* names) on /metrics.
	reg := prometheus.NewRegistry()
	metrics, err := workqueue.NewPrometheusMetricsProvider(reg)
	if err != nil {
		return err
	}
	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("metrics endpoint stopped", "err", err)
			}
		}()
		defer srv.Close()
	}

	// 7. The controller registers its handlers on the informers.
	controller, err := NewController(c,
		informers.InformerFor[*appsv1.Deployment, *appsv1.DeploymentList](kubeInformers),
		informers.InformerForResource[*samplev1alpha1.Foo, *samplev1alpha1.FooList](fooInformers, samplev1alpha1.FoosResource),
		recorder, workqueue.DefaultTypedControllerRateLimiter[string](), metrics, logger)
	if err != nil {
		return err
	}
	// 8. Start the informers (Start is safe to call again later), then run.
	kubeInformers.Start(ctx)
	fooInformers.Start(ctx)
	defer kubeInformers.Shutdown()
	defer fooInformers.Shutdown()
	return controller.Run(ctx, workers)
}
