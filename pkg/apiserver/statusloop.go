package apiserver

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/apiregistration"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// statusInterval is how often the API server's own status keeping runs.
const statusInterval = 5 * time.Second

// statusLoop does, every statusInterval until ctx ends, what upstream's
// API server does in small controllers of its own: keep the flowcontrol
// bootstrap configuration and the FlowSchemas' Dangling conditions
// (bootstrap_flowcontrol.go), mark ValidatingAdmissionPolicies
// type-checked (policies_status.go), keep the local APIServices (a deleted
// one comes back, apiservices.go), and report the availability of
// APIServices served by other servers.
func (s *Server) statusLoop(ctx context.Context) {
	t := s.cfg.Clock.NewTicker(statusInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, job := range []struct {
			what string
			sync func(context.Context) error
		}{
			{"flowcontrol configuration", s.ensureFlowControl},
			{"ValidatingAdmissionPolicy status", s.syncPolicyStatus},
			{"local APIServices", func(ctx context.Context) error { return s.syncAPIServices(ctx, s.apiServices.woken.Load()) }},
			{"remote APIService status", s.syncRemoteAPIServices},
		} {
			if err := job.sync(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Debug("status keeping", "what", job.what, "err", err)
			}
		}
	}
}

var grEndpoints = schema.GroupResource{Resource: "endpoints"}

// syncRemoteAPIServices sets the Available condition of APIServices that
// name a service, from the service and its endpoints (see
// apiregistration.SetRemoteAvailable).
func (s *Server) syncRemoteAPIServices(ctx context.Context) error {
	st := s.stores[grAPIServices]
	var status *registry.Store
	for _, e := range s.endpoints {
		if e.qualified == grAPIServices && e.version == nil {
			status = e.status
		}
	}
	if st == nil || status == nil {
		return nil
	}
	objs, _, err := st.List(ctx, "", registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	now := metav1.NewTime(s.cfg.Clock.Now().Truncate(time.Second))
	for _, o := range objs {
		a := storage.Unwrap(o).(*apiregistrationv1.APIService)
		if a.Spec.Service == nil {
			continue
		}
		r, err := s.remoteCheck(ctx, a)
		if err != nil {
			return err
		}
		if !apiregistration.SetRemoteAvailable(a.DeepCopy(), r, now) {
			continue
		}
		_, _, err = status.Update(ctx, "", a.Name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
			cur := storage.Unwrap(old).(*apiregistrationv1.APIService).DeepCopy()
			if cur.Spec.Service != nil {
				apiregistration.SetRemoteAvailable(cur, r, now)
			}
			return cur, nil
		}}, nil, nil, registry.UpdateOptions{NoCreate: true})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// remoteCheck looks at the service an APIService names and its endpoints.
func (s *Server) remoteCheck(ctx context.Context, a *apiregistrationv1.APIService) (apiregistration.Remote, error) {
	var r apiregistration.Remote
	ref := a.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	svcStore, epStore := s.stores[grServices], s.stores[grEndpoints]
	if svcStore == nil || epStore == nil {
		return r, nil
	}
	obj, err := svcStore.Get(ctx, ref.Namespace, ref.Name, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.ServiceFound = true
	svc := storage.Unwrap(obj).(*corev1.Service)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		r.Port, r.EndpointsFound, r.Addresses = true, true, true
		return r, nil
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			r.Port, r.PortName = true, p.Name
		}
	}
	if !r.Port {
		return r, nil
	}
	obj, err = epStore.Get(ctx, ref.Namespace, ref.Name, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.EndpointsFound = true
	for _, sub := range storage.Unwrap(obj).(*corev1.Endpoints).Subsets {
		if len(sub.Addresses) == 0 {
			continue
		}
		for _, p := range sub.Ports {
			if p.Name == r.PortName {
				r.Addresses = true
			}
		}
	}
	return r, nil
}
