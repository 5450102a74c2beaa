package admission

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestStorageObjectInUseProtection(t *testing.T) {
	p := storageObjectInUseProtection{}
	pvc := &corev1.PersistentVolumeClaim{}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{pvProtectionFinalizer}}}
	for _, a := range []*Attributes{
		{Operation: Create, Resource: grPVCs, Object: pvc},
		{Operation: Create, Resource: grPVs, Object: pv},
		{Operation: Create, Resource: grPVCs, Subresource: "status", Object: &corev1.PersistentVolumeClaim{}},
	} {
		if err := p.Admit(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(pvc.Finalizers, []string{pvcProtectionFinalizer}) {
		t.Errorf("claim finalizers %v", pvc.Finalizers)
	}
	if !slices.Equal(pv.Finalizers, []string{pvProtectionFinalizer}) {
		t.Errorf("volume finalizers %v (added twice?)", pv.Finalizers)
	}
}

// storageClassGetter answers StorageClass lookups.
type storageClassGetter struct {
	Getter
	classes map[string]*storagev1.StorageClass
}

func (g storageClassGetter) Get(_ context.Context, gr schema.GroupResource, _, name string) (runtime.Object, error) {
	if c, ok := g.classes[name]; ok && gr == grStorageClasses {
		return c, nil
	}
	return nil, apierrors.NewNotFound(gr, name)
}

func TestPersistentVolumeClaimResize(t *testing.T) {
	yes, no := true, false
	p := &persistentVolumeClaimResize{d: Deps{Getter: storageClassGetter{classes: map[string]*storagev1.StorageClass{
		"expandable": {AllowVolumeExpansion: &yes}, "fixed": {AllowVolumeExpansion: &no}, "unset": {},
	}}}}
	claim := func(class, size string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
		if class != "" {
			c.Spec.StorageClassName = &class
		}
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
		return c
	}
	const (
		notBound = `persistentvolumeclaims "c" is forbidden: Only bound persistent volume claims can be expanded`
		noResize = `persistentvolumeclaims "c" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`
	)
	tests := []struct {
		name     string
		old, new *corev1.PersistentVolumeClaim
		sub      string
		want     string
	}{
		{"grow, class allows", claim("expandable", "1Gi", corev1.ClaimBound), claim("expandable", "2Gi", corev1.ClaimBound), "", ""},
		{"same size", claim("fixed", "1Gi", corev1.ClaimBound), claim("fixed", "1Gi", corev1.ClaimBound), "", ""},
		{"shrink is validation's", claim("fixed", "2Gi", corev1.ClaimBound), claim("fixed", "1Gi", corev1.ClaimBound), "", ""},
		{"grow, not bound", claim("expandable", "1Gi", corev1.ClaimPending), claim("expandable", "2Gi", corev1.ClaimPending), "", notBound},
		{"grow, class forbids", claim("fixed", "1Gi", corev1.ClaimBound), claim("fixed", "2Gi", corev1.ClaimBound), "", noResize},
		{"grow, class unset", claim("unset", "1Gi", corev1.ClaimBound), claim("unset", "2Gi", corev1.ClaimBound), "", noResize},
		{"grow, no class", claim("", "1Gi", corev1.ClaimBound), claim("", "2Gi", corev1.ClaimBound), "", noResize},
		{"grow, class missing", claim("gone", "1Gi", corev1.ClaimBound), claim("gone", "2Gi", corev1.ClaimBound), "", noResize},
		{"grow, class changed", claim("fixed", "1Gi", corev1.ClaimBound), claim("expandable", "2Gi", corev1.ClaimBound), "", noResize},
		{"status subresource", claim("fixed", "1Gi", corev1.ClaimBound), claim("fixed", "2Gi", corev1.ClaimBound), "status", ""},
	}
	for _, tt := range tests {
		err := p.Validate(context.Background(), &Attributes{Operation: Update, Resource: grPVCs, Subresource: tt.sub, Name: "c", Object: tt.new, OldObject: tt.old})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want || !apierrors.IsForbidden(err)):
			t.Errorf("%s: %v, want Forbidden %q", tt.name, err, tt.want)
		}
	}
}
