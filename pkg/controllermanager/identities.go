package controllermanager

import (
	"context"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/auth/bootstrappolicy"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// Controller identities. Without UseServiceAccountCredentials every
// controller's client uses the manager's own credentials
// (system:kube-controller-manager). With it, as upstream's
// --use-service-account-credentials, each controller talks to the API
// server as the service account kube-system/<name> that upstream's
// controller uses (ServiceAccountName), whose permissions are upstream's
// system:controller:<name> ClusterRole: the manager creates the service
// account if it is missing and gets tokens for it from the TokenRequest
// API (an hour each, renewed when 80% of their life has passed, or at once
// after a 401), as upstream's dynamic client builder, and records its
// events with it (a broadcaster of its own, as upstream's controllers). The
// shared informers and leader election keep the manager's own identity, as
// upstream's (its role lists and watches everything).

// ControllerNamespace holds the controllers' service accounts.
const ControllerNamespace = "kube-system"

// ServiceAccountName is the service account (in kube-system) a controller
// runs as with UseServiceAccountCredentials: the name upstream's
// controller asks its client builder for (skiff's own controllers: the
// account skiff's additions to the bootstrap policy bind). A controller
// without one (upstream's token controller) keeps the manager's identity.
func ServiceAccountName(controller string) (string, bool) {
	name, ok := map[string]string{
		"endpoints-controller":                           "endpoint-controller",
		"endpointslice-controller":                       "endpointslice-controller",
		"endpointslice-mirroring-controller":             "endpointslicemirroring-controller",
		"replicationcontroller-controller":               "replication-controller",
		"pod-garbage-collector-controller":               "pod-garbage-collector",
		"resourcequota-controller":                       "resourcequota-controller",
		"namespace-controller":                           "namespace-controller",
		"serviceaccount-controller":                      "service-account-controller",
		"garbage-collector-controller":                   "generic-garbage-collector",
		"daemonset-controller":                           "daemon-set-controller",
		"job-controller":                                 "job-controller",
		"deployment-controller":                          "deployment-controller",
		"replicaset-controller":                          "replicaset-controller",
		"horizontal-pod-autoscaler-controller":           "horizontal-pod-autoscaler",
		"disruption-controller":                          "disruption-controller",
		"statefulset-controller":                         "statefulset-controller",
		"cronjob-controller":                             "cronjob-controller",
		"certificatesigningrequest-signing-controller":   "certificate-controller",
		"certificatesigningrequest-approving-controller": "certificate-controller",
		"certificatesigningrequest-cleaner-controller":   "certificate-controller",
		"ttl-controller":                                 "ttl-controller",
		"bootstrap-signer-controller":                    "bootstrap-signer",
		"token-cleaner-controller":                       "token-cleaner",
		"node-ipam-controller":                           "node-controller",
		"node-lifecycle-controller":                      "node-controller",
		"taint-eviction-controller":                      "node-controller",
		"persistentvolume-binder-controller":             "persistent-volume-binder",
		"persistentvolume-attach-detach-controller":      "attachdetach-controller",
		"persistentvolume-expander-controller":           "expand-controller",
		"clusterrole-aggregation-controller":             "clusterrole-aggregation-controller",
		"persistentvolumeclaim-protection-controller":    "pvc-protection-controller",
		"persistentvolume-protection-controller":         "pv-protection-controller",
		"ttl-after-finished-controller":                  "ttl-after-finished-controller",
		"root-ca-certificate-publisher-controller":       "root-ca-cert-publisher",
		"ephemeral-volume-controller":                    "ephemeral-volume-controller",
		"storageversion-garbage-collector-controller":    "storage-version-garbage-collector",
		"resourceclaim-controller":                       "resource-claim-controller",
		"legacy-serviceaccount-token-cleaner-controller": "legacy-service-account-token-cleaner",
		"validatingadmissionpolicy-status-controller":    "validatingadmissionpolicy-status-controller",
		"service-cidr-controller":                        "service-cidrs-controller",
		"selinux-warning-controller":                     "selinux-warning-controller",
		// skiff's own: bound to skiff's skiff:local-path-provisioner role
		// (bootstrappolicy.SkiffClusterRoles).
		"skiff-local-path-provisioner": bootstrappolicy.LocalPathProvisionerServiceAccount,
	}[controller]
	return name, ok
}

// Upstream's dynamic client builder: tokens are requested for an hour and
// renewed once 80% of their life (at least ten minutes) has passed.
const (
	tokenExpirationSeconds = 3600
	tokenLeewayPercent     = 20
	minTokenLifetime       = 10 * time.Minute
)

// identities builds the controllers' client configurations.
type identities struct {
	root    *client.Client // the manager's own client: creates service accounts and tokens
	base    client.Config  // the manager's client configuration
	useSA   bool
	clock   clock.Clock
	mu      sync.Mutex
	sources map[string]*serviceAccountTokenSource // by service account name: one token per account, as upstream
}

// clientConfig is the client configuration of the named controller: the
// manager's credentials, or with service account credentials the
// manager's connection settings (no client certificate, no token) with the
// service account's tokens, after making sure the service account exists.
func (ids *identities) clientConfig(ctx context.Context, controller string) (client.Config, error) {
	cfg := ids.base
	sa, ok := ServiceAccountName(controller)
	if !ok {
		cfg.UserAgent = ids.base.UserAgent + "/" + controller
		return cfg, nil
	}
	if !ids.useSA {
		// Upstream's client builder names the client after the account
		// even when it keeps the manager's credentials.
		cfg.UserAgent = ids.base.UserAgent + "/" + sa
		return cfg, nil
	}
	if _, err := getOrCreateServiceAccount(ctx, ids.root, sa); err != nil {
		return client.Config{}, fmt.Errorf("service account %s/%s: %w", ControllerNamespace, sa, err)
	}
	ids.mu.Lock()
	src := ids.sources[sa]
	if src == nil {
		src = &serviceAccountTokenSource{root: ids.root, name: sa, clock: ids.clock}
		if ids.sources == nil {
			ids.sources = map[string]*serviceAccountTokenSource{}
		}
		ids.sources[sa] = src
	}
	ids.mu.Unlock()
	cfg.CertData, cfg.KeyData, cfg.CertFile, cfg.KeyFile = nil, nil, "", ""
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	cfg.TokenSource = src
	cfg.UserAgent = ids.base.UserAgent + "/system:serviceaccount:" + ControllerNamespace + ":" + sa
	return cfg, nil
}

func getOrCreateServiceAccount(ctx context.Context, root *client.Client, name string) (*corev1.ServiceAccount, error) {
	sas := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](root).Namespace(ControllerNamespace)
	sa, err := sas.Get(ctx, name, metav1.GetOptions{})
	if err == nil || !apierrors.IsNotFound(err) {
		return sa, err
	}
	sa, err = sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ControllerNamespace, Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return sas.Get(ctx, name, metav1.GetOptions{})
	}
	return sa, err
}

// serviceAccountTokenSource implements client.TokenSource with tokens of
// one service account from the TokenRequest API.
type serviceAccountTokenSource struct {
	root  *client.Client
	name  string
	clock clock.Clock

	mu     sync.Mutex
	token  string
	expiry time.Time // renew from then on
}

// Token returns the cached token, or a new one once the cached one is due
// for renewal. Failures are retried (0.5s, 1s, 2s, as upstream's backoff)
// before the error reaches the request.
func (s *serviceAccountTokenSource) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.clock.Now().Before(s.expiry) {
		return s.token, nil
	}
	var err error
	delay := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		var tr *authenticationv1.TokenRequest
		if tr, err = s.request(ctx); err == nil {
			now := s.clock.Now()
			lifetime := tr.Status.ExpirationTimestamp.Sub(now)
			if lifetime < minTokenLifetime {
				lifetime = minTokenLifetime
			}
			s.token = tr.Status.Token
			s.expiry = now.Add(lifetime - lifetime*tokenLeewayPercent/100)
			return s.token, nil
		}
		if attempt == 3 || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-s.clock.After(delay):
		}
		delay *= 2
	}
	return "", fmt.Errorf("failed to get token for %s/%s: %w", ControllerNamespace, s.name, err)
}

// ResetToken drops the cached token: the next request gets a new one.
func (s *serviceAccountTokenSource) ResetToken() {
	s.mu.Lock()
	s.token = ""
	s.mu.Unlock()
}

func (s *serviceAccountTokenSource) request(ctx context.Context) (*authenticationv1.TokenRequest, error) {
	// The account may have been deleted since: recreate it, as upstream.
	if _, err := getOrCreateServiceAccount(ctx, s.root, s.name); err != nil {
		return nil, err
	}
	exp := int64(tokenExpirationSeconds)
	var tr authenticationv1.TokenRequest
	err := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](s.root).Namespace(ControllerNamespace).
		Subresource(ctx, s.name, "token", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, &tr)
	if err != nil {
		return nil, err
	}
	if tr.Status.Token == "" {
		return nil, fmt.Errorf("empty token in the TokenRequest answer")
	}
	return &tr, nil
}
