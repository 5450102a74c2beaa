package endpoints

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type harness struct {
	ctx  context.Context
	c    *client.Client
	f    *informers.SharedInformerFactory
	ctrl *Controller
	pods *client.Typed[*corev1.Pod, *corev1.PodList]
	svcs *client.Typed[*corev1.Service, *corev1.ServiceList]
	eps  *client.Typed[*corev1.Endpoints, *corev1.EndpointsList]
}

func newHarness(t *testing.T) *harness {
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
	ctrl, err := New(Config{Client: c, Informers: f, Clock: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	return &harness{ctx: ctx, c: c, f: f, ctrl: ctrl,
		pods: client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default"),
		svcs: client.For[*corev1.Service, *corev1.ServiceList](c).Namespace("default"),
		eps:  client.For[*corev1.Endpoints, *corev1.EndpointsList](c).Namespace("default")}
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

// seen waits until the controller's informers hold obj's resourceVersion.
func (h *harness) seenPod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	waitFor(t, "informer sees pod "+p.Name, func() bool {
		got, err := h.ctrl.podIn.Lister().Namespace(p.Namespace).Get(p.Name)
		return err == nil && got.ResourceVersion == p.ResourceVersion
	})
}

func (h *harness) seenService(t *testing.T, s *corev1.Service) {
	t.Helper()
	waitFor(t, "informer sees service "+s.Name, func() bool {
		got, err := h.ctrl.svcIn.Lister().Namespace(s.Namespace).Get(s.Name)
		return err == nil && got.ResourceVersion == s.ResourceVersion
	})
}

func (h *harness) seenEndpoints(t *testing.T, name string) {
	t.Helper()
	waitFor(t, "informer sees endpoints "+name, func() bool {
		live, err := h.eps.Get(h.ctx, name, metav1.GetOptions{})
		got, lerr := h.ctrl.epIn.Lister().Namespace("default").Get(name)
		if apierrors.IsNotFound(err) {
			return apierrors.IsNotFound(lerr)
		}
		return err == nil && lerr == nil && got.ResourceVersion == live.ResourceVersion
	})
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pod creates a pod labelled app=web with a container port named http
// (8080) and, when ip is set, gives it that IP (and readiness) through
// the status API.
func (h *harness) pod(t *testing.T, name, ip string, ready bool, tweak func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}}}
	if tweak != nil {
		tweak(p)
	}
	p, err := h.pods.Create(h.ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip != "" {
		p = h.setStatus(t, p, ip, ready, t0)
	}
	h.seenPod(t, p)
	return p
}

func (h *harness) setStatus(t *testing.T, p *corev1.Pod, ip string, ready bool, ltt time.Time) *corev1.Pod {
	t.Helper()
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = ip
	p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(ltt)}}
	p, err := h.pods.UpdateStatus(h.ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (h *harness) service(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	svc, err := h.svcs.Create(h.ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.seenService(t, svc)
	return svc
}

func webService(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
			{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090), Protocol: corev1.ProtocolTCP},
		}}}
}

func (h *harness) sync(t *testing.T, name string) *corev1.Endpoints {
	t.Helper()
	if err := h.ctrl.Sync(h.ctx, "default/"+name); err != nil {
		t.Fatal(err)
	}
	ep, err := h.eps.Get(h.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	h.seenEndpoints(t, name)
	return ep
}

func ips(addrs []corev1.EndpointAddress) []string {
	var out []string
	for _, a := range addrs {
		out = append(out, a.IP)
	}
	return out
}

func TestEndpointsFromPods(t *testing.T) {
	h := newHarness(t)
	svc := h.service(t, webService("web"))
	h.pod(t, "ready", "10.0.0.1", true, nil)
	h.pod(t, "unready", "10.0.0.2", false, nil)
	h.pod(t, "no-ip", "", false, nil)
	h.pod(t, "named", "10.0.0.3", true, func(p *corev1.Pod) {
		p.Spec.Hostname, p.Spec.Subdomain, p.Spec.NodeName = "h3", "web", "node-a"
	})
	// A pod without the named port: only in the numeric port's subset.
	h.pod(t, "noport", "10.0.0.4", true, func(p *corev1.Pod) { p.Spec.Containers[0].Ports = nil })
	done := h.pod(t, "done", "", false, nil)
	done.Status.Phase, done.Status.PodIP, done.Status.PodIPs = corev1.PodSucceeded, "10.0.0.5", []corev1.PodIP{{IP: "10.0.0.5"}}
	done, err := h.pods.UpdateStatus(h.ctx, done, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.seenPod(t, done)
	leaving := h.pod(t, "leaving", "10.0.0.6", true, func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} })
	if err := h.pods.Delete(h.ctx, leaving.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "terminating pod seen", func() bool {
		p, err := h.ctrl.podIn.Lister().Namespace("default").Get("leaving")
		return err == nil && p.DeletionTimestamp != nil
	})
	t.Cleanup(func() {
		p, err := h.pods.Get(context.Background(), "leaving", metav1.GetOptions{})
		if err == nil {
			p.Finalizers = nil
			_, _ = h.pods.Update(context.Background(), p, metav1.UpdateOptions{})
		}
	})

	ep := h.sync(t, "web")
	if ep == nil {
		t.Fatal("no Endpoints written")
	}
	// Upstream's repacking: one subset per distinct address set, so the
	// named port (which "noport" lacks) and the numeric one part.
	if len(ep.Subsets) != 2 {
		t.Fatalf("subsets %+v", ep.Subsets)
	}
	var both, metricsOnly *corev1.EndpointSubset
	for i := range ep.Subsets {
		switch ep.Subsets[i].Ports[0].Name {
		case "http":
			both = &ep.Subsets[i]
		case "metrics":
			metricsOnly = &ep.Subsets[i]
		}
	}
	if both == nil || metricsOnly == nil {
		t.Fatalf("subsets %+v", ep.Subsets)
	}
	if got := fmt.Sprint(ips(both.Addresses), ips(both.NotReadyAddresses), both.Ports); got != "[10.0.0.1 10.0.0.3] [10.0.0.2] [{http 8080 TCP <nil>}]" {
		t.Errorf("named port's subset %s", got)
	}
	if got := fmt.Sprint(ips(metricsOnly.Addresses), ips(metricsOnly.NotReadyAddresses), metricsOnly.Ports); got != "[10.0.0.1 10.0.0.3 10.0.0.4] [10.0.0.2] [{metrics 9090 TCP <nil>}]" {
		t.Errorf("numeric port's subset: %s", got)
	}
	named := both.Addresses[1]
	if named.Hostname != "h3" || named.NodeName == nil || *named.NodeName != "node-a" || named.TargetRef == nil ||
		named.TargetRef.Kind != "Pod" || named.TargetRef.Name != "named" || named.TargetRef.UID == "" {
		t.Errorf("address %+v", named)
	}
	if both.Addresses[0].Hostname != "" || both.Addresses[0].NodeName != nil {
		t.Errorf("address %+v", both.Addresses[0])
	}
	if ep.Labels["team"] != "a" || len(ep.Labels) != 1 {
		t.Errorf("labels %v", ep.Labels)
	}
	if got, want := ep.Annotations[corev1.EndpointsLastChangeTriggerTime], svc.CreationTimestamp.UTC().Format(time.RFC3339Nano); got != want {
		t.Errorf("trigger time %q, want the service's creation %q", got, want)
	}

	// Nothing changed: no write.
	if again := h.sync(t, "web"); again.ResourceVersion != ep.ResourceVersion {
		t.Errorf("unchanged sync wrote: %s -> %s", ep.ResourceVersion, again.ResourceVersion)
	}

	// The unready pod becomes ready: it moves, and the trigger time is its
	// Ready transition.
	unready, _ := h.pods.Get(h.ctx, "unready", metav1.GetOptions{})
	ltt := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	unready = h.setStatus(t, unready, "10.0.0.2", true, ltt)
	h.seenPod(t, unready)
	ep = h.sync(t, "web")
	for _, s := range ep.Subsets {
		if s.Ports[0].Name == "http" && fmt.Sprint(ips(s.Addresses), len(s.NotReadyAddresses)) != "[10.0.0.1 10.0.0.2 10.0.0.3] 0" {
			t.Errorf("after readiness: %+v", s)
		}
	}
	if got := ep.Annotations[corev1.EndpointsLastChangeTriggerTime]; got != ltt.Format(time.RFC3339Nano) {
		t.Errorf("trigger time %q, want %q", got, ltt.Format(time.RFC3339Nano))
	}
}

func TestPublishNotReadyAddresses(t *testing.T) {
	h := newHarness(t)
	svc := webService("web")
	svc.Spec.PublishNotReadyAddresses = true
	h.service(t, svc)
	h.pod(t, "unready", "10.0.0.2", false, nil)
	ep := h.sync(t, "web")
	if len(ep.Subsets) != 1 || fmt.Sprint(ips(ep.Subsets[0].Addresses)) != "[10.0.0.2]" || len(ep.Subsets[0].NotReadyAddresses) != 0 {
		t.Fatalf("subsets %+v", ep.Subsets)
	}
}

func TestHeadlessWithoutPorts(t *testing.T) {
	h := newHarness(t)
	h.service(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "web"}}})
	h.pod(t, "a", "10.0.0.1", true, nil)
	ep := h.sync(t, "db")
	if v, ok := ep.Labels[corev1.IsHeadlessService]; !ok || v != "" {
		t.Errorf("labels %v, want %s", ep.Labels, corev1.IsHeadlessService)
	}
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Ports) != 0 || fmt.Sprint(ips(ep.Subsets[0].Addresses)) != "[10.0.0.1]" {
		t.Fatalf("subsets %+v", ep.Subsets)
	}
}

func TestServiceWithoutSelectorAndDeletion(t *testing.T) {
	h := newHarness(t)
	// Without a selector the Endpoints are the user's: left alone.
	h.service(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	mine := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "default"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.168.1.1"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}
	mine, err := h.eps.Create(h.ctx, mine, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.seenEndpoints(t, "ext")
	if got := h.sync(t, "ext"); got.ResourceVersion != mine.ResourceVersion {
		t.Fatal("the Endpoints of a Service without selector were rewritten")
	}

	// The Service goes: its Endpoints go.
	h.service(t, webService("web"))
	h.pod(t, "a", "10.0.0.1", true, nil)
	if ep := h.sync(t, "web"); ep == nil {
		t.Fatal("no Endpoints")
	}
	if err := h.svcs.Delete(h.ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "service deletion seen", func() bool {
		_, err := h.ctrl.svcIn.Lister().Namespace("default").Get("web")
		return apierrors.IsNotFound(err)
	})
	if ep := h.sync(t, "web"); ep != nil {
		t.Fatalf("Endpoints left after the Service was deleted: %+v", ep)
	}
}

func TestRunKeepsEndpointsCurrent(t *testing.T) {
	h := newHarness(t)
	go h.ctrl.Run(h.ctx)
	h.service(t, webService("web"))
	p := h.pod(t, "a", "", false, nil)
	waitFor(t, "empty Endpoints", func() bool {
		ep, err := h.eps.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && len(ep.Subsets) == 0
	})
	h.setStatus(t, p, "10.0.0.9", true, t0)
	waitFor(t, "the ready pod's address", func() bool {
		ep, err := h.eps.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && len(ep.Subsets) == 1 && fmt.Sprint(ips(ep.Subsets[0].Addresses)) == "[10.0.0.9]"
	})
	if err := h.pods.Delete(h.ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the address gone", func() bool {
		ep, err := h.eps.Get(h.ctx, "web", metav1.GetOptions{})
		return err == nil && len(ep.Subsets) == 0
	})
}

// TestStaleEndpointsInformer: a sync whose Endpoints informer still holds
// the version the controller's last update replaced must not trust it (it
// would find nothing to do when the desired subsets equal that old
// version, e.g. a pod deleted right after its address was written): it
// fails, to be retried once the informer caught up, as upstream's
// staleEndpointsTracker.
func TestStaleEndpointsInformer(t *testing.T) {
	h := newHarness(t)
	h.service(t, webService("web"))
	if ep := h.sync(t, "web"); ep == nil || len(ep.Subsets) != 0 {
		t.Fatalf("endpoints %v, want empty", ep)
	}
	old, err := h.ctrl.epIn.Lister().Namespace("default").Get("web")
	if err != nil {
		t.Fatal(err)
	}
	h.pod(t, "a", "10.0.0.9", true, nil)
	if ep := h.sync(t, "web"); len(ep.Subsets) != 1 {
		t.Fatalf("subsets %v, want the pod's address", ep.Subsets)
	}
	if err := h.pods.Delete(h.ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "informer sees pod a gone", func() bool {
		_, err := h.ctrl.podIn.Lister().Namespace("default").Get("a")
		return apierrors.IsNotFound(err)
	})
	// the Endpoints informer lags: it still holds the empty version
	store := h.ctrl.epIn.Informer().GetStore()
	if err := store.Update(old); err != nil {
		t.Fatal(err)
	}
	if err := h.ctrl.Sync(h.ctx, "default/web"); err == nil {
		t.Fatal("sync against a stale Endpoints informer succeeded")
	}
	live, err := h.eps.Get(h.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Subsets) != 1 {
		t.Fatalf("stale sync wrote %v", live.Subsets)
	}
	// caught up: the address goes
	if err := store.Update(live); err != nil {
		t.Fatal(err)
	}
	if ep := h.sync(t, "web"); len(ep.Subsets) != 0 {
		t.Fatalf("subsets %v after the pod was deleted, want none", ep.Subsets)
	}
}

func addrs(prefix string, n int) []corev1.EndpointAddress {
	out := make([]corev1.EndpointAddress, n)
	for i := range out {
		out[i] = corev1.EndpointAddress{IP: fmt.Sprintf("%s.%d.%d", prefix, i/250, i%250)}
	}
	return out
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		subsets              []corev1.EndpointSubset
		truncated            bool
		wantReady, wantUnrdy []int
	}{
		{"at capacity", []corev1.EndpointSubset{{Addresses: addrs("10.0", 600), NotReadyAddresses: addrs("10.1", 400)}}, false, []int{600}, []int{400}},
		{"not ready cut first", []corev1.EndpointSubset{{Addresses: addrs("10.0", 600), NotReadyAddresses: addrs("10.1", 500)}}, true, []int{600}, []int{400}},
		{"not ready cut in proportion", []corev1.EndpointSubset{
			{Addresses: addrs("10.0", 400), NotReadyAddresses: addrs("10.1", 300)},
			{Addresses: addrs("10.2", 400), NotReadyAddresses: addrs("10.3", 100)}}, true, []int{400, 400}, []int{150, 50}},
		{"ready cut, not ready dropped", []corev1.EndpointSubset{
			{Addresses: addrs("10.0", 900), NotReadyAddresses: addrs("10.1", 10)},
			{Addresses: addrs("10.2", 300)}}, true, []int{750, 250}, []int{0, 0}},
		{"rounding up starves the last", []corev1.EndpointSubset{
			{Addresses: addrs("10.0", 1001)}, {Addresses: addrs("10.1", 1)}}, true, []int{1000, 0}, []int{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := &corev1.Endpoints{Subsets: tc.subsets}
			if got := Truncate(ep); got != tc.truncated {
				t.Fatalf("truncated %v", got)
			}
			for i, s := range ep.Subsets {
				if len(s.Addresses) != tc.wantReady[i] || len(s.NotReadyAddresses) != tc.wantUnrdy[i] {
					t.Errorf("subset %d: %d ready, %d not ready; want %d, %d", i, len(s.Addresses), len(s.NotReadyAddresses), tc.wantReady[i], tc.wantUnrdy[i])
				}
			}
		})
	}
}

// TestLeftoversRemovedAtStart: Endpoints whose Service went while the
// controller was down are deleted when it starts; leader-election records
// and the Endpoints of existing Services stay.
func TestLeftoversRemovedAtStart(t *testing.T) {
	h := newHarness(t)
	h.service(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "default"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	for _, ep := range []*corev1.Endpoints{
		{ObjectMeta: metav1.ObjectMeta{Name: "orphan"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "leader", Annotations: map[string]string{leaderAnnotation: "{}"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ext"}},
	} {
		if _, err := h.eps.Create(h.ctx, ep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.seenEndpoints(t, ep.Name)
	}
	go h.ctrl.Run(h.ctx)
	waitFor(t, "the leftover deleted", func() bool {
		_, err := h.eps.Get(h.ctx, "orphan", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	for _, n := range []string{"leader", "ext"} {
		if _, err := h.eps.Get(h.ctx, n, metav1.GetOptions{}); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

func TestCapacityAnnotationCorrect(t *testing.T) {
	over := []corev1.EndpointSubset{{Addresses: addrs("10.0", 1001)}}
	under := []corev1.EndpointSubset{{Addresses: addrs("10.0", 1000)}}
	marked := map[string]string{corev1.EndpointsOverCapacity: Truncated}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		subsets     []corev1.EndpointSubset
		want        bool
	}{
		{"over capacity: a truncation is due", marked, over, false},
		{"under, unmarked", nil, under, true},
		{"under but still marked", marked, under, false},
	} {
		if got := capacityAnnotationCorrect(tc.annotations, tc.subsets); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}
