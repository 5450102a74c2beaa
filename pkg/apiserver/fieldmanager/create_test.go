package fieldmanager_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/apiserver/fieldmanager"
	"github.com/skiff-sh/skiff/pkg/apiserver/openapi"
)

func testPod(mod func(p *corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "web", "tier": "front"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1", Args: []string{"-v"},
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Env:            []corev1.EnvVar{{Name: "A", Value: "1"}},
			Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}}},
		}}, RestartPolicy: corev1.RestartPolicyAlways},
	}
	if mod != nil {
		mod(p)
	}
	return p
}

// TestTrackCreateMatchesFieldManager: the memoized create answers exactly
// what the field manager computes, for objects of the same shape (hits)
// and of shapes that differ only where the field set does.
func TestTrackCreateMatchesFieldManager(t *testing.T) {
	h, err := openapi.New(openapi.Info{}, []openapi.Resource{
		{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"get"}, Object: &corev1.Pod{}},
		{Group: "apps", Version: "v1", Resource: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true, Verbs: []string{"get"}, Object: &appsv1.ControllerRevision{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sc := runtime.NewScheme()
	_ = corev1.AddToScheme(sc)
	_ = appsv1.AddToScheme(sc)
	src := h.Definitions()
	cfg := fieldmanager.Config{Source: func() fieldmanager.Source { return src }, Convertor: sc, Creater: sc}
	memo := fieldmanager.New(cfg)  // TrackCreate
	plain := fieldmanager.New(cfg) // UpdateNoErrors
	podKind := fieldmanager.Kind{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Hub: schema.GroupVersion{Version: "v1"}}
	live := func() runtime.Object { return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}} }

	objs := []struct {
		name string
		obj  runtime.Object
		kind fieldmanager.Kind
		live func() runtime.Object
	}{
		{"base", testPod(nil), podKind, live},
		{"same shape, other values", testPod(func(p *corev1.Pod) {
			p.Name, p.Labels["app"], p.Spec.Containers[0].Image, p.Spec.Containers[0].Args = "q", "api", "nginx:2", []string{"-x", "-y"}
		}), podKind, live},
		{"other label key", testPod(func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web", "zone": "a"} }), podKind, live},
		{"other container name", testPod(func(p *corev1.Pod) { p.Spec.Containers[0].Name = "api" }), podKind, live},
		{"other port key", testPod(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 8080 }), podKind, live},
		{"other env name", testPod(func(p *corev1.Pod) { p.Spec.Containers[0].Env[0].Name = "B" }), podKind, live},
		{"two containers", testPod(func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "busybox"})
		}), podKind, live},
		{"finalizers set", testPod(func(p *corev1.Pod) { p.Finalizers = []string{"a/b"} }), podKind, live},
		{"other finalizer", testPod(func(p *corev1.Pod) { p.Finalizers = []string{"c/d"} }), podKind, live},
		{"empty labels map", testPod(func(p *corev1.Pod) { p.Labels = map[string]string{} }), podKind, live},
		{"nil labels", testPod(func(p *corev1.Pod) { p.Labels = nil }), podKind, live},
		{"zero replicas-like field", testPod(func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].HostPort = 0 }), podKind, live},
		{"probe port by name", testPod(func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromString("http") }), podKind, live},
		{"base again", testPod(nil), podKind, live},
		{"raw extension: not memoized", &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Revision: 1,
			Data: runtime.RawExtension{Raw: []byte(`{"spec":{"a":1}}`)}},
			fieldmanager.Kind{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ControllerRevision"}, Hub: schema.GroupVersion{Group: "apps", Version: "v1"}},
			func() runtime.Object {
				return &appsv1.ControllerRevision{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"}}
			}},
	}
	for round := 0; round < 2; round++ { // the second round hits the memo
		for _, o := range objs {
			fm, err := plain.For(o.kind)
			if err != nil {
				t.Fatal(err)
			}
			want := fm.UpdateNoErrors(o.live(), o.obj.DeepCopyObject(), "creator").(metav1.Object).GetManagedFields()
			gotObj, err := memo.TrackCreate(o.kind, o.live(), o.obj.DeepCopyObject(), "creator")
			if err != nil {
				t.Fatal(err)
			}
			got := gotObj.(metav1.Object).GetManagedFields()
			if len(got) != 1 || len(want) != 1 {
				t.Fatalf("%s: got %d entries, want %d", o.name, len(got), len(want))
			}
			g, w := got[0], want[0]
			if g.Time == nil || w.Time == nil {
				t.Fatalf("%s: no time", o.name)
			}
			g.Time, w.Time = nil, nil
			if g.Manager != w.Manager || g.Operation != w.Operation || g.APIVersion != w.APIVersion || g.FieldsType != w.FieldsType ||
				g.Subresource != w.Subresource || string(g.FieldsV1.Raw) != string(w.FieldsV1.Raw) {
				t.Errorf("round %d, %s:\n got %+v %s\nwant %+v %s", round, o.name, g, g.FieldsV1.Raw, w, w.FieldsV1.Raw)
			}
		}
	}
}

func BenchmarkTrackCreate(b *testing.B) {
	h, _ := openapi.New(openapi.Info{}, []openapi.Resource{{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"get"}, Object: &corev1.Pod{}}})
	sc := runtime.NewScheme()
	_ = corev1.AddToScheme(sc)
	src := h.Definitions()
	m := fieldmanager.New(fieldmanager.Config{Source: func() fieldmanager.Source { return src }, Convertor: sc, Creater: sc})
	k := fieldmanager.Kind{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Hub: schema.GroupVersion{Version: "v1"}}
	p := testPod(nil)
	for _, memo := range []bool{false, true} {
		name := "fieldmanager"
		if memo {
			name = "memoized"
		}
		b.Run(name, func(b *testing.B) {
			fm, _ := m.For(k)
			for i := 0; i < b.N; i++ {
				live := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
				if memo {
					_, _ = m.TrackCreate(k, live, p.DeepCopy(), "m")
				} else {
					fm.UpdateNoErrors(live, p.DeepCopy(), "m")
				}
			}
		})
	}
}
