package storageapi

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validClass() *storagev1.StorageClass {
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "standard", ResourceVersion: "1"},
		Provisioner: "rancher.io/local-path",
		Parameters:  map[string]string{"type": "ssd"},
	}
	DefaultStorageClass(sc)
	return sc
}

func TestDefaultStorageClass(t *testing.T) {
	sc := validClass()
	if *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("reclaimPolicy = %v", *sc.ReclaimPolicy)
	}
	if *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		t.Errorf("volumeBindingMode = %v", *sc.VolumeBindingMode)
	}
	sc = &storagev1.StorageClass{
		ReclaimPolicy:     new(corev1.PersistentVolumeReclaimRetain),
		VolumeBindingMode: new(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	DefaultStorageClass(sc)
	if *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Errorf("user values overwritten: %+v", sc)
	}
}

func TestValidateStorageClass(t *testing.T) {
	zoneTerm := func(zones ...string) corev1.TopologySelectorTerm {
		return corev1.TopologySelectorTerm{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "topology.kubernetes.io/zone", Values: zones}}}
	}
	tests := []struct {
		name   string
		mutate func(*storagev1.StorageClass)
		path   string
		typ    field.ErrorType
	}{
		{"valid", func(*storagev1.StorageClass) {}, "", ""},
		{"upper-case provisioner", func(sc *storagev1.StorageClass) { sc.Provisioner = "Example.com/Disk" }, "", ""},
		{"topologies", func(sc *storagev1.StorageClass) {
			sc.AllowedTopologies = []corev1.TopologySelectorTerm{zoneTerm("a", "b"), zoneTerm("c")}
		}, "", ""},
		{"no provisioner", func(sc *storagev1.StorageClass) { sc.Provisioner = "" }, "provisioner", field.ErrorTypeRequired},
		{"bad provisioner", func(sc *storagev1.StorageClass) { sc.Provisioner = "a b" }, "provisioner", field.ErrorTypeInvalid},
		{"empty parameter key", func(sc *storagev1.StorageClass) { sc.Parameters[""] = "x" }, "parameters", field.ErrorTypeInvalid},
		{"huge parameters", func(sc *storagev1.StorageClass) { sc.Parameters["big"] = strings.Repeat("x", 256*1024) }, "parameters", field.ErrorTypeTooLong},
		{"Recycle", func(sc *storagev1.StorageClass) { sc.ReclaimPolicy = new(corev1.PersistentVolumeReclaimRecycle) }, "reclaimPolicy", field.ErrorTypeNotSupported},
		{"bad binding mode", func(sc *storagev1.StorageClass) { sc.VolumeBindingMode = new(storagev1.VolumeBindingMode("Later")) }, "volumeBindingMode", field.ErrorTypeNotSupported},
		{"no binding mode", func(sc *storagev1.StorageClass) { sc.VolumeBindingMode = nil }, "volumeBindingMode", field.ErrorTypeRequired},
		{"namespaced", func(sc *storagev1.StorageClass) { sc.Namespace = "x" }, "metadata.namespace", field.ErrorTypeForbidden},
		{"topology without values", func(sc *storagev1.StorageClass) {
			sc.AllowedTopologies = []corev1.TopologySelectorTerm{zoneTerm()}
		}, "allowedTopologies[0].matchLabelExpressions[0].values", field.ErrorTypeRequired},
		{"duplicate topology value", func(sc *storagev1.StorageClass) {
			sc.AllowedTopologies = []corev1.TopologySelectorTerm{zoneTerm("a", "a")}
		}, "allowedTopologies[0].matchLabelExpressions[0].values[1]", field.ErrorTypeDuplicate},
		{"duplicate topology term", func(sc *storagev1.StorageClass) {
			sc.AllowedTopologies = []corev1.TopologySelectorTerm{zoneTerm("a"), zoneTerm("a")}
		}, "allowedTopologies[1].matchLabelExpressions", field.ErrorTypeDuplicate},
		{"bad topology key", func(sc *storagev1.StorageClass) {
			sc.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "a b", Values: []string{"x"}}}}}
		}, "allowedTopologies[0].matchLabelExpressions[0].key", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := validClass()
			tc.mutate(sc)
			errs := ValidateStorageClass(sc)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
		})
	}
}

func TestValidateStorageClassUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.StorageClass)
		path   string
		typ    field.ErrorType
	}{
		{"default-class annotation and expansion may change", func(sc *storagev1.StorageClass) {
			sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
			sc.AllowVolumeExpansion = new(true)
			sc.MountOptions = []string{"ro"}
		}, "", ""},
		{"parameters", func(sc *storagev1.StorageClass) { sc.Parameters["type"] = "hdd" }, "parameters", field.ErrorTypeForbidden},
		{"provisioner", func(sc *storagev1.StorageClass) { sc.Provisioner = "other.io/x" }, "provisioner", field.ErrorTypeForbidden},
		{"reclaimPolicy", func(sc *storagev1.StorageClass) { sc.ReclaimPolicy = new(corev1.PersistentVolumeReclaimRetain) }, "reclaimPolicy", field.ErrorTypeForbidden},
		{"volumeBindingMode", func(sc *storagev1.StorageClass) {
			sc.VolumeBindingMode = new(storagev1.VolumeBindingWaitForFirstConsumer)
		}, "volumeBindingMode", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validClass()
			sc := old.DeepCopy()
			tc.mutate(sc)
			errs := ValidateStorageClassUpdate(sc, old)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
		})
	}
}
