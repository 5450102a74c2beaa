package resourcequota

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/quota"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type harness struct {
	t   *testing.T
	env *testenv.Environment
	c   *client.Client
	ctx context.Context
}

func newHarness(t *testing.T) *harness {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, env: env, c: c, ctx: context.Background()}
}

func create[T client.Object, L client.ObjectList](h *harness, obj T) T {
	h.t.Helper()
	out, err := client.For[T, L](h.c).Namespace("default").Create(h.ctx, obj, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	return out
}

func (h *harness) pod(name string, spec corev1.PodSpec) *corev1.Pod {
	return create[*corev1.Pod, *corev1.PodList](h, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
}

func (h *harness) quota(name string, hard corev1.ResourceList, mod func(*corev1.ResourceQuota)) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if mod != nil {
		mod(q)
	}
	return create[*corev1.ResourceQuota, *corev1.ResourceQuotaList](h, q)
}

func (h *harness) getQuota(name string) *corev1.ResourceQuota {
	h.t.Helper()
	q, err := client.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](h.c).Namespace("default").Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return q
}

// fill loads the controller's caches from the server (informers never
// started: the state the sync sees is exactly the server's).
func fill[T client.Object, L client.ObjectList](h *harness, f *informers.SharedInformerFactory) {
	h.t.Helper()
	l, err := client.For[T, L](h.c).List(h.ctx, metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	inf := informers.InformerFor[T, L](f).Informer()
	for _, o := range inf.GetIndexer().List() {
		_ = inf.GetIndexer().Delete(o)
	}
	items, _ := metaItems(l)
	for _, o := range items {
		_ = inf.GetIndexer().Add(o)
	}
}

func metaItems(l client.ObjectList) ([]any, error) {
	switch l := l.(type) {
	case *corev1.PodList:
		var out []any
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, nil
	case *corev1.ServiceList:
		var out []any
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, nil
	case *corev1.PersistentVolumeClaimList:
		var out []any
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, nil
	case *corev1.ResourceQuotaList:
		var out []any
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, nil
	}
	return nil, nil
}

func (h *harness) fillAll(f *informers.SharedInformerFactory) {
	fill[*corev1.Pod, *corev1.PodList](h, f)
	fill[*corev1.Service, *corev1.ServiceList](h, f)
	fill[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](h, f)
	fill[*corev1.ResourceQuota, *corev1.ResourceQuotaList](h, f)
}

// TestSync fills a namespace with pods, services, claims and other objects
// and checks each quota's status after one sync.
func TestSync(t *testing.T) {
	h := newHarness(t)
	deadline := int64(600)
	fast := "fast"
	h.pod("web", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "250m", "memory", "64Mi"), rl("cpu", "500m", "memory", "128Mi"))}})
	h.pod("batch", corev1.PodSpec{ActiveDeadlineSeconds: &deadline, PriorityClassName: "", Containers: []corev1.Container{ctr(rl("cpu", "1"), nil)}})
	h.pod("idle", corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}})
	done := h.pod("done", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "4"), nil)}})
	done.Status.Phase = corev1.PodSucceeded
	if _, err := client.For[*corev1.Pod, *corev1.PodList](h.c).UpdateStatus(h.ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	port := func(n int32) []corev1.ServicePort { return []corev1.ServicePort{{Name: "p", Port: n}} }
	create[*corev1.Service, *corev1.ServiceList](h, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.ServiceSpec{Ports: port(80)}})
	create[*corev1.Service, *corev1.ServiceList](h, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
		Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}}}})
	create[*corev1.Service, *corev1.ServiceList](h, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: port(443)}})
	claim := func(name string, class *string, size string) {
		create[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](h, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", size)}}})
	}
	claim("data", &fast, "1Gi")
	claim("logs", nil, "512Mi")
	for _, n := range []string{"a", "b"} {
		create[*corev1.ConfigMap, *corev1.ConfigMapList](h, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	create[*corev1.Secret, *corev1.SecretList](h, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}})
	one := int32(1)
	create[*appsv1.Deployment, *appsv1.DeploymentList](h, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: &one,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}}}}})

	h.quota("compute", rl("pods", "10", "requests.cpu", "4", "limits.cpu", "4", "requests.memory", "1Gi", "limits.memory", "1Gi", "count/pods", "20", "cpu", "8"), nil)
	h.quota("objects", rl("services", "5", "services.nodeports", "5", "services.loadbalancers", "1", "count/services", "5",
		"persistentvolumeclaims", "5", "requests.storage", "10Gi", "fast.storageclass.storage.k8s.io/requests.storage", "5Gi",
		"fast.storageclass.storage.k8s.io/persistentvolumeclaims", "2", "configmaps", "10", "count/secrets", "10",
		"count/deployments.apps", "3", "resourcequotas", "5", "count/resourcequotas", "5"), nil)
	h.quota("besteffort", rl("pods", "5"), func(q *corev1.ResourceQuota) {
		q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	})
	h.quota("terminating", rl("pods", "5", "requests.cpu", "2"), func(q *corev1.ResourceQuota) {
		q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
	})
	h.quota("unknown", rl("count/widgets.example.com", "3", "pods", "3"), nil)

	f := informers.NewSharedInformerFactory(h.c, 0)
	ctrl, err := New(Config{Client: h.c, Informers: f, Clock: clock.NewFake(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	h.fillAll(f)
	for _, tt := range []struct {
		quota   string
		used    string
		wantErr string
	}{
		{quota: "compute", used: "count/pods=4 cpu=1250m limits.cpu=500m limits.memory=128Mi pods=3 requests.cpu=1250m requests.memory=64Mi"},
		// services: the three above and default/kubernetes.
		{quota: "objects", used: "configmaps=2 count/deployments.apps=1 count/resourcequotas=5 count/secrets=1 count/services=4 " +
			"fast.storageclass.storage.k8s.io/persistentvolumeclaims=1 fast.storageclass.storage.k8s.io/requests.storage=1Gi " +
			"persistentvolumeclaims=2 requests.storage=1536Mi resourcequotas=5 services=4 services.loadbalancers=1 services.nodeports=3"},
		{quota: "besteffort", used: "pods=1"},
		{quota: "terminating", used: "pods=1 requests.cpu=1"},
		{quota: "unknown", used: "pods=3", wantErr: "the server does not serve widgets.example.com"},
	} {
		t.Run(tt.quota, func(t *testing.T) {
			err := ctrl.sync(h.ctx, "default/"+tt.quota)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("sync error %v, want %q", err, tt.wantErr)
			}
			q := h.getQuota(tt.quota)
			if got := show(q.Status.Used); got != tt.used {
				t.Errorf("used\n  %s\nwant\n  %s", got, tt.used)
			}
			if !quota.Equals(q.Status.Hard, q.Spec.Hard) {
				t.Errorf("status.hard %v, want spec.hard %v", q.Status.Hard, q.Spec.Hard)
			}
			// Current: a second sync writes nothing.
			fill[*corev1.ResourceQuota, *corev1.ResourceQuotaList](h, f)
			_ = ctrl.sync(h.ctx, "default/"+tt.quota)
			if again := h.getQuota(tt.quota); again.ResourceVersion != q.ResourceVersion {
				t.Error("the status was written again although nothing changed")
			}
		})
	}
}

// TestController: with the controller running, usage follows creations
// and deletions of pods and config maps, a change of spec.hard, and the
// periodic resync catches what no event announces (a pod's grace period
// running out).
func TestController(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(h.ctx)
	fake := clock.NewFake(time.Now())
	f := informers.NewSharedInformerFactory(h.c, 0)
	ctrl, err := New(Config{Client: h.c, Informers: f, Clock: fake, ResyncPeriod: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	f.Start(ctx)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		f.Shutdown()
	}()
	h.quota("q", rl("pods", "5", "requests.cpu", "2", "count/configmaps", "5"), nil)
	waitUsed := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := show(h.getQuota("q").Status.Used)
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: used %s, want %s", what, got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitUsed("first sync", "count/configmaps=0 pods=0 requests.cpu=0")
	// A charge in status.used that no object backs (admission's charge of
	// an object created and deleted before the charge reached the
	// controller) is corrected at once, not at the next resync.
	stale := h.getQuota("q")
	stale.Status.Used["count/configmaps"] = resource.MustParse("1")
	if _, err := client.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](h.c).Namespace("default").UpdateStatus(h.ctx, stale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed("a stale charge corrected", "count/configmaps=0 pods=0 requests.cpu=0")
	// Bound to a node: its deletion is graceful.
	h.pod("p1", corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{ctr(rl("cpu", "500m"), nil)}})
	waitUsed("a pod created", "count/configmaps=0 pods=1 requests.cpu=500m")
	create[*corev1.ConfigMap, *corev1.ConfigMapList](h, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}})
	waitUsed("a config map created", "count/configmaps=1 pods=1 requests.cpu=500m")
	if err := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](h.c).Namespace("default").Delete(h.ctx, "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed("the config map deleted", "count/configmaps=0 pods=1 requests.cpu=500m")
	// The controller may write the quota's status between the read and
	// the update: retry on a conflict, as a client would.
	for attempt := 0; ; attempt++ {
		q := h.getQuota("q")
		q.Spec.Hard = rl("pods", "5", "requests.cpu", "2", "count/configmaps", "5", "limits.cpu", "1")
		_, err := client.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](h.c).Update(h.ctx, q, metav1.UpdateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt == 10 {
			t.Fatal(err)
		}
	}
	waitUsed("spec.hard changed", "count/configmaps=0 limits.cpu=0 pods=1 requests.cpu=500m")

	// A pod deleted with a grace period stays (no kubelet); once the
	// grace period has passed it no longer counts, which only a resync
	// notices.
	grace := int64(30)
	if err := client.For[*corev1.Pod, *corev1.PodList](h.c).Namespace("default").Delete(h.ctx, "p1", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	p, err := client.For[*corev1.Pod, *corev1.PodList](h.c).Namespace("default").Get(h.ctx, "p1", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("p1 not terminating: %v %+v", err, p)
	}
	fake.SetTime(p.DeletionTimestamp.Add(31 * time.Second))
	waitUsed("the resync after the grace period", "count/configmaps=0 limits.cpu=0 pods=0 requests.cpu=0")
}
