package csrutil

import (
	"context"
	"errors"
	"log/slog"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// Handler acts on one request (a copy the handler may modify).
type Handler func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error

// Informer is the shared CertificateSigningRequest informer of f.
func Informer(f *informers.SharedInformerFactory) *cache.TypedInformer[*certificatesv1.CertificateSigningRequest] {
	return informers.InformerFor[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](f)
}

// Controller is upstream's CertificateController: every added or updated
// request is queued, and its handler is called on a copy of the cached
// request unless it already has a certificate.
type Controller struct {
	name    string
	handler Handler
	lister  cache.Lister[*certificatesv1.CertificateSigningRequest]
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	workers int
	logger  *slog.Logger
}

// NewController registers the handlers on f's request informer; name is
// the queue's name ("csrapproving", "csrsigning").
func NewController(name string, f *informers.SharedInformerFactory, clk clock.Clock, mp workqueue.MetricsProvider,
	workers int, logger *slog.Logger, handler Handler) (*Controller, error) {
	if workers < 1 {
		workers = 1
	}
	inf := Informer(f)
	c := &Controller{
		name: name, handler: handler, lister: inf.Lister(), synced: inf.HasSynced, workers: workers, logger: logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](clk),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: mp, Clock: clk}),
	}
	if _, err := inf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*certificatesv1.CertificateSigningRequest]{
		AddFunc:    func(csr *certificatesv1.CertificateSigningRequest, _ bool) { c.queue.Add(csr.Name) },
		UpdateFunc: func(_, csr *certificatesv1.CertificateSigningRequest) { c.queue.Add(csr.Name) },
		DeleteFunc: func(d cache.DeletedObject[*certificatesv1.CertificateSigningRequest]) { c.queue.Add(d.Key()) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the cache and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.logger.Info("Starting certificate controller", "name", c.name)
	defer c.logger.Info("Shutting down certificate controller", "name", c.name)
	if !cache.WaitForCacheSync(ctx, c.synced) {
		return nil
	}
	workqueue.RunWorkers(ctx, c.queue, c.workers, c.Sync, func(key string, err error) {
		var ign *IgnorableError
		if errors.As(err, &ign) {
			c.logger.Debug("Sync certificate request failed", "csr", key, "err", err)
			return
		}
		c.logger.Error("Sync certificate request failed", "csr", key, "err", err)
	})
	return nil
}

// Sync hands the cached request name to the handler.
func (c *Controller) Sync(ctx context.Context, name string) error {
	csr, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(csr.Status.Certificate) > 0 {
		return nil // already issued
	}
	return c.handler(ctx, csr.DeepCopy())
}

// IgnorableError is a failure that is retried but not worth an error log
// (upstream's certificates.IgnorableError).
type IgnorableError struct{ Msg string }

func (e *IgnorableError) Error() string { return e.Msg }
