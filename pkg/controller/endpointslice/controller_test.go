package endpointslice

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type harness struct {
	ctx    context.Context
	ctrl   *Controller
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	svcs   *client.Typed[*corev1.Service, *corev1.ServiceList]
	slices *client.Typed[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList]
}

func newHarness(t *testing.T, maxPerSlice int) *harness {
	t.Helper()
	env := testenv.StartT(t)
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactory(c, 0)
	ctrl, err := New(Config{Client: c, Informers: f, MaxEndpointsPerSlice: maxPerSlice, Clock: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	return &harness{ctx: ctx, ctrl: ctrl,
		pods:   client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default"),
		svcs:   client.For[*corev1.Service, *corev1.ServiceList](c).Namespace("default"),
		slices: client.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](c).Namespace("default")}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) readyPod(t *testing.T, name, ip string, ready bool) *corev1.Pod {
	t.Helper()
	p, err := h.pods.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		p, err = h.pods.Create(h.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Phase, p.Status.PodIP, p.Status.PodIPs = corev1.PodRunning, ip, []corev1.PodIP{{IP: ip}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}
	p, err = h.pods.UpdateStatus(h.ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pod seen", func() bool {
		got, err := h.ctrl.podIn.Lister().Namespace("default").Get(name)
		return err == nil && got.ResourceVersion == p.ResourceVersion
	})
	return p
}

// sync runs Sync until the informer has caught up with the previous
// writes, and returns the Service's slices.
func (h *harness) sync(t *testing.T) []discoveryv1.EndpointSlice {
	t.Helper()
	waitFor(t, "a sync on a current cache", func() bool {
		err := h.ctrl.Sync(h.ctx, "default/web")
		if err != nil && !errors.Is(err, ErrStaleCache) {
			t.Fatal(err)
		}
		return err == nil
	})
	l, err := h.slices.List(h.ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestSlicesFollowPods(t *testing.T) {
	h := newHarness(t, 2)
	svc, err := h.svcs.Create(h.ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "service seen", func() bool { _, err := h.ctrl.svcIn.Lister().Namespace("default").Get("web"); return err == nil })

	// No pods: one placeholder slice.
	got := h.sync(t)
	if len(got) != 1 || len(got[0].Endpoints) != 0 || got[0].AddressType != discoveryv1.AddressTypeIPv4 {
		t.Fatalf("placeholder: %+v", got)
	}
	placeholder := got[0].Name
	if got[0].Annotations[corev1.EndpointsLastChangeTriggerTime] != svc.CreationTimestamp.UTC().Format(time.RFC3339Nano) {
		t.Errorf("trigger time %v", got[0].Annotations)
	}

	h.readyPod(t, "p1", "10.0.0.1", true)
	h.readyPod(t, "p2", "10.0.0.2", false)
	h.readyPod(t, "p3", "10.0.0.3", true)
	got = h.sync(t)
	if len(got) != 2 {
		t.Fatalf("slices %+v", got)
	}
	total, reused := 0, false
	for _, s := range got {
		total += len(s.Endpoints)
		reused = reused || s.Name == placeholder
		if s.Labels[discoveryv1.LabelManagedBy] != ControllerName || *s.Ports[0].Port != 8080 || s.OwnerReferences[0].UID != svc.UID {
			t.Errorf("slice %+v", s)
		}
	}
	if total != 3 || !reused {
		t.Errorf("%d endpoints (want 3); placeholder reused %v", total, reused)
	}

	// Nothing changed: nothing written.
	before := map[string]string{}
	for _, s := range got {
		before[s.Name] = s.ResourceVersion
	}
	for _, s := range h.sync(t) {
		if before[s.Name] != s.ResourceVersion {
			t.Errorf("slice %s rewritten without a change", s.Name)
		}
	}

	// p2 becomes ready: updated in place, in the slice that holds it.
	var holder string
	for _, s := range got {
		for _, e := range s.Endpoints {
			if e.TargetRef.Name == "p2" {
				holder = s.Name
			}
		}
	}
	h.readyPod(t, "p2", "10.0.0.2", true)
	for _, s := range h.sync(t) {
		for _, e := range s.Endpoints {
			if e.TargetRef.Name == "p2" && (s.Name != holder || !*e.Conditions.Ready) {
				t.Errorf("p2 in %s ready %v, want in %s and ready", s.Name, *e.Conditions.Ready, holder)
			}
		}
		if s.Name != holder && before[s.Name] != s.ResourceVersion {
			t.Errorf("slice %s rewritten", s.Name)
		}
	}
}

func TestRunWritesSlices(t *testing.T) {
	h := newHarness(t, 0)
	go h.ctrl.Run(h.ctx)
	if _, err := h.svcs.Create(h.ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.readyPod(t, "p1", "10.0.0.1", true)
	waitFor(t, "the pod's endpoint", func() bool {
		l, err := h.slices.List(h.ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
		return err == nil && len(l.Items) == 1 && len(l.Items[0].Endpoints) == 1 && l.Items[0].Endpoints[0].Addresses[0] == "10.0.0.1" &&
			*l.Items[0].Ports[0].Port == 80
	})
}
