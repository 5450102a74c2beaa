package persistentvolume

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

type pvOpt func(*corev1.PersistentVolume)

func newPV(name, size, class string, opts ...pvOpt) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}
	for _, o := range opts {
		o(pv)
	}
	return pv
}

func modes(m ...corev1.PersistentVolumeAccessMode) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = m }
}
func phase(p corev1.PersistentVolumePhase) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Status.Phase = p }
}
func labelled(k, v string) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Labels = map[string]string{k: v} }
}
func claimRef(ns, name, uid string) pvOpt {
	return func(pv *corev1.PersistentVolume) {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: name, UID: types.UID(uid)}
	}
}
func block() pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) }
}
func deleting() pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }
}

type claimOpt func(*corev1.PersistentVolumeClaim)

func newClaim(name, size string, class *string, opts ...claimOpt) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: class,
		},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func TestFindBestMatch(t *testing.T) {
	empty, fast := ptr.To(""), ptr.To("fast")
	withUID := func(c *corev1.PersistentVolumeClaim) { c.UID = "uid-1" }
	tests := []struct {
		name    string
		claim   *corev1.PersistentVolumeClaim
		volumes []*corev1.PersistentVolume
		delay   bool
		want    string // "" : no match
	}{
		{name: "smallest that fits", claim: newClaim("c", "2Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("big", "10Gi", ""), newPV("small", "1Gi", ""), newPV("fit", "3Gi", "")}, want: "fit"},
		{name: "exact size fits", claim: newClaim("c", "1Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("a", "2Gi", ""), newPV("b", "1Gi", "")}, want: "b"},
		{name: "class must match (empty class only matches empty)", claim: newClaim("c", "1Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("fast", "1Gi", "fast")}, want: ""},
		{name: "named class", claim: newClaim("c", "1Gi", fast),
			volumes: []*corev1.PersistentVolume{newPV("none", "1Gi", ""), newPV("f", "5Gi", "fast")}, want: "f"},
		{name: "nil class matches empty-class volumes", claim: newClaim("c", "1Gi", nil),
			volumes: []*corev1.PersistentVolume{newPV("f", "1Gi", "fast"), newPV("e", "1Gi", "")}, want: "e"},
		{name: "access modes must be contained", claim: newClaim("c", "1Gi", empty, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}), volumes: []*corev1.PersistentVolume{newPV("rwo", "1Gi", ""), newPV("rwx", "9Gi", "", modes(corev1.ReadWriteOnce, corev1.ReadWriteMany))}, want: "rwx"},
		{name: "fewest extra access modes first, even if bigger", claim: newClaim("c", "1Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("two", "1Gi", "", modes(corev1.ReadWriteOnce, corev1.ReadOnlyMany)), newPV("one", "8Gi", "")}, want: "one"},
		{name: "volume mode must match", claim: newClaim("c", "1Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("blk", "1Gi", "", block())}, want: ""},
		{name: "selector", claim: newClaim("c", "1Gi", empty, func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
		}), volumes: []*corev1.PersistentVolume{newPV("plain", "1Gi", ""), newPV("gold", "2Gi", "", labelled("tier", "gold"))}, want: "gold"},
		{name: "only Available volumes", claim: newClaim("c", "1Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("released", "1Gi", "", phase(corev1.VolumeReleased)), newPV("pending", "1Gi", "", phase(corev1.VolumePending))}, want: ""},
		{name: "claimed by another claim", claim: newClaim("c", "1Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("taken", "1Gi", "", claimRef("default", "other", ""))}, want: ""},
		{name: "being deleted", claim: newClaim("c", "1Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("gone", "1Gi", "", deleting())}, want: ""},
		{name: "pre-bound wins over a smaller match, whatever its class", claim: newClaim("c", "1Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("small", "1Gi", ""), newPV("mine", "5Gi", "other", claimRef("default", "c", ""))}, want: "mine"},
		{name: "pre-bound to another claim UID does not match", claim: newClaim("c", "1Gi", empty, withUID),
			volumes: []*corev1.PersistentVolume{newPV("old", "5Gi", "", claimRef("default", "c", "uid-0"))}, want: ""},
		{name: "pre-bound too small does not match", claim: newClaim("c", "5Gi", empty),
			volumes: []*corev1.PersistentVolume{newPV("mine", "1Gi", "", claimRef("default", "c", ""))}, want: ""},
		{name: "delayed binding: free volumes are the scheduler's", claim: newClaim("c", "1Gi", fast), delay: true,
			volumes: []*corev1.PersistentVolume{newPV("f", "1Gi", "fast")}, want: ""},
		{name: "delayed binding: pre-bound still binds", claim: newClaim("c", "1Gi", fast), delay: true,
			volumes: []*corev1.PersistentVolume{newPV("f", "1Gi", "fast", claimRef("default", "c", ""))}, want: "f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findBestMatch(tt.claim, tt.volumes, tt.delay)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tt.want {
				t.Errorf("matched %q, want %q", name, tt.want)
			}
		})
	}
}
