package history

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func template() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}
}

// The revision data is upstream's patch: only spec.template, with
// "$patch":"replace", keys sorted.
func TestTemplatePatch(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d", Annotations: map[string]string{"x": "y"}},
		Spec: appsv1.DaemonSetSpec{Template: *template(), MinReadySeconds: 3}}
	got, err := TemplatePatch(ds)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1","name":"c","resources":{}}]}}}}`
	if string(got) != want {
		t.Fatalf("patch\n%s\nwant\n%s", got, want)
	}
	back, err := TemplateOf(&appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: got}})
	if err != nil || back.Spec.Containers[0].Image != "nginx:1" || back.Labels["app"] != "web" {
		t.Fatalf("TemplateOf: %+v %v", back, err)
	}
}

// Golden values: the hashes are upstream's algorithms (FNV-32 of the patch
// plus the decimal probe; FNV-32a of the spew dump plus 8 little-endian
// bytes), so they must never change for the same input.
func TestHashes(t *testing.T) {
	cr := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace"}}}`)}}
	zero, one := int32(0), int32(1)
	h0, h1, hn := HashControllerRevision(cr, &zero), HashControllerRevision(cr, &one), HashControllerRevision(cr, nil)
	if h0 == h1 || h0 == hn {
		t.Fatalf("the probe must change the hash: %s %s %s", h0, h1, hn)
	}
	if name := NewControllerRevision(&metav1.ObjectMeta{Name: "web", UID: "u"}, appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
		map[string]string{"app": "web"}, cr.Data.Raw, 1, &zero).Name; name != "web-"+h0 {
		t.Fatalf("name %s, want web-%s", name, h0)
	}
	c0, c1 := ComputeHash(template(), &zero), ComputeHash(template(), &one)
	if c0 == c1 || c0 == ComputeHash(template(), nil) {
		t.Fatalf("collision count must change the template hash: %s %s", c0, c1)
	}
	golden := map[string]string{"revision": h0, "revision-nil": hn, "template": c0, "template-nil": ComputeHash(template(), nil)}
	want := map[string]string{"revision": goldenRevision, "revision-nil": goldenRevisionNil, "template": goldenTemplate, "template-nil": goldenTemplateNil}
	for k := range want {
		if golden[k] != want[k] {
			t.Errorf("%s hash %s, want %s", k, golden[k], want[k])
		}
	}
}

func TestControllerRevisionNameTruncates(t *testing.T) {
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	if n := ControllerRevisionName(string(long), "h"); len(n) != 225 {
		t.Fatalf("len %d", len(n))
	}
}

func TestSortAndNext(t *testing.T) {
	revs := []*appsv1.ControllerRevision{{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Revision: 3}, {ObjectMeta: metav1.ObjectMeta{Name: "a"}, Revision: 1}, {ObjectMeta: metav1.ObjectMeta{Name: "c"}, Revision: 2}}
	Sort(revs)
	if revs[0].Name != "a" || revs[2].Name != "b" || NextRevision(revs) != 4 || NextRevision(nil) != 1 || MaxRevision(revs) != 3 {
		t.Fatalf("%v", revs)
	}
}

const (
	goldenRevision    = "589f85db5b"
	goldenRevisionNil = "5c7586484"
	goldenTemplate    = "67c487b546"
	goldenTemplateNil = "59b6df6b58"
)
