package endpointslice

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func svcObj() *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "svc-uid", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "10.96.0.10", IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}}}
}

func podObj(name, ip string, ready bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
}

func pods(n int) []*corev1.Pod {
	var out []*corev1.Pod
	for i := 1; i <= n; i++ {
		out = append(out, podObj(fmt.Sprintf("p%d", i), fmt.Sprintf("10.0.0.%d", i), true))
	}
	return out
}

func noNodes(string) (*corev1.Node, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "")
}

// existingSlice is a stored slice of svcObj holding the endpoints of the
// given pods.
func existingSlice(name string, ps ...*corev1.Pod) *discoveryv1.EndpointSlice {
	s := newSlice(svcObj(), endpointPorts(svcObj(), podObj("x", "1.1.1.1", true)), discoveryv1.AddressTypeIPv4)
	s.Name, s.GenerateName, s.ResourceVersion, s.UID = name, "web-", "1", types.UID("uid-"+name)
	for _, p := range ps {
		s.Endpoints = append(s.Endpoints, *podToEndpoint(p, nil, svcObj(), discoveryv1.AddressTypeIPv4))
	}
	return s
}

func names(ss []*discoveryv1.EndpointSlice) string {
	var out []string
	for _, s := range ss {
		var eps []string
		for _, e := range s.Endpoints {
			eps = append(eps, e.TargetRef.Name)
		}
		n := s.Name
		if n == "" {
			n = "new"
		}
		out = append(out, n+"["+strings.Join(eps, ",")+"]")
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func TestReconcileChurn(t *testing.T) {
	all := pods(6)
	for _, tc := range []struct {
		name                   string
		pods                   []*corev1.Pod
		existing               []*discoveryv1.EndpointSlice
		create, update, delete string
	}{
		{name: "new service fills slices of 2", pods: all[:5],
			create: "new[p1,p2] new[p3,p4] new[p5]"},
		{name: "current slices: nothing to write", pods: all[:3],
			existing: []*discoveryv1.EndpointSlice{existingSlice("a", all[0], all[1]), existingSlice("b", all[2])}},
		{name: "a removal makes room the new endpoint fills", pods: []*corev1.Pod{all[0], all[2], all[3]},
			existing: []*discoveryv1.EndpointSlice{existingSlice("a", all[0], all[1]), existingSlice("b", all[2])},
			update:   "a[p1,p4]"},
		{name: "new endpoint goes to the unchanged slice it fits in", pods: all[:4],
			existing: []*discoveryv1.EndpointSlice{existingSlice("a", all[0], all[1]), existingSlice("b", all[2])},
			update:   "b[p3,p4]"},
		{name: "new endpoints that fit nowhere get a new slice", pods: all[:6],
			existing: []*discoveryv1.EndpointSlice{existingSlice("a", all[0], all[1]), existingSlice("b", all[2])},
			update:   "b[p3,p6]", create: "new[p4,p5]"},
		{name: "an emptied slice is reused instead of deleted and created", pods: []*corev1.Pod{all[2]},
			existing: []*discoveryv1.EndpointSlice{existingSlice("a", all[0])},
			update:   "a[p3]"},
		{name: "an emptied slice goes", pods: []*corev1.Pod{all[0]},
			existing: []*discoveryv1.EndpointSlice{existingSlice("a", all[0]), existingSlice("b", all[1])},
			delete:   "b[p2]"},
		{name: "a changed endpoint is updated in place", pods: []*corev1.Pod{all[0], podObj("p2", "10.0.0.2", false)},
			existing: []*discoveryv1.EndpointSlice{existingSlice("a", all[0], all[1])},
			update:   "a[p1,p2]"},
		{name: "no endpoints: a placeholder", create: "new[]"},
		{name: "the last endpoint goes: the slice becomes the placeholder", existing: []*discoveryv1.EndpointSlice{existingSlice("a", all[0])},
			update: "a[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := Reconcile(svcObj(), tc.pods, tc.existing, noNodes, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(plan.Create); got != tc.create {
				t.Errorf("create %q, want %q", got, tc.create)
			}
			if got := names(plan.Update); got != tc.update {
				t.Errorf("update %q, want %q", got, tc.update)
			}
			if got := names(plan.Delete); got != tc.delete {
				t.Errorf("delete %q, want %q", got, tc.delete)
			}
		})
	}
}

func TestReconcilePlaceholderKept(t *testing.T) {
	ph := newSlice(svcObj(), nil, discoveryv1.AddressTypeIPv4)
	ph.Name, ph.ResourceVersion = "web-abcde", "3"
	plan, err := Reconcile(svcObj(), nil, []*discoveryv1.EndpointSlice{ph}, noNodes, 100)
	if err != nil || !plan.Empty() {
		t.Fatalf("plan %+v, %v", plan, err)
	}
}

func TestNewSliceMetadata(t *testing.T) {
	svc := svcObj()
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	plan, _ := Reconcile(svc, pods(1), nil, noNodes, 100)
	if len(plan.Create) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	s := plan.Create[0]
	want := map[string]string{"team": "a", discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io", corev1.IsHeadlessService: ""}
	if !mapsEqual(s.Labels, want) {
		t.Errorf("labels %v", s.Labels)
	}
	if s.GenerateName != "web-" || s.Namespace != "ns" || s.AddressType != discoveryv1.AddressTypeIPv4 {
		t.Errorf("meta %+v", s.ObjectMeta)
	}
	ref := metav1.GetControllerOf(s)
	if ref == nil || ref.Kind != "Service" || ref.APIVersion != "v1" || ref.UID != "svc-uid" || !*ref.BlockOwnerDeletion {
		t.Errorf("owner %+v", ref)
	}
	if len(s.Ports) != 1 || *s.Ports[0].Name != "http" || *s.Ports[0].Port != 8080 || *s.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("ports %+v", s.Ports)
	}
	// Service labels change: the slice is updated.
	s.Name, s.ResourceVersion = "web-x", "1"
	svc.Labels = map[string]string{"team": "b"}
	plan, _ = Reconcile(svc, pods(1), []*discoveryv1.EndpointSlice{s}, noNodes, 100)
	if len(plan.Update) != 1 || plan.Update[0].Labels["team"] != "b" {
		t.Errorf("after a label change: %+v", plan)
	}
}

func TestEndpointConditionsAndTopology(t *testing.T) {
	svc := svcObj()
	svc.Spec.TrafficDistribution = ptr.To(corev1.ServiceTrafficDistributionPreferClose)
	now := metav1.NewTime(time.Unix(1, 0))
	ready, unready, leaving := podObj("ready", "10.0.0.1", true), podObj("unready", "10.0.0.2", false), podObj("leaving", "10.0.0.3", true)
	leaving.DeletionTimestamp = &now
	ready.Spec.NodeName, ready.Spec.Hostname, ready.Spec.Subdomain = "n1", "h", "web"
	lost := podObj("lost", "10.0.0.4", true)
	lost.Spec.NodeName = "gone"
	v6 := podObj("v6", "fd00::1", true)
	done := podObj("done", "10.0.0.5", true)
	done.Status.Phase = corev1.PodFailed
	nodes := func(n string) (*corev1.Node, error) {
		if n == "n1" {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{corev1.LabelTopologyZone: "z1"}}}, nil
		}
		return noNodes(n)
	}
	plan, err := Reconcile(svc, []*corev1.Pod{ready, unready, leaving, lost, v6, done}, nil, nodes, 100)
	if !errors.Is(err, ErrNodeNotFound) {
		t.Errorf("error %v, want node not found", err)
	}
	if len(plan.Create) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	got := map[string]discoveryv1.Endpoint{}
	for _, e := range plan.Create[0].Endpoints {
		got[e.TargetRef.Name] = e
	}
	if len(got) != 3 {
		t.Fatalf("endpoints %v (want ready, unready, leaving: not the IPv6, failed or node-less ones)", got)
	}
	cond := func(e discoveryv1.Endpoint) string {
		return fmt.Sprint(*e.Conditions.Ready, *e.Conditions.Serving, *e.Conditions.Terminating)
	}
	if cond(got["ready"]) != "true true false" || cond(got["unready"]) != "false false false" || cond(got["leaving"]) != "false true true" {
		t.Errorf("conditions ready %s, unready %s, leaving %s", cond(got["ready"]), cond(got["unready"]), cond(got["leaving"]))
	}
	r := got["ready"]
	if *r.NodeName != "n1" || *r.Zone != "z1" || *r.Hostname != "h" || r.Hints == nil || r.Hints.ForZones[0].Name != "z1" ||
		r.TargetRef.UID != "uid-ready" || r.Addresses[0] != "10.0.0.1" {
		t.Errorf("endpoint %+v", r)
	}
	if got["unready"].Zone != nil || got["unready"].NodeName != nil || got["unready"].Hints != nil {
		t.Errorf("node-less endpoint %+v", got["unready"])
	}

	// publishNotReadyAddresses: everything ready, the pod of the missing
	// node included.
	svc.Spec.PublishNotReadyAddresses = true
	plan, err = Reconcile(svc, []*corev1.Pod{unready, lost}, nil, nodes, 100)
	if err != nil || len(plan.Create) != 1 || len(plan.Create[0].Endpoints) != 2 || !*plan.Create[0].Endpoints[0].Conditions.Ready || !*plan.Create[0].Endpoints[1].Conditions.Ready {
		t.Errorf("publishNotReadyAddresses: %+v %v", plan, err)
	}
}

func TestReconcileAddressFamilies(t *testing.T) {
	svc := svcObj()
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	dual := podObj("p", "10.0.0.1", true)
	dual.Status.PodIPs = append(dual.Status.PodIPs, corev1.PodIP{IP: "fd00::1"})
	plan, _ := Reconcile(svc, []*corev1.Pod{dual}, nil, noNodes, 100)
	if len(plan.Create) != 2 || plan.Create[0].AddressType != discoveryv1.AddressTypeIPv4 || plan.Create[1].AddressType != discoveryv1.AddressTypeIPv6 ||
		plan.Create[1].Endpoints[0].Addresses[0] != "fd00::1" {
		t.Fatalf("dual-stack plan %+v", plan.Create)
	}
	// Back to IPv4 only: the IPv6 slice goes.
	v6 := plan.Create[1]
	v6.Name = "web-v6"
	v4 := existingSlice("web-v4", dual)
	svc.Spec.IPFamilies = svc.Spec.IPFamilies[:1]
	plan, _ = Reconcile(svc, []*corev1.Pod{dual}, []*discoveryv1.EndpointSlice{v4, v6}, noNodes, 100)
	if len(plan.Create)+len(plan.Update) != 0 || len(plan.Delete) != 1 || plan.Delete[0].Name != "web-v6" {
		t.Fatalf("plan %+v", plan)
	}
}

func TestReconcileDeletesSlicesOfAnotherOwner(t *testing.T) {
	old := existingSlice("old", podObj("p1", "10.0.0.1", true))
	old.OwnerReferences[0].UID = "previous-service"
	plan, _ := Reconcile(svcObj(), pods(1), []*discoveryv1.EndpointSlice{old}, noNodes, 100)
	// A creation may not take over a slice of another owner.
	if names(plan.Create) != "new[p1]" || names(plan.Delete) != "old[p1]" || len(plan.Update) != 0 {
		t.Fatalf("plan create %s update %s delete %s", names(plan.Create), names(plan.Update), names(plan.Delete))
	}
}
