package nodevolumelimits

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

func lister[T runtime.Object](objs ...T) cache.Lister[T] {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = idx.Add(o)
	}
	return cache.NewLister[T](idx, schema.GroupResource{})
}

const ebs = "ebs.csi.aws.com"

// volumes: csi-ebs-<n> bound claims of driver ebs; "unbound-<n>" claims of
// class "sc-ebs"; "gce-<n>" claims bound to a non-CSI volume.
func fixtures() ([]*corev1.PersistentVolumeClaim, []*corev1.PersistentVolume, []*storagev1.StorageClass) {
	var pvcs []*corev1.PersistentVolumeClaim
	var pvs []*corev1.PersistentVolume
	for _, n := range []string{"1", "2", "3", "4"} {
		pvcs = append(pvcs, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "csi-ebs-" + n, Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-ebs-" + n}})
		pvs = append(pvs, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-ebs-" + n}, Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: ebs, VolumeHandle: "handle-" + n}}}})
		pvcs = append(pvcs, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "unbound-" + n, Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("sc-ebs")}})
		pvcs = append(pvcs, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "gce-" + n, Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-gce-" + n}})
		pvs = append(pvs, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-gce-" + n}, Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: n}}}})
	}
	// a claim pre-bound to a volume that does not exist yet: counted by class
	pvcs = append(pvcs, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "prebound-missing", Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "nope", StorageClassName: ptr.To("sc-ebs")}})
	// the ephemeral volume "data" of pod "eph", owned by it
	pvcs = append(pvcs, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "eph-data", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "eph", UID: "eph-uid", Controller: ptr.To(true)}}},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-ebs-4"}})
	classes := []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "sc-ebs"}, Provisioner: ebs}}
	return pvcs, pvs, classes
}

func podWith(name, node string, claims ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")}, Spec: corev1.PodSpec{NodeName: node}}
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func ephemeralPod(name string) *corev1.Pod {
	p := podWith(name, "")
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}}
	return p
}

// Cases in the shape of upstream's TestCSILimits.
func TestCSILimits(t *testing.T) {
	exceeded := framework.NewStatus(framework.Unschedulable, ErrReasonMaxVolumeCountExceeded)
	for _, tt := range []struct {
		name       string
		pod        *corev1.Pod
		existing   []*corev1.Pod
		limit      *int32 // CSINode count for ebs; nil: no CSINode
		nodeLimit  int64  // node allocatable attachable-volumes-csi-ebs (0: none)
		wantPre    framework.Code
		wantFilter *framework.Status
		wantErr    string // Filter message prefix for UnschedulableAndUnresolvable
	}{
		{name: "no volumes: skip", pod: podWith("p", ""), wantPre: framework.Skip},
		{name: "no CSINode: admits", pod: podWith("p", "", "csi-ebs-3", "csi-ebs-4"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1", "csi-ebs-2")}},
		{name: "fits the limit", pod: podWith("p", "", "csi-ebs-3"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1")}, limit: ptr.To[int32](2)},
		{name: "exceeds the limit", pod: podWith("p", "", "csi-ebs-3", "csi-ebs-4"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1", "csi-ebs-2")}, limit: ptr.To[int32](3), wantFilter: exceeded},
		{name: "volume shared with a pod on the node counts once", pod: podWith("p", "", "csi-ebs-1", "csi-ebs-2"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1", "csi-ebs-2")}, limit: ptr.To[int32](2)},
		{name: "unbound claims counted by class provisioner", pod: podWith("p", "", "unbound-1", "unbound-2"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1")}, limit: ptr.To[int32](2), wantFilter: exceeded},
		{name: "claim pre-bound to a missing volume counted by class", pod: podWith("p", "", "prebound-missing"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1")}, limit: ptr.To[int32](1), wantFilter: exceeded},
		{name: "non-CSI volumes not counted", pod: podWith("p", "", "gce-1", "gce-2"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1")}, limit: ptr.To[int32](1)},
		{name: "limit from node allocatable", pod: podWith("p", "", "csi-ebs-2"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1")}, nodeLimit: 1, wantFilter: exceeded},
		{name: "existing pod's missing claim not counted", pod: podWith("p", "", "csi-ebs-2"), existing: []*corev1.Pod{podWith("e", "n", "missing")}, limit: ptr.To[int32](1)},
		{name: "missing claim", pod: podWith("p", "", "missing"), limit: ptr.To[int32](1), wantErr: `looking up PVC default/missing: persistentvolumeclaim "missing" not found`},
		{name: "ephemeral volume owned by the pod", pod: ephemeralPod("eph"), existing: []*corev1.Pod{podWith("e", "n", "csi-ebs-1")}, limit: ptr.To[int32](1), wantFilter: exceeded},
		{name: "ephemeral volume of another pod", pod: func() *corev1.Pod { p := ephemeralPod("eph"); p.UID = "other"; return p }(), limit: ptr.To[int32](1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pvcs, pvs, classes := fixtures()
			var csiNodes []*storagev1.CSINode
			if tt.limit != nil {
				csiNodes = append(csiNodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
					{Name: ebs, NodeID: "n", Allocatable: &storagev1.VolumeNodeResources{Count: tt.limit}}}}})
			}
			pl := &CSILimits{csiNodeLister: lister(csiNodes...), pvLister: lister(pvs...), pvcLister: lister(pvcs...), scLister: lister(classes...), randomVolumeIDPrefix: "r"}
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
			if tt.nodeLimit > 0 {
				node.Status.Allocatable = corev1.ResourceList{corev1.ResourceName(GetCSIAttachLimitKey(ebs)): *resource.NewQuantity(tt.nodeLimit, resource.DecimalSI)}
			}
			ni := framework.NewNodeInfo(tt.existing...)
			ni.SetNode(node)
			ctx := context.Background()
			state := framework.NewCycleState()
			if _, st := pl.PreFilter(ctx, state, tt.pod, nil); st.Code() != tt.wantPre {
				t.Fatalf("PreFilter = %v, want %v", st, tt.wantPre)
			}
			if tt.wantPre == framework.Skip {
				return
			}
			got := pl.Filter(ctx, state, tt.pod, ni)
			switch {
			case tt.wantErr != "":
				if got.Code() != framework.UnschedulableAndUnresolvable || got.Message() != tt.wantErr {
					t.Errorf("Filter = %v, want UnschedulableAndUnresolvable %q", got, tt.wantErr)
				}
			case tt.name == "ephemeral volume of another pod":
				if got.Code() != framework.Error || !strings.Contains(got.Message(), "was not created for pod default/eph (pod is not owner)") {
					t.Errorf("Filter = %v, want an ownership error", got)
				}
			case !got.Equal(tt.wantFilter):
				t.Errorf("Filter = %v, want %v", got, tt.wantFilter)
			}
		})
	}
}

func TestGetCSIAttachLimitKey(t *testing.T) {
	if got := GetCSIAttachLimitKey(ebs); got != "attachable-volumes-csi-ebs.csi.aws.com" {
		t.Errorf("key = %q", got)
	}
	long := strings.Repeat("d", 50) + ".example.com"
	got := GetCSIAttachLimitKey(long)
	if len(got) != len("attachable-volumes-csi-")+23+16 || !strings.HasPrefix(got, "attachable-volumes-csi-"+long[:23]) {
		t.Errorf("long key = %q", got)
	}
}

func TestHints(t *testing.T) {
	pl := &CSILimits{}
	pod := podWith("p", "", "c")
	for _, tt := range []struct {
		name     string
		fn       framework.QueueingHintFn
		old, new any
		want     framework.QueueingHint
	}{
		{"scheduled pod with claim deleted", pl.isSchedulableAfterPodDeleted, podWith("e", "n", "x"), nil, framework.Queue},
		{"unscheduled pod deleted", pl.isSchedulableAfterPodDeleted, podWith("e", "", "x"), nil, framework.QueueSkip},
		{"pod without volumes deleted", pl.isSchedulableAfterPodDeleted, podWith("e", "n"), nil, framework.QueueSkip},
		{"own claim added", pl.isSchedulableAfterPVCAdded, nil, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}, framework.Queue},
		{"other claim added", pl.isSchedulableAfterPVCAdded, nil, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}}, framework.QueueSkip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(nil, pod, tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
