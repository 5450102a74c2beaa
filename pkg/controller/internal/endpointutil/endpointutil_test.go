package endpointutil

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func slice(uid string, gen int64) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid), Generation: gen,
		Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}}
}

func TestSliceTracker(t *testing.T) {
	tr := NewSliceTracker()
	if tr.StaleSlices("ns", "web", nil) {
		t.Fatal("an unknown service is stale")
	}
	tr.Update(slice("a", 2))
	for _, tc := range []struct {
		name   string
		listed []*discoveryv1.EndpointSlice
		stale  bool
	}{
		{"not seen yet", nil, true},
		{"older generation", []*discoveryv1.EndpointSlice{slice("a", 1)}, true},
		{"caught up", []*discoveryv1.EndpointSlice{slice("a", 2)}, false},
		{"newer", []*discoveryv1.EndpointSlice{slice("a", 3), slice("b", 1)}, false},
	} {
		if got := tr.StaleSlices("ns", "web", tc.listed); got != tc.stale {
			t.Errorf("%s: stale %v", tc.name, got)
		}
	}
	if tr.ShouldSync(slice("a", 2)) || !tr.ShouldSync(slice("a", 3)) || !tr.ShouldSync(slice("b", 1)) {
		t.Error("ShouldSync")
	}
	tr.ExpectDeletion(slice("a", 2))
	if !tr.StaleSlices("ns", "web", []*discoveryv1.EndpointSlice{slice("a", 2)}) || tr.StaleSlices("ns", "web", nil) {
		t.Error("a slice deleted by us and still listed is stale; gone is current")
	}
	if tr.HandleDeletion(slice("a", 2)) {
		t.Error("our own deletion reported as unexpected")
	}
	if !tr.HandleDeletion(slice("c", 1)) {
		t.Error("someone else's deletion not reported")
	}
}

func addr(ip, uid string) corev1.EndpointAddress {
	return corev1.EndpointAddress{IP: ip, TargetRef: &corev1.ObjectReference{UID: types.UID(uid)}}
}

func TestRepackSubsets(t *testing.T) {
	p80 := corev1.EndpointPort{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP}
	p90 := corev1.EndpointPort{Name: "b", Port: 90, Protocol: corev1.ProtocolTCP}
	got := RepackSubsets([]corev1.EndpointSubset{
		{Addresses: []corev1.EndpointAddress{addr("10.0.0.2", "2")}, Ports: []corev1.EndpointPort{p90}},
		{Addresses: []corev1.EndpointAddress{addr("10.0.0.2", "2")}, Ports: []corev1.EndpointPort{p80}},
		{NotReadyAddresses: []corev1.EndpointAddress{addr("10.0.0.1", "1")}, Ports: []corev1.EndpointPort{p80}},
		{NotReadyAddresses: []corev1.EndpointAddress{addr("10.0.0.1", "1")}, Ports: []corev1.EndpointPort{p90}},
		// Readiness is per port: ready on a, not ready on b, so the
		// address sets (and subsets) of a and b part.
		{Addresses: []corev1.EndpointAddress{addr("10.0.0.3", "3")}, Ports: []corev1.EndpointPort{p80}},
		{NotReadyAddresses: []corev1.EndpointAddress{addr("10.0.0.3", "3")}, Ports: []corev1.EndpointPort{p90}},
		// Ready and not ready for the same port: ready.
		{NotReadyAddresses: []corev1.EndpointAddress{addr("10.0.0.3", "3")}, Ports: []corev1.EndpointPort{p80}},
	})
	want := "[{[10.0.0.2 10.0.0.3] [10.0.0.1] [a]} {[10.0.0.2] [10.0.0.1 10.0.0.3] [b]}]"
	var s []string
	for _, ss := range got {
		var r, n, p []string
		for _, a := range ss.Addresses {
			r = append(r, a.IP)
		}
		for _, a := range ss.NotReadyAddresses {
			n = append(n, a.IP)
		}
		for _, x := range ss.Ports {
			p = append(p, x.Name)
		}
		s = append(s, fmt.Sprint("{", r, " ", n, " ", p, "}"))
	}
	if fmt.Sprint(s) != want {
		t.Errorf("repacked %v, want %s", s, want)
	}
}
