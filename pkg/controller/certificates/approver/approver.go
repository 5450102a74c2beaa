package approver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/csrutil"
)

// QueueName is upstream's queue name.
const QueueName = "csrapproving"

// Config configures the controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	// Workers is 5 upstream (no flag).
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
}

// Controller approves node client certificate requests.
type Controller struct {
	*csrutil.Controller
	cfg Config
}

// New registers the controller's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("approver: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers < 1 {
		cfg.Workers = 5
	}
	c := &Controller{cfg: cfg}
	base, err := csrutil.NewController(QueueName, cfg.Informers, cfg.Clock, cfg.MetricsProvider, cfg.Workers, cfg.Logger, c.handle)
	if err != nil {
		return nil, err
	}
	c.Controller = base
	return c, nil
}

// The permissions and messages of upstream's recognizers, in order.
const (
	selfNodeClientMessage = "Auto approving self kubelet client certificate after SubjectAccessReview."
	nodeClientMessage     = "Auto approving kubelet client certificate after SubjectAccessReview."
)

// handle approves csr when it is a node client request the requester may
// make.
func (c *Controller) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if len(csr.Status.Certificate) != 0 {
		return nil
	}
	if approved, denied := csrutil.ApprovalCondition(&csr.Status); approved || denied {
		return nil
	}
	x509cr, err := csrutil.ParseCSR(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %v", csr.Name, err)
	}
	isNodeClient := csr.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName &&
		csrutil.ValidateKubeletClientCSR(x509cr, csr.Spec.Usages) == nil
	type permission struct{ subresource, message string }
	var perms []permission
	if isNodeClient && csr.Spec.Username == x509cr.Subject.CommonName {
		perms = append(perms, permission{"selfnodeclient", selfNodeClientMessage})
	}
	if isNodeClient {
		perms = append(perms, permission{"nodeclient", nodeClientMessage})
	}
	var tried []string
	for _, p := range perms {
		tried = append(tried, p.subresource)
		ok, err := c.authorize(ctx, csr, p.subresource)
		if err != nil {
			return err
		}
		if ok {
			csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
				Reason: "AutoApproved", Message: p.message,
			})
			return c.updateApproval(ctx, csr)
		}
	}
	if len(tried) != 0 {
		return &csrutil.IgnorableError{Msg: fmt.Sprintf("recognized csr %q as %v but subject access review was not approved", csr.Name, tried)}
	}
	return nil
}

// authorize asks the API server whether the requester may create
// certificatesigningrequests/<subresource>.
func (c *Controller) authorize(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: "create", Subresource: subresource,
			},
		},
	}
	if len(csr.Spec.Extra) > 0 {
		sar.Spec.Extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range csr.Spec.Extra {
			sar.Spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	if err := do(ctx, c.cfg.Client, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar, sar); err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// updateApproval writes csr's conditions through the approval subresource.
func (c *Controller) updateApproval(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	csr.APIVersion, csr.Kind = "certificates.k8s.io/v1", "CertificateSigningRequest"
	return do(ctx, c.cfg.Client, http.MethodPut,
		"/apis/certificates.k8s.io/v1/certificatesigningrequests/"+csr.Name+"/approval", csr, &certificatesv1.CertificateSigningRequest{})
}

func do(ctx context.Context, c *client.Client, method, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	resp, err := c.Do(ctx, &client.Request{Method: method, Path: path, Body: body, JSONOnly: true})
	if err != nil {
		return err
	}
	return json.Unmarshal(resp.Body, out)
}
