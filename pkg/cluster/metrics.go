package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/metricsserver"
	"github.com/skiff-sh/skiff/pkg/pki"
)

// Names of what skiff up installs for its metrics-server, as upstream's
// metrics-server manifest (components.yaml) names them.
const (
	metricsServerNamespace = "kube-system"
	metricsServerName      = "metrics-server"
	metricsServerUser      = "system:metrics-server"
	metricsAPIServiceName  = metricsserver.Version + "." + metricsserver.Group
)

// metricsServerSetup is what startMetricsServer needs of skiff up.
type metricsServerSetup struct {
	PKIDir        string
	CA            *pki.KeyPair
	FrontProxyCA  *pki.KeyPair
	Admin         *pki.KeyPair // installs the RBAC, Service and APIService
	Server        string       // the API server's URL
	HostIP        string       // where it serves (EndpointSlices refuse loopback)
	PortFile      string       // keeps its port across restarts ("": a new port at every start)
	Clock         clock.Clock
	Logger        *slog.Logger
	ResolutionFor time.Duration
}

// newMetricsServer prepares the metrics-server component: its
// certificates (a client certificate of the cluster CA, which kubelets
// accept, for user system:metrics-server; a serving certificate for
// metrics-server.kube-system.svc) and returns its run function, which
// installs upstream's manifest objects (ClusterRoles system:metrics-server
// and system:aggregated-metrics-reader, the binding, the selectorless
// Service with its EndpointSlice at HostIP, the APIService
// v1beta1.metrics.k8s.io) and then serves until ctx ends.
func newMetricsServer(s metricsServerSetup) (func(context.Context) error, error) {
	if s.HostIP == "" {
		return nil, fmt.Errorf("no non-loopback IPv4 address to serve the metrics API on (an EndpointSlice may not name a loopback address)")
	}
	now := s.Clock.Now()
	clientPair, err := pki.EnsureClient(s.PKIDir, "metrics-server-client", s.CA, metricsServerUser, nil, now)
	if err != nil {
		return nil, err
	}
	svcHost := metricsServerName + "." + metricsServerNamespace + ".svc"
	serving, err := pki.EnsureServing(s.PKIDir, "metrics-server", s.CA, []string{svcHost, s.HostIP}, now)
	if err != nil {
		return nil, err
	}
	ln, err := keptPortListener(s.PortFile, s.HostIP, s.Logger)
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	c, err := client.New(&client.Config{Host: s.Server, CAData: s.CA.CertPEM, CertData: clientPair.CertPEM, KeyData: clientPair.KeyPEM,
		UserAgent: "skiff-metrics-server"})
	if err != nil {
		ln.Close()
		return nil, err
	}
	kubeletCert := tls.Certificate{Certificate: [][]byte{clientPair.Cert.Raw}, PrivateKey: clientPair.Key, Leaf: clientPair.Cert}
	requestHeaderCA := x509.NewCertPool()
	requestHeaderCA.AddCert(s.FrontProxyCA.Cert)
	ms, err := metricsserver.New(metricsserver.Config{Client: c, Clock: s.Clock, Logger: s.Logger, Resolution: s.ResolutionFor,
		// The kubelets' serving certificates are self-signed, as upstream's
		// without TLS bootstrap: not verified (--kubelet-insecure-tls).
		KubeletTLS: &tls.Config{Certificates: []tls.Certificate{kubeletCert}, MinVersion: tls.VersionTLS12},
		Listener:   ln, ServingCert: tls.Certificate{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key, Leaf: serving.Cert},
		RequestHeaderCA: requestHeaderCA})
	if err != nil {
		ln.Close()
		return nil, err
	}
	admin, err := client.New(&client.Config{Host: s.Server, CAData: s.CA.CertPEM, CertData: s.Admin.CertPEM, KeyData: s.Admin.KeyPEM,
		UserAgent: "skiff-up"})
	if err != nil {
		ln.Close()
		return nil, err
	}
	return func(ctx context.Context) error {
		// Installed before serving; retried while the API server settles
		// (the bootstrap roles it reconciles at start).
		for {
			err := installMetricsServer(ctx, admin, s.CA.CertPEM, s.HostIP, port)
			if err == nil {
				break
			}
			s.Logger.Warn("installing the metrics API", "err", err)
			select {
			case <-ctx.Done():
				ln.Close()
				return nil
			case <-s.Clock.After(time.Second):
			}
		}
		return ms.Run(ctx)
	}, nil
}

// installMetricsServer creates or updates the objects of upstream's
// metrics-server manifest that skiff's needs.
func installMetricsServer(ctx context.Context, c *client.Client, caPEM []byte, ip string, port int) error {
	read := []string{"get", "list", "watch"}
	labels := map[string]string{"k8s-app": metricsServerName}
	if err := apply(ctx, client.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerUser, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: read},
		}}, func(cur, want *rbacv1.ClusterRole) { cur.Rules = want.Rules }); err != nil {
		return err
	}
	if err := apply(ctx, client.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:aggregated-metrics-reader", Labels: map[string]string{
			"k8s-app": metricsServerName, "rbac.authorization.k8s.io/aggregate-to-admin": "true",
			"rbac.authorization.k8s.io/aggregate-to-edit": "true", "rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{metricsserver.Group}, Resources: []string{"pods", "nodes"}, Verbs: read}},
	}, func(cur, want *rbacv1.ClusterRole) { cur.Rules, cur.Labels = want.Rules, want.Labels }); err != nil {
		return err
	}
	if err := apply(ctx, client.For[*rbacv1.ClusterRoleBinding, *rbacv1.ClusterRoleBindingList](c), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerUser, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsServerUser},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: metricsServerUser}},
	}, func(cur, want *rbacv1.ClusterRoleBinding) { cur.Subjects = want.Subjects }); err != nil {
		return err
	}
	svcs := client.For[*corev1.Service, *corev1.ServiceList](c).Namespace(metricsServerNamespace)
	if err := apply(ctx, svcs, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Labels: labels},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP,
			TargetPort: intstr.FromInt32(int32(port))}}},
	}, func(cur, want *corev1.Service) { cur.Spec.Ports = want.Spec.Ports; cur.Spec.Selector = nil }); err != nil {
		return err
	}
	ready := true
	portName, proto, p32 := "https", corev1.ProtocolTCP, int32(port)
	slices := client.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](c).Namespace(metricsServerNamespace)
	if err := apply(ctx, slices, &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Labels: map[string]string{
			discoveryv1.LabelServiceName: metricsServerName, discoveryv1.LabelManagedBy: "skiff-up"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Protocol: &proto, Port: &p32}},
	}, func(cur, want *discoveryv1.EndpointSlice) { cur.Endpoints, cur.Ports = want.Endpoints, want.Ports }); err != nil {
		return err
	}
	svcPort := int32(443)
	return apply(ctx, client.For[*apiregistrationv1.APIService, *apiregistrationv1.APIServiceList](c), &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: metricsAPIServiceName, Labels: labels},
		Spec: apiregistrationv1.APIServiceSpec{Group: metricsserver.Group, Version: metricsserver.Version,
			Service:  &apiregistrationv1.ServiceReference{Namespace: metricsServerNamespace, Name: metricsServerName, Port: &svcPort},
			CABundle: caPEM, GroupPriorityMinimum: 100, VersionPriority: 100},
	}, func(cur, want *apiregistrationv1.APIService) { cur.Spec = want.Spec })
}

// apply creates want, or updates the existing object with merge.
func apply[T client.Object, L client.ObjectList](ctx context.Context, r *client.Typed[T, L], want T, merge func(cur, want T)) error {
	for attempt := 0; ; attempt++ {
		cur, err := r.Get(ctx, want.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = r.Create(ctx, want, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) && attempt < 3 {
				continue
			}
			return err
		}
		if err != nil {
			return err
		}
		merge(cur, want)
		_, err = r.Update(ctx, cur, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) && attempt < 3 {
			continue
		}
		return err
	}
}

// MetricsServerPortPath is where skiff up keeps its metrics-server's
// port, so that a restart serves on the same one (its Service and
// EndpointSlice stay as they were).
func MetricsServerPortPath(dataDir string) string {
	return filepath.Join(dataDir, "metrics-server.port")
}

// keptPortListener listens on host at the port kept in path (a decimal
// number) when that port is free there, else (no file, an unreadable one,
// the port taken) on a port the kernel chooses, which it then keeps in
// path; a kept port it cannot use is logged with the new one. Without a
// path it only lets the kernel choose.
func keptPortListener(path, host string, logger *slog.Logger) (net.Listener, error) {
	if path == "" {
		return net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	kept := 0
	switch b, err := os.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		logger.Warn("reading the kept port", "file", path, "err", err)
	default:
		p, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || p < 1 || p > 65535 {
			logger.Warn("ignoring the kept port: not a port number", "file", path, "content", strings.TrimSpace(string(b)))
		} else {
			kept = p
		}
	}
	var keptErr error
	if kept != 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(kept)))
		if err == nil {
			return ln, nil
		}
		keptErr = err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if keptErr != nil {
		logger.Warn("the kept port is taken: serving on another one", "port", kept, "newPort", port, "err", keptErr)
	}
	tmp := path + ".tmp"
	err = os.WriteFile(tmp, []byte(strconv.Itoa(port)+"\n"), 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		// It serves all the same; the next start chooses again.
		logger.Warn("keeping the port", "file", path, "port", port, "err", err)
	}
	return ln, nil
}
