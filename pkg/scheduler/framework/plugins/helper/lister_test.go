package helper

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// GetObject names objects in NotFound errors as upstream's client-go
// listers do, for namespaced and cluster-scoped objects.
func TestGetObject(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = idx.Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns"}})
	pvcs := cache.NewLister[*corev1.PersistentVolumeClaim](idx, schema.GroupResource{Resource: "persistentvolumeclaims"})
	if got, err := GetObject(pvcs, PersistentVolumeClaimResource, "ns", "data"); err != nil || got.Name != "data" {
		t.Fatalf("GetObject = %v, %v", got, err)
	}
	_, err := GetObject(pvcs, PersistentVolumeClaimResource, "other", "data")
	if st := ErrorAsStatus(err); !st.Equal(framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "data" not found`)) {
		t.Errorf("missing claim: %v", st)
	}
	classes := cache.NewLister[*storagev1.StorageClass](cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil), schema.GroupResource{})
	_, err = GetObject(classes, StorageClassResource, "", "fast")
	if err == nil || err.Error() != `storageclass.storage.k8s.io "fast" not found` {
		t.Errorf("missing class: %v", err)
	}
	if ErrorAsStatus(nil) != nil {
		t.Error("ErrorAsStatus(nil) != nil")
	}
}

func TestClaimClass(t *testing.T) {
	for _, tt := range []struct {
		name string
		pvc  *corev1.PersistentVolumeClaim
		want string
	}{
		{"none", &corev1.PersistentVolumeClaim{}, ""},
		{"spec", &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("a")}}, "a"},
		{"beta annotation wins", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "b"}},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("a")}}, "b"},
	} {
		if got := ClaimClass(tt.pvc); got != tt.want {
			t.Errorf("%s: ClaimClass = %q, want %q", tt.name, got, tt.want)
		}
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "b"}}, Spec: corev1.PersistentVolumeSpec{StorageClassName: "a"}}
	if got := VolumeClass(pv); got != "b" {
		t.Errorf("VolumeClass = %q, want b", got)
	}
}
