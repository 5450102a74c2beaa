package cleaner

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/csrutil"
)

// Upstream's deadlines.
const (
	PollingInterval    = time.Hour
	approvedExpiration = time.Hour
	deniedExpiration   = time.Hour
	pendingExpiration  = 24 * time.Hour
)

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Clock     clock.Clock
	Logger    *slog.Logger
	// PollingInterval (0: one hour).
	PollingInterval time.Duration
}

// Controller deletes finished requests.
type Controller struct {
	cfg    Config
	csrs   *client.Typed[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList]
	lister cache.Lister[*certificatesv1.CertificateSigningRequest]
	synced cache.InformerSynced
}

// New asks for the request informer.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("cleaner: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PollingInterval <= 0 {
		cfg.PollingInterval = PollingInterval
	}
	inf := csrutil.Informer(cfg.Informers)
	return &Controller{
		cfg:    cfg,
		csrs:   client.For[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList](cfg.Client),
		lister: inf.Lister(), synced: inf.HasSynced,
	}, nil
}

// Run waits for the cache, cleans, and cleans again every
// PollingInterval until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	c.cfg.Logger.Info("Starting CSR cleaner controller")
	defer c.cfg.Logger.Info("Shutting down CSR cleaner controller")
	if !cache.WaitForCacheSync(ctx, c.synced) {
		return nil
	}
	t := c.cfg.Clock.NewTicker(c.cfg.PollingInterval)
	defer t.Stop()
	for {
		if err := c.Clean(ctx); err != nil {
			c.cfg.Logger.Error("Cleaning certificate signing requests", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// Clean deletes every cached request that Expired says is done with.
func (c *Controller) Clean(ctx context.Context) error {
	csrs, err := c.lister.List(labels.Everything())
	if err != nil {
		return err
	}
	var errs []error
	now := c.cfg.Clock.Now()
	for _, csr := range csrs {
		if why := Expired(csr, now); why != "" {
			c.cfg.Logger.Info("Cleaning CSR", "csr", csr.Name, "reason", why)
			if err := c.csrs.Delete(ctx, csr.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("unable to delete CSR %q: %v", csr.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Expired says why csr is to be deleted at now ("" : it is kept).
func Expired(csr *certificatesv1.CertificateSigningRequest, now time.Time) string {
	olderThan := func(t metav1.Time, d time.Duration) bool { return !t.IsZero() && now.Sub(t.Time) > d }
	approved, denied := csrutil.ApprovalCondition(&csr.Status)
	for _, c := range csr.Status.Conditions {
		switch {
		case c.Type == certificatesv1.CertificateApproved && len(csr.Status.Certificate) > 0 && olderThan(c.LastUpdateTime, approvedExpiration):
			return "issued past deadline"
		case c.Type == certificatesv1.CertificateDenied && olderThan(c.LastUpdateTime, deniedExpiration):
			return "denied past deadline"
		case c.Type == certificatesv1.CertificateFailed && olderThan(c.LastUpdateTime, deniedExpiration):
			return "failed past deadline"
		}
	}
	if !approved && !denied && olderThan(csr.CreationTimestamp, pendingExpiration) {
		return "pending past deadline"
	}
	if len(csr.Status.Certificate) > 0 && approved {
		if b, _ := pem.Decode(csr.Status.Certificate); b != nil {
			if cert, err := x509.ParseCertificate(b.Bytes); err == nil && now.After(cert.NotAfter) {
				return "issued certificate expired"
			}
		}
	}
	return ""
}
