package apiregistration

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

func TestValidateAPIService(t *testing.T) {
	svc := func() *apiregistrationv1.ServiceReference {
		return &apiregistrationv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server", Port: new(int32(443))}
	}
	tests := []struct {
		name   string
		mutate func(*apiregistrationv1.APIService)
		want   []string
		msg    string
	}{
		{name: "valid local", mutate: func(*apiregistrationv1.APIService) {}},
		{name: "valid remote", mutate: func(a *apiregistrationv1.APIService) { a.Spec.Service = svc(); a.Spec.CABundle = []byte("pem") }},
		{name: "name not version.group", mutate: func(a *apiregistrationv1.APIService) { a.Name = "metrics.k8s.io.v1beta1" },
			want: []string{"metadata.name: Invalid value"},
			msg:  "metadata.name: Invalid value: \"metrics.k8s.io.v1beta1\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\""},
		{name: "empty group", mutate: func(a *apiregistrationv1.APIService) { a.Spec.Group = ""; a.Name = "v1beta1." },
			want: []string{"spec.group: Required value"}},
		{name: "group priority", mutate: func(a *apiregistrationv1.APIService) { a.Spec.GroupPriorityMinimum = 20001 },
			want: []string{"spec.groupPriorityMinimum: Invalid value"}, msg: "spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000"},
		{name: "version priority", mutate: func(a *apiregistrationv1.APIService) { a.Spec.VersionPriority = 0 },
			want: []string{"spec.versionPriority: Invalid value"}},
		{name: "local with CA", mutate: func(a *apiregistrationv1.APIService) { a.Spec.CABundle = []byte("pem") },
			want: []string{"spec.caBundle: Invalid value"}, msg: `spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle`},
		{name: "service without name", mutate: func(a *apiregistrationv1.APIService) { a.Spec.Service = svc(); a.Spec.Service.Name = "" },
			want: []string{"spec.service.name: Required value"}},
		{name: "insecure with CA", mutate: func(a *apiregistrationv1.APIService) {
			a.Spec.Service = svc()
			a.Spec.CABundle, a.Spec.InsecureSkipTLSVerify = []byte("pem"), true
		}, want: []string{"spec.insecureSkipTLSVerify: Invalid value"}},
		{name: "bad version", mutate: func(a *apiregistrationv1.APIService) { a.Spec.Version = "V1"; a.Name = "V1.metrics.k8s.io" },
			want: []string{"spec.version: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.metrics.k8s.io"},
				Spec: apiregistrationv1.APIServiceSpec{Group: "metrics.k8s.io", Version: "v1beta1", GroupPriorityMinimum: 100, VersionPriority: 100}}
			tt.mutate(a)
			errs := ValidateAPIService(a)
			registrytest.ExpectErrors(t, errs, tt.want...)
			if tt.msg != "" && (len(errs) == 0 || errs[0].Error() != tt.msg) {
				t.Errorf("got %v, want %q", errs, tt.msg)
			}
		})
	}
}

// Upstream's priorities for the local APIServices; group/versions outside
// the table get none.
func TestLocalAPIServices(t *testing.T) {
	tests := []struct {
		gv                schema.GroupVersion
		name              string
		group, versionPri int32
	}{
		{schema.GroupVersion{Version: "v1"}, "v1.", 18000, 1},
		{schema.GroupVersion{Group: "apps", Version: "v1"}, "v1.apps", 17800, 15},
		{schema.GroupVersion{Group: "autoscaling", Version: "v2"}, "v2.autoscaling", 17500, 30},
		{schema.GroupVersion{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}, "v1.flowcontrol.apiserver.k8s.io", 16100, 21},
		{schema.GroupVersion{Group: "admissionregistration.k8s.io", Version: "v1"}, "v1.admissionregistration.k8s.io", 16700, 15},
	}
	for _, tt := range tests {
		a := LocalAPIService(tt.gv)
		if a == nil || a.Name != tt.name || a.Spec.GroupPriorityMinimum != tt.group || a.Spec.VersionPriority != tt.versionPri ||
			a.Spec.Service != nil || a.Labels[AutoManagedLabel] != "onstart" {
			t.Errorf("%v: %+v", tt.gv, a)
			continue
		}
		DefaultAPIService(a)
		registrytest.ExpectErrors(t, ValidateAPIService(a))
	}
	if a := LocalAPIService(schema.GroupVersion{Group: "example.com", Version: "v1"}); a != nil {
		t.Errorf("unknown group got %v", a.Name)
	}
	cr := CustomResourceAPIService(schema.GroupVersion{Group: "stable.example.com", Version: "v1"})
	if cr.Spec.GroupPriorityMinimum != 1000 || cr.Spec.VersionPriority != 100 || cr.Labels[AutoManagedLabel] != "true" {
		t.Errorf("CRD APIService = %+v", cr)
	}
	registrytest.ExpectErrors(t, ValidateAPIService(cr))
}

func TestSetLocalAvailable(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := LocalAPIService(schema.GroupVersion{Version: "v1"})
	if !SetLocalAvailable(a, t0) || len(a.Status.Conditions) != 1 || a.Status.Conditions[0].Reason != "Local" {
		t.Fatalf("status = %+v", a.Status)
	}
	if SetLocalAvailable(a, metav1.NewTime(t0.Add(time.Hour))) {
		t.Errorf("unchanged status reported as changed")
	}
	a.Status.Conditions[0].Reason = "Other"
	if !SetLocalAvailable(a, metav1.NewTime(t0.Add(time.Hour))) || !a.Status.Conditions[0].LastTransitionTime.Equal(&t0) {
		t.Errorf("transition time not kept: %+v", a.Status.Conditions[0])
	}
}

func TestSetRemoteAvailable(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := &apiregistrationv1.APIService{Spec: apiregistrationv1.APIServiceSpec{Group: "metrics.k8s.io", Version: "v1beta1",
		Service: &apiregistrationv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server"}}}
	tests := []struct {
		r               Remote
		reason, message string
	}{
		{Remote{}, "ServiceNotFound", `service/metrics-server in "kube-system" is not present`},
		{Remote{ServiceFound: true}, "ServicePortError", `service/metrics-server in "kube-system" is not listening on port 443`},
		{Remote{ServiceFound: true, Port: true, PortName: "https"}, "EndpointsNotFound", `cannot find endpointslices for service/metrics-server in "kube-system"`},
		{Remote{ServiceFound: true, Port: true, PortName: "https", SlicesFound: true}, "MissingEndpoints",
			`endpointslices for service/metrics-server in "kube-system" have no addresses with port name "https"`},
		{Remote{ServiceFound: true, Port: true, PortName: "https", SlicesFound: true, Addresses: true,
			DiscoveryErr: errors.New("failing or missing response from https://10.0.0.1:443/apis/metrics.k8s.io/v1beta1: bad status from https://10.0.0.1:443/apis/metrics.k8s.io/v1beta1: 403")}, "FailedDiscoveryCheck",
			"failing or missing response from https://10.0.0.1:443/apis/metrics.k8s.io/v1beta1: bad status from https://10.0.0.1:443/apis/metrics.k8s.io/v1beta1: 403"},
		{Remote{ServiceFound: true, Port: true, PortName: "https", SlicesFound: true, Addresses: true}, "Passed", "all checks passed"},
	}
	for _, tt := range tests {
		if !SetRemoteAvailable(a, tt.r, t0) {
			t.Errorf("%+v: no change reported", tt.r)
		}
		c := a.Status.Conditions[0]
		want := apiregistrationv1.ConditionFalse
		if tt.reason == "Passed" {
			want = apiregistrationv1.ConditionTrue
		}
		if len(a.Status.Conditions) != 1 || c.Status != want || c.Reason != tt.reason || c.Message != tt.message {
			t.Errorf("%+v: condition %+v", tt.r, c)
		}
		if SetRemoteAvailable(a, tt.r, t0) {
			t.Errorf("%+v: unchanged condition reported as changed", tt.r)
		}
	}
}
