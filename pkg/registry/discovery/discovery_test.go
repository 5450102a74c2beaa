package discovery

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validSlice() *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-abc12", Namespace: "default", ResourceVersion: "1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"10.0.0.5"},
			Conditions: discoveryv1.EndpointConditions{Ready: new(true)},
			NodeName:   new("node-1"),
			Zone:       new("zone-a"),
			Hints:      &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "zone-a"}}},
		}},
		Ports: []discoveryv1.EndpointPort{{Port: new(int32(80))}, {Name: new("https"), Port: new(int32(443))}},
	}
	DefaultEndpointSlice(s)
	return s
}

func TestDefaultEndpointSlice(t *testing.T) {
	s := validSlice()
	if *s.Ports[0].Name != "" || *s.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("port 0 = %+v", s.Ports[0])
	}
	s.Ports[1].Protocol = new(corev1.ProtocolUDP)
	DefaultEndpointSlice(s)
	if *s.Ports[1].Protocol != corev1.ProtocolUDP || *s.Ports[1].Name != "https" {
		t.Errorf("user values overwritten: %+v", s.Ports[1])
	}
	if s.Endpoints[0].Conditions.Serving != nil {
		t.Errorf("conditions are not defaulted")
	}
}

func TestValidateEndpointSlice(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*discoveryv1.EndpointSlice)
		path   string
		typ    field.ErrorType
	}{
		{"valid", func(*discoveryv1.EndpointSlice) {}, "", ""},
		{"valid IPv6", func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeIPv6
			s.Endpoints[0].Addresses = []string{"2001:db8::5"}
		}, "", ""},
		{"valid FQDN", func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"db.example.com"}
		}, "", ""},
		{"no endpoints", func(s *discoveryv1.EndpointSlice) { s.Endpoints = nil }, "", ""},
		{"no addressType", func(s *discoveryv1.EndpointSlice) { s.AddressType = "" }, "addressType", field.ErrorTypeRequired},
		{"deprecated IP addressType", func(s *discoveryv1.EndpointSlice) { s.AddressType = "IP" }, "addressType", field.ErrorTypeNotSupported},
		{"IPv6 in IPv4 slice", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"2001:db8::5"} }, "endpoints[0].addresses[0]", field.ErrorTypeInvalid},
		{"not an IP", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"web"} }, "endpoints[0].addresses[0]", field.ErrorTypeInvalid},
		{"loopback", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"127.0.0.1"} }, "endpoints[0].addresses[0]", field.ErrorTypeInvalid},
		{"link-local", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"169.254.1.1"} }, "endpoints[0].addresses[0]", field.ErrorTypeInvalid},
		{"unspecified", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = []string{"0.0.0.0"} }, "endpoints[0].addresses[0]", field.ErrorTypeInvalid},
		{"bad FQDN", func(s *discoveryv1.EndpointSlice) {
			s.AddressType = discoveryv1.AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"localhost"}
		}, "endpoints[0].addresses[0]", field.ErrorTypeInvalid},
		{"no addresses", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = nil }, "endpoints[0].addresses", field.ErrorTypeRequired},
		{"too many endpoints", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints = make([]discoveryv1.Endpoint, 1001)
		}, "endpoints", field.ErrorTypeTooMany},
		{"bad hostname", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Hostname = new("web.1") }, "endpoints[0].hostname", field.ErrorTypeInvalid},
		{"bad nodeName", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].NodeName = new("Node_1") }, "endpoints[0].nodeName", field.ErrorTypeInvalid},
		{"duplicate zone hint", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hints.ForZones = append(s.Endpoints[0].Hints.ForZones, discoveryv1.ForZone{Name: "zone-a"})
		}, "endpoints[0].hints.forZones[1].name", field.ErrorTypeDuplicate},
		{"duplicate port name", func(s *discoveryv1.EndpointSlice) { s.Ports[1].Name = new("") }, "ports[1].name", field.ErrorTypeDuplicate},
		{"bad port name", func(s *discoveryv1.EndpointSlice) { s.Ports[1].Name = new("HTTPS") }, "ports[1].name", field.ErrorTypeInvalid},
		{"no protocol", func(s *discoveryv1.EndpointSlice) { s.Ports[1].Protocol = nil }, "ports[1].protocol", field.ErrorTypeRequired},
		{"bad protocol", func(s *discoveryv1.EndpointSlice) { s.Ports[1].Protocol = new(corev1.Protocol("ICMP")) }, "ports[1].protocol", field.ErrorTypeNotSupported},
		{"bad appProtocol", func(s *discoveryv1.EndpointSlice) { s.Ports[1].AppProtocol = new("h t t p") }, "ports[1].appProtocol", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSlice()
			tc.mutate(s)
			errs := ValidateEndpointSlice(s)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
		})
	}
}

func TestValidateEndpointSliceUpdate(t *testing.T) {
	old := validSlice()
	s := old.DeepCopy()
	s.Endpoints[0].Addresses = []string{"10.0.0.6"}
	s.Endpoints[0].Conditions.Ready = new(false)
	if errs := ValidateEndpointSliceUpdate(s, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	s.AddressType = discoveryv1.AddressTypeIPv6
	s.Endpoints = nil
	if errs := ValidateEndpointSliceUpdate(s, old); !registrytest.FindError(errs, "addressType", field.ErrorTypeInvalid) {
		t.Fatalf("addressType is immutable, got %v", errs)
	}
}

func TestEndpointSliceGenerationFollowsLabels(t *testing.T) {
	old := validSlice()
	old.Generation = 3
	same := old.DeepCopy()
	PrepareEndpointSliceUpdate(same, old)
	relabelled := old.DeepCopy()
	relabelled.Labels["team"] = "a"
	PrepareEndpointSliceUpdate(relabelled, old)
	if same.Generation != 3 || relabelled.Generation != 4 {
		t.Errorf("generation unchanged labels %d, new labels %d; want 3, 4", same.Generation, relabelled.Generation)
	}
}
