package kubelet

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type podRecorder struct {
	mu   sync.Mutex
	pods map[string]*corev1.Pod
}

func (r *podRecorder) PodUpdated(p *corev1.Pod) {
	r.mu.Lock()
	r.pods[p.Name] = p
	r.mu.Unlock()
}

func (r *podRecorder) PodRemoved(*corev1.Pod) {}

func (r *podRecorder) get(name string) *corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pods[name]
}

// The pod source hands out pods without managedFields, the pods of one
// template sharing their equal parts (labels, containers).
func TestInformerPodSourceStripsAndShares(t *testing.T) {
	env := testenv.StartT(t)
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := NewInformerPodSource(c, "spec.nodeName!=")
	rec := &podRecorder{pods: map[string]*corev1.Pod{}}
	src.Register("n1", rec)
	go src.Run(ctx)
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	for i := 0; i < 3; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Labels: map[string]string{"app": "web", "tier": "front"}},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "registry.example/web:1"}}}}
		created, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(created.ManagedFields) == 0 {
			t.Fatal("the API server wrote no managedFields: the test checks nothing")
		}
	}
	waitFor(t, "3 pods", func() (bool, error) {
		return rec.get("web-2") != nil && rec.get("web-1") != nil && rec.get("web-0") != nil, nil
	})
	for i := 0; i < 3; i++ {
		if p := rec.get(fmt.Sprintf("web-%d", i)); p.ManagedFields != nil {
			t.Errorf("%s: managedFields kept: %v", p.Name, p.ManagedFields)
		}
	}
	a, b := rec.get("web-1"), rec.get("web-2")
	if reflect.ValueOf(a.Labels).UnsafePointer() != reflect.ValueOf(b.Labels).UnsafePointer() {
		t.Error("the labels of two pods of one template are not shared")
	}
	if !reflect.DeepEqual(b.Labels, map[string]string{"app": "web", "tier": "front"}) || b.Spec.Containers[0].Image != "registry.example/web:1" {
		t.Errorf("pod changed by the transform: %v %v", b.Labels, b.Spec.Containers)
	}
}
