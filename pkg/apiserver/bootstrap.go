package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/core"
	"github.com/skiff-sh/skiff/pkg/registry/networking"
	"github.com/skiff-sh/skiff/pkg/registry/scheduling"
)

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func registryListAll() registry.ListOptions { return registry.ListOptions{} }

// SystemNamespaces exist in every cluster.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// bootstrap creates what upstream's API server creates at start-up: the
// system namespaces, the system priority classes, the bootstrap RBAC policy
// (bootstrap_rbac.go), the "kubernetes" service and its endpoints. It also rebuilds the service allocator.
func (s *Server) bootstrap(ctx context.Context) error {
	// Wait for the watch caches; a consistent list on the namespaces store
	// is served once its cache is filled.
	for _, st := range s.stores {
		if _, _, err := st.List(ctx, "", registry.ListOptions{}); err != nil {
			return fmt.Errorf("initial list of %s: %w", st.Resource, err)
		}
	}
	if err := s.Repair(ctx); err != nil {
		return err
	}
	for _, name := range SystemNamespaces {
		if err := s.ensure(ctx, grNamespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return err
		}
	}
	if st := s.stores[grPriorityClasses]; st != nil {
		for _, pc := range scheduling.SystemPriorityClasses() {
			if err := s.ensure(ctx, grPriorityClasses, pc); err != nil {
				return err
			}
		}
	}
	if err := s.ensureSystemConfigMaps(ctx); err != nil {
		return err
	}
	if err := s.ensureDefaultServiceCIDR(ctx); err != nil {
		return err
	}
	if err := s.ensureFlowControl(ctx); err != nil {
		return err
	}
	if err := s.ensureRBACPolicy(ctx); err != nil {
		return err
	}
	if err := s.syncAPIServices(ctx, false); err != nil {
		return err
	}
	if s.stores[grServices] != nil {
		if err := s.ensureKubernetesService(ctx); err != nil {
			return err
		}
	}
	return nil
}

var grPriorityClasses = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}

// ensure creates obj through the same path as a client create (defaulting,
// admission) unless it exists.
func (s *Server) ensure(ctx context.Context, gr schema.GroupResource, obj runtime.Object) error {
	st := s.stores[gr]
	if st == nil {
		return nil
	}
	ns, name := objectName(obj)
	if _, err := st.Get(ctx, ns, name, metav1.GetOptions{}); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	var e *endpoint
	for _, ep := range s.endpoints {
		if ep.qualified == gr && ep.version == nil {
			e = ep
		}
	}
	if d := e.def.Strategy.Default; d != nil {
		d(obj)
	}
	// Upstream creates these through its loopback client, whose User-Agent
	// makes the manager "kube-apiserver".
	obj = s.trackCreate(e, obj, "kube-apiserver")
	_, err := st.Create(ctx, ns, obj, nil, false)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating %s %s/%s: %w", gr, ns, name, err)
	}
	return nil
}

// ensureDefaultServiceCIDR creates the "kubernetes" ServiceCIDR from
// --service-cluster-ip-range and marks it Ready, as upstream's default
// ServiceCIDR controller does.
func (s *Server) ensureDefaultServiceCIDR(ctx context.Context) error {
	gr := schema.GroupResource{Group: "networking.k8s.io", Resource: "servicecidrs"}
	if s.stores[gr] == nil {
		return nil
	}
	cidr := &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: networking.DefaultServiceCIDRName},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{s.cfg.ServiceClusterIPRange}},
	}
	if err := s.ensure(ctx, gr, cidr); err != nil {
		return err
	}
	var status *registry.Store
	for _, e := range s.endpoints {
		if e.qualified == gr && e.version == nil {
			status = e.status
		}
	}
	_, _, err := status.Update(ctx, "", cidr.Name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		sc := old.(*networkingv1.ServiceCIDR).DeepCopy()
		for _, c := range sc.Status.Conditions {
			if c.Type == networkingv1.ServiceCIDRConditionReady && c.Status != metav1.ConditionUnknown {
				return sc, nil
			}
		}
		sc.Status.Conditions = append(sc.Status.Conditions, metav1.Condition{
			Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
			Message: "Kubernetes default Service CIDR is ready", LastTransitionTime: metav1.NewTime(s.cfg.Clock.Now().Truncate(time.Second)),
		})
		return sc, nil
	}}, nil, nil, registry.UpdateOptions{NoCreate: true})
	return err
}

// ensureKubernetesService publishes the API server as default/kubernetes.
func (s *Server) ensureKubernetesService(ctx context.Context) error {
	firstIP, err := core.FirstServiceIP(s.cfg.ServiceClusterIPRange)
	if err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes",
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: firstIP,
			Ports: []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443,
				TargetPort: intstr.FromInt32(int32(s.cfg.SecurePort))}},
			SessionAffinity: corev1.ServiceAffinityNone,
			Type:            corev1.ServiceTypeClusterIP,
		},
	}
	if err := s.ensure(ctx, grServices, svc); err != nil {
		return err
	}
	addr := s.cfg.EndpointAddress
	if addr == "" {
		addr = s.cfg.AdvertiseAddress
	}
	if ip := net.ParseIP(addr); ip == nil || ip.IsLoopback() || ip.IsUnspecified() {
		return nil // nothing pods could reach
	}
	port := int32(s.cfg.SecurePort)
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes",
			Labels: map[string]string{"endpointslice.kubernetes.io/skip-mirror": "true"}},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: addr}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}},
		}},
	}
	if err := s.ensure(ctx, schema.GroupResource{Resource: "endpoints"}, ep); err != nil {
		return err
	}
	ready := true
	name, proto := "https", corev1.ProtocolTCP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes",
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes", discoveryv1.LabelManagedBy: "skiff-apiserver"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
	}
	return s.ensure(ctx, schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, slice)
}

// getFresh reads an object from the watch cache, falling back to a
// consistent read when the cache has not seen it yet (a namespace created
// a moment ago).
func (s *Server) getFresh(ctx context.Context, st *registry.Store, ns, name string) (runtime.Object, error) {
	obj, err := st.Get(ctx, ns, name, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return st.Get(ctx, ns, name, metav1.GetOptions{})
	}
	return obj, err
}
