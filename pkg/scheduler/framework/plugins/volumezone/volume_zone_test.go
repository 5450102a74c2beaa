package volumezone

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

func pv(name string, labels map[string]string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func pvc(name, volume string, class *string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume, StorageClassName: class}}
}

func podWithClaims(claims ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func nodeInfo(labels map[string]string) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "host1", Labels: labels}})
	return ni
}

func newPlugin() *VolumeZone {
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	immediate := storagev1.VolumeBindingImmediate
	return &VolumeZone{
		pvLister: lister(
			pv("Vol_1", map[string]string{corev1.LabelFailureDomainBetaZone: "us-west1-a"}),
			pv("Vol_2", map[string]string{corev1.LabelFailureDomainBetaRegion: "us-west1-b", "uselessLabel": "none"}),
			pv("Vol_3", map[string]string{corev1.LabelFailureDomainBetaRegion: "us-west1-c"}),
			pv("Vol_Stable_1", map[string]string{corev1.LabelTopologyZone: "us-west1-a"}),
			pv("Vol_Stable_2", map[string]string{corev1.LabelTopologyRegion: "us-west1-b", "uselessLabel": "none"}),
			pv("Vol_multi", map[string]string{corev1.LabelTopologyZone: "us-west1-a__us-west1-b"}),
			pv("Vol_bad", map[string]string{corev1.LabelTopologyZone: "us-west1-a____"}),
		),
		pvcLister: lister(
			pvc("PVC_1", "Vol_1", nil), pvc("PVC_2", "Vol_2", nil), pvc("PVC_3", "Vol_3", nil),
			pvc("PVC_4", "Vol_not_exist", nil),
			pvc("PVC_Stable_1", "Vol_Stable_1", nil), pvc("PVC_Stable_2", "Vol_Stable_2", nil),
			pvc("PVC_multi", "Vol_multi", nil), pvc("PVC_bad", "Vol_bad", nil),
			pvc("PVC_NoSC", "", ptr.To("Class_0")),
			pvc("PVC_EmptySC", "", nil),
			pvc("PVC_WaitSC", "", ptr.To("Class_Wait")),
			pvc("PVC_ImmediateSC", "", ptr.To("Class_Immediate")),
			pvc("PVC_NilMode", "", ptr.To("Class_NilMode")),
		),
		scLister: lister(
			&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "Class_Wait"}, VolumeBindingMode: &wait},
			&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "Class_Immediate"}, VolumeBindingMode: &immediate},
			&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "Class_NilMode"}},
		),
	}
}

// Cases from upstream's TestSingleZone, TestMultiZone and
// TestWithBinding.
func TestFilter(t *testing.T) {
	conflict := framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
	unresolvable := func(msg string) *framework.Status {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, msg)
	}
	skip := framework.NewStatus(framework.Skip)
	for _, tt := range []struct {
		name       string
		pod        *corev1.Pod
		node       map[string]string
		wantPre    *framework.Status
		wantFilter *framework.Status
	}{
		{name: "pod without volume", pod: podWithClaims(), node: map[string]string{corev1.LabelFailureDomainBetaZone: "us-west1-a"}, wantPre: skip},
		{name: "node without labels", pod: podWithClaims("PVC_1"), node: nil},
		{name: "beta zone label matched", pod: podWithClaims("PVC_1"), node: map[string]string{corev1.LabelFailureDomainBetaZone: "us-west1-a", "uselessLabel": "none"}},
		{name: "beta region label matched", pod: podWithClaims("PVC_2"), node: map[string]string{corev1.LabelFailureDomainBetaRegion: "us-west1-b", "uselessLabel": "none"}},
		{name: "beta region label doesn't match", pod: podWithClaims("PVC_2"), node: map[string]string{corev1.LabelFailureDomainBetaRegion: "no_us-west1-b"}, wantFilter: conflict},
		{name: "beta zone label doesn't match", pod: podWithClaims("PVC_1"), node: map[string]string{corev1.LabelFailureDomainBetaZone: "no_us-west1-a"}, wantFilter: conflict},
		{name: "zone label matched", pod: podWithClaims("PVC_Stable_1"), node: map[string]string{corev1.LabelTopologyZone: "us-west1-a"}},
		{name: "region label doesn't match", pod: podWithClaims("PVC_Stable_2"), node: map[string]string{corev1.LabelTopologyRegion: "no_us-west1-b"}, wantFilter: conflict},
		{name: "pv with zone label matches the node's GA label (beta on pv)", pod: podWithClaims("PVC_1"), node: map[string]string{corev1.LabelTopologyZone: "us-west1-a"}},
		{name: "multi-zone volume, node in one", pod: podWithClaims("PVC_multi"), node: map[string]string{corev1.LabelTopologyZone: "us-west1-b"}},
		{name: "multi-zone volume, node elsewhere", pod: podWithClaims("PVC_multi"), node: map[string]string{corev1.LabelTopologyZone: "us-west1-c"}, wantFilter: conflict},
		{name: "unparsable label ignored", pod: podWithClaims("PVC_bad"), node: map[string]string{corev1.LabelTopologyZone: "us-west1-c"}, wantPre: skip},
		{name: "label zone failure domain matched", pod: podWithClaims("PVC_1", "PVC_2"), node: map[string]string{corev1.LabelFailureDomainBetaZone: "us-west1-a", corev1.LabelFailureDomainBetaRegion: "us-west1-b"}},
		{name: "label zone failure domain doesn't match one volume", pod: podWithClaims("PVC_1", "PVC_3"), node: map[string]string{corev1.LabelFailureDomainBetaZone: "us-west1-a", corev1.LabelFailureDomainBetaRegion: "us-west1-b"}, wantFilter: conflict},
		// TestWithBinding
		{name: "missing claim", pod: podWithClaims("PVC_missing"), wantPre: unresolvable(`persistentvolumeclaim "PVC_missing" not found`)},
		{name: "missing volume", pod: podWithClaims("PVC_4"), wantPre: unresolvable(`persistentvolume "Vol_not_exist" not found`)},
		{name: "claim with missing class", pod: podWithClaims("PVC_NoSC"), wantPre: unresolvable(`storageclass.storage.k8s.io "Class_0" not found`)},
		{name: "claim without volume or class", pod: podWithClaims("PVC_EmptySC"), wantPre: unresolvable("PersistentVolumeClaim had no pv name and storageClass name")},
		{name: "unbound claim of a WaitForFirstConsumer class", pod: podWithClaims("PVC_WaitSC"), wantPre: skip},
		{name: "unbound claim of an Immediate class", pod: podWithClaims("PVC_ImmediateSC"), wantPre: unresolvable("PersistentVolume had no name")},
		{name: "class without binding mode", pod: podWithClaims("PVC_NilMode"), wantPre: unresolvable(`VolumeBindingMode not set for StorageClass "Class_NilMode"`)},
		{name: "claim without name", pod: podWithClaims(""), wantPre: unresolvable("PersistentVolumeClaim had no name")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl := newPlugin()
			state := framework.NewCycleState()
			_, pre := pl.PreFilter(context.Background(), state, tt.pod, nil)
			if !pre.Equal(tt.wantPre) {
				t.Fatalf("PreFilter = %v, want %v", pre, tt.wantPre)
			}
			if !pre.IsSuccess() {
				return
			}
			if got := pl.Filter(context.Background(), state, tt.pod, nodeInfo(tt.node)); !got.Equal(tt.wantFilter) {
				t.Errorf("Filter = %v, want %v", got, tt.wantFilter)
			}
		})
	}
}

func TestHints(t *testing.T) {
	pl := newPlugin()
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	pod := podWithClaims("PVC_1")
	for _, tt := range []struct {
		name     string
		fn       framework.QueueingHintFn
		old, new any
		want     framework.QueueingHint
	}{
		{"own claim updated", pl.isSchedulableAfterPersistentVolumeClaimChange, nil, pvc("PVC_1", "", nil), framework.Queue},
		{"other claim", pl.isSchedulableAfterPersistentVolumeClaimChange, nil, pvc("PVC_2", "", nil), framework.QueueSkip},
		{"WaitForFirstConsumer class added", pl.isSchedulableAfterStorageClassAdded, nil, &storagev1.StorageClass{VolumeBindingMode: &wait}, framework.Queue},
		{"Immediate class added", pl.isSchedulableAfterStorageClassAdded, nil, &storagev1.StorageClass{}, framework.QueueSkip},
		{"new pv", pl.isSchedulableAfterPersistentVolumeChange, nil, pv("v", nil), framework.Queue},
		{"pv zone changed", pl.isSchedulableAfterPersistentVolumeChange, pv("v", map[string]string{corev1.LabelTopologyZone: "a"}), pv("v", map[string]string{corev1.LabelTopologyZone: "b"}), framework.Queue},
		{"pv other label changed", pl.isSchedulableAfterPersistentVolumeChange, pv("v", map[string]string{"x": "a"}), pv("v", map[string]string{"x": "b"}), framework.QueueSkip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(nil, pod, tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
