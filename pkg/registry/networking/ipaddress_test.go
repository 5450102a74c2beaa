package networking

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

func TestValidateIPAddress(t *testing.T) {
	ref := func() *networkingv1.ParentReference {
		return &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}
	}
	tests := []struct {
		name string
		ip   string
		ref  *networkingv1.ParentReference
		want []string
	}{
		{name: "ipv4", ip: "10.96.0.10", ref: ref()},
		{name: "ipv6", ip: "2001:db8::1", ref: ref()},
		{name: "not canonical", ip: "2001:db8:0::1", ref: ref(), want: []string{"metadata.name: Invalid value"}},
		{name: "leading zeros", ip: "10.096.0.1", ref: ref(), want: []string{"metadata.name: Invalid value"}},
		{name: "not an address", ip: "web", ref: ref(), want: []string{"metadata.name: Invalid value"}},
		{name: "no parent", ip: "10.0.0.1", want: []string{"spec.parentRef: Required value"}},
		{name: "parent without resource and name", ip: "10.0.0.1", ref: &networkingv1.ParentReference{},
			want: []string{"spec.parentRef.name: Required value", "spec.parentRef.resource: Required value"}},
		{name: "parent name with slash", ip: "10.0.0.1", ref: &networkingv1.ParentReference{Resource: "services", Name: "a/b"},
			want: []string{"spec.parentRef.name: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ip := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: tt.ip}, Spec: networkingv1.IPAddressSpec{ParentRef: tt.ref}}
			registrytest.ExpectErrors(t, ValidateIPAddress(ip), tt.want...)
		})
	}
	old := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.0.0.1", ResourceVersion: "1"}, Spec: networkingv1.IPAddressSpec{ParentRef: ref()}}
	moved := old.DeepCopy()
	moved.Spec.ParentRef.Name = "other"
	registrytest.ExpectErrors(t, ValidateIPAddressUpdate(moved, old), "spec.parentRef: Invalid value")
}

func TestValidateServiceCIDR(t *testing.T) {
	tests := []struct {
		name  string
		cidrs []string
		want  []string
	}{
		{name: "single", cidrs: []string{"10.96.0.0/12"}},
		{name: "dual", cidrs: []string{"10.96.0.0/12", "fd00::/108"}},
		{name: "none", want: []string{"spec.cidrs: Required value"}},
		{name: "bits beyond mask", cidrs: []string{"10.96.0.1/12"}, want: []string{"spec.cidrs[0]: Invalid value"}},
		{name: "garbage", cidrs: []string{"ten"}, want: []string{"spec.cidrs[0]: Invalid value"}},
		{name: "same family twice", cidrs: []string{"10.96.0.0/12", "10.112.0.0/12"}, want: []string{"spec.cidrs: Invalid value"}},
		{name: "three", cidrs: []string{"10.96.0.0/12", "fd00::/108", "10.112.0.0/12"}, want: []string{"spec.cidrs: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: tt.cidrs}}
			registrytest.ExpectErrors(t, ValidateServiceCIDR(sc), tt.want...)
		})
	}
	old := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12"}}}
	dual := old.DeepCopy()
	dual.Spec.CIDRs = append(dual.Spec.CIDRs, "fd00::/108")
	registrytest.ExpectErrors(t, ValidateServiceCIDRUpdate(dual, old))
	changed := old.DeepCopy()
	changed.Spec.CIDRs = []string{"10.0.0.0/16"}
	registrytest.ExpectErrors(t, ValidateServiceCIDRUpdate(changed, old), "spec.cidrs[0]: Invalid value")
}
