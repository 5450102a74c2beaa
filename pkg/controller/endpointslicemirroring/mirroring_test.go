package endpointslicemirroring

import (
	"context"
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

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func endpoints(subsets ...corev1.EndpointSubset) *corev1.Endpoints {
	return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "ns", UID: "ep-uid",
		Labels:      map[string]string{"team": "a"},
		Annotations: map[string]string{"note": "x", corev1.EndpointsLastChangeTriggerTime: "t", corev1.LastAppliedConfigAnnotation: "{}"}},
		Subsets: subsets}
}

func addrs(ips ...string) []corev1.EndpointAddress {
	var out []corev1.EndpointAddress
	for _, ip := range ips {
		out = append(out, corev1.EndpointAddress{IP: ip})
	}
	return out
}

var port80 = []corev1.EndpointPort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}

func describe(ss []*discoveryv1.EndpointSlice) string {
	var out []string
	for _, s := range ss {
		var eps []string
		for _, e := range s.Endpoints {
			eps = append(eps, fmt.Sprintf("%s=%v", e.Addresses[0], *e.Conditions.Ready))
		}
		var ports []string
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprint(*p.Port))
		}
		n := s.Name
		if n == "" {
			n = "new"
		}
		out = append(out, fmt.Sprintf("%s:%s:%s[%s]", n, s.AddressType, strings.Join(ports, ","), strings.Join(eps, ",")))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func stored(s *discoveryv1.EndpointSlice, name string) *discoveryv1.EndpointSlice {
	s = s.DeepCopy()
	s.Name, s.ResourceVersion, s.UID = name, "1", "uid-"+"name"
	return s
}

func TestReconcileMirrors(t *testing.T) {
	ep := endpoints(corev1.EndpointSubset{Addresses: addrs("10.0.0.1", "fd00::1", "bogus"), NotReadyAddresses: addrs("10.0.0.2"), Ports: port80})
	plan := Reconcile(ep, nil, 1000)
	if got := describe(plan.Create); got != "new:IPv4:80[10.0.0.1=true,10.0.0.2=false] new:IPv6:80[fd00::1=true]" {
		t.Errorf("create %s", got)
	}
	if plan.InvalidAddresses != 1 || plan.SkippedAddresses != 1 {
		t.Errorf("invalid %d skipped %d", plan.InvalidAddresses, plan.SkippedAddresses)
	}
	s := plan.Create[0]
	if fmt.Sprint(s.Labels) != "map[endpointslice.kubernetes.io/managed-by:endpointslicemirroring-controller.k8s.io kubernetes.io/service-name:ext team:a]" ||
		fmt.Sprint(s.Annotations) != "map[note:x]" || s.GenerateName != "ext-" {
		t.Errorf("meta %+v", s.ObjectMeta)
	}
	if ref := metav1.GetControllerOf(s); ref == nil || ref.Kind != "Endpoints" || ref.UID != "ep-uid" {
		t.Errorf("owner %+v", ref)
	}
	if s.Endpoints[0].Conditions.Serving != nil || s.Endpoints[0].Conditions.Terminating != nil {
		t.Errorf("conditions %+v", s.Endpoints[0].Conditions)
	}

	// Mirrored already: nothing to do.
	v4, v6 := stored(plan.Create[0], "ext-a"), stored(plan.Create[1], "ext-b")
	if p := Reconcile(ep, []*discoveryv1.EndpointSlice{v4, v6}, 1000); !p.Empty() {
		t.Errorf("current slices: plan %s / %s / %s", describe(p.Create), describe(p.Update), describe(p.Delete))
	}

	// An address goes, another comes; the IPv6 one goes: update and delete.
	ep2 := endpoints(corev1.EndpointSubset{Addresses: addrs("10.0.0.1", "10.0.0.3"), Ports: port80})
	p := Reconcile(ep2, []*discoveryv1.EndpointSlice{v4, v6}, 1000)
	if describe(p.Update) != "ext-a:IPv4:80[10.0.0.1=true]" || describe(p.Create) != "new:IPv4:80[10.0.0.3=true]" || describe(p.Delete) != "ext-b:IPv6:80[fd00::1=true]" {
		t.Errorf("plan create %s update %s delete %s", describe(p.Create), describe(p.Update), describe(p.Delete))
	}

	// The ports change: the old slice is reused for the new port set.
	ep3 := endpoints(corev1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}})
	p = Reconcile(ep3, []*discoveryv1.EndpointSlice{v4}, 1000)
	if describe(p.Update) != "ext-a:IPv4:8080[10.0.0.1=true]" || len(p.Create)+len(p.Delete) != 0 {
		t.Errorf("plan create %s update %s delete %s", describe(p.Create), describe(p.Update), describe(p.Delete))
	}

	// Labels follow the Endpoints.
	ep4 := endpoints(corev1.EndpointSubset{Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: port80})
	ep4.Labels["team"] = "b"
	cur := Reconcile(ep4, nil, 1000).Create[0]
	cur.Labels["team"] = "a"
	p = Reconcile(ep4, []*discoveryv1.EndpointSlice{stored(cur, "ext-c")}, 1000)
	if len(p.Update) != 1 || p.Update[0].Labels["team"] != "b" {
		t.Errorf("label change: %+v", p)
	}

	// No subsets left: the slices go, no placeholder.
	p = Reconcile(endpoints(), []*discoveryv1.EndpointSlice{v4, v6}, 1000)
	if len(p.Delete) != 2 || len(p.Create)+len(p.Update) != 0 {
		t.Errorf("empty endpoints: %+v", p)
	}
}

func TestReconcileLimitPerSubset(t *testing.T) {
	ep := endpoints(corev1.EndpointSubset{Addresses: addrs("10.0.0.1", "10.0.0.2"), NotReadyAddresses: addrs("10.0.0.3"), Ports: port80})
	plan := Reconcile(ep, nil, 2)
	if describe(plan.Create) != "new:IPv4:80[10.0.0.1=true,10.0.0.2=true]" || plan.SkippedAddresses != 1 || plan.InvalidAddresses != 0 {
		t.Errorf("create %s skipped %d", describe(plan.Create), plan.SkippedAddresses)
	}
}

func TestMirroringAgainstAPI(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactory(c, 0)
	events := record.NewFakeRecorder(10)
	ctrl, err := New(Config{Client: c, Informers: f, Recorder: events})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	svcs := client.For[*corev1.Service, *corev1.ServiceList](c).Namespace("default")
	eps := client.For[*corev1.Endpoints, *corev1.EndpointsList](c).Namespace("default")
	sliceAPI := client.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](c).Namespace("default")
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	sync := func(name string) []discoveryv1.EndpointSlice {
		t.Helper()
		waitFor("a sync on a current cache", func() bool {
			err := ctrl.Sync(ctx, "default/"+name)
			if err != nil && !errors.Is(err, ErrStaleCache) {
				t.Fatal(err)
			}
			return err == nil
		})
		l, err := sliceAPI.List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	seenEP := func(ep *corev1.Endpoints) {
		waitFor("endpoints seen", func() bool {
			got, err := ctrl.epIn.Lister().Namespace("default").Get(ep.Name)
			return err == nil && got.ResourceVersion == ep.ResourceVersion
		})
	}

	svc, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := eps.Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Subsets: []corev1.EndpointSubset{{Addresses: addrs("192.168.1.1", "192.168.1.2"), Ports: port80}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seenEP(ep)
	waitFor("service seen", func() bool { _, err := ctrl.svcIn.Lister().Namespace("default").Get("ext"); return err == nil })
	got := sync("ext")
	if len(got) != 1 || len(got[0].Endpoints) != 2 || got[0].Labels[discoveryv1.LabelManagedBy] != ControllerName || got[0].OwnerReferences[0].UID != ep.UID {
		t.Fatalf("mirrored %+v", got)
	}
	rv := got[0].ResourceVersion
	if again := sync("ext"); again[0].ResourceVersion != rv {
		t.Error("an unchanged sync rewrote the slice")
	}

	// skip-mirror: the mirrored slice goes.
	ep.Labels = map[string]string{discoveryv1.LabelSkipMirror: "true"}
	if ep, err = eps.Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	seenEP(ep)
	if got := sync("ext"); len(got) != 0 {
		t.Fatalf("slices of a skip-mirror Endpoints: %+v", got)
	}
	delete(ep.Labels, discoveryv1.LabelSkipMirror)
	if ep, err = eps.Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	seenEP(ep)
	if got := sync("ext"); len(got) != 1 {
		t.Fatalf("mirrored again: %+v", got)
	}

	// The Service gets a selector: the Endpoints are the endpoints
	// controller's now, the mirror goes.
	svc.Spec.Selector = map[string]string{"app": "x"}
	if svc, err = svcs.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("selector seen", func() bool {
		s, err := ctrl.svcIn.Lister().Namespace("default").Get("ext")
		return err == nil && s.ResourceVersion == svc.ResourceVersion
	})
	if got := sync("ext"); len(got) != 0 {
		t.Fatalf("slices mirrored for a Service with selector: %+v", got)
	}

	// Endpoints that do not exist: nothing to mirror, no error.
	if _, err := eps.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if got := sync("missing"); len(got) != 0 {
		t.Fatalf("slices for missing Endpoints: %+v", got)
	}
}
