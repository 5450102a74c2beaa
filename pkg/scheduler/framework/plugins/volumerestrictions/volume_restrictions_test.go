package volumerestrictions

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	schedcache "github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

func pvcLister(pvcs ...*corev1.PersistentVolumeClaim) cache.Lister[*corev1.PersistentVolumeClaim] {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range pvcs {
		_ = idx.Add(o)
	}
	return cache.NewLister[*corev1.PersistentVolumeClaim](idx, schema.GroupResource{Resource: "persistentvolumeclaims"})
}

func newPlugin(snapshot framework.SharedLister, pvcs ...*corev1.PersistentVolumeClaim) *VolumeRestrictions {
	return &VolumeRestrictions{pvcLister: pvcLister(pvcs...), sharedLister: func() framework.SharedLister { return snapshot }}
}

func podWithVolumes(node string, vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p-uid"}, Spec: corev1.PodSpec{NodeName: node, Volumes: vols}}
}

func runFilter(t *testing.T, pl *VolumeRestrictions, pod *corev1.Pod, ni *framework.NodeInfo) (*framework.Status, *framework.Status) {
	t.Helper()
	state := framework.NewCycleState()
	_, pre := pl.PreFilter(context.Background(), state, pod, nil)
	if !pre.IsSuccess() {
		return pre, nil
	}
	return pre, pl.Filter(context.Background(), state, pod, ni)
}

// Cases from upstream's TestGCEDiskConflicts, TestAWSDiskConflicts,
// TestRBDDiskConflicts and TestISCSIDiskConflicts.
func TestDiskConflicts(t *testing.T) {
	gce := func(name string, ro bool) corev1.Volume {
		return corev1.Volume{VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: ro}}}
	}
	aws := func(id string) corev1.Volume {
		return corev1.Volume{VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: id}}}
	}
	rbd := func(mons []string, image string, ro bool) corev1.Volume {
		return corev1.Volume{VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: mons, RBDPool: "foo", RBDImage: image, ReadOnly: ro}}}
	}
	iscsi := func(iqn string, ro bool) corev1.Volume {
		return corev1.Volume{VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "127.0.0.1:3260", IQN: iqn, ReadOnly: ro}}}
	}
	conflict := framework.NewStatus(framework.Unschedulable, ErrReasonDiskConflict)
	skip := framework.NewStatus(framework.Skip)
	for _, tt := range []struct {
		name       string
		pod        *corev1.Pod
		existing   []*corev1.Pod
		wantPre    *framework.Status
		wantFilter *framework.Status
	}{
		{name: "nothing", pod: podWithVolumes(""), wantPre: skip},
		{name: "one gce state", pod: podWithVolumes("", gce("foo", false)), existing: []*corev1.Pod{podWithVolumes("n", gce("bar", false))}},
		{name: "same gce state", pod: podWithVolumes("", gce("foo", false)), existing: []*corev1.Pod{podWithVolumes("n", gce("foo", false))}, wantFilter: conflict},
		{name: "same gce read-only", pod: podWithVolumes("", gce("foo", true)), existing: []*corev1.Pod{podWithVolumes("n", gce("foo", true))}},
		{name: "gce one read-only", pod: podWithVolumes("", gce("foo", true)), existing: []*corev1.Pod{podWithVolumes("n", gce("foo", false))}, wantFilter: conflict},
		{name: "different aws", pod: podWithVolumes("", aws("foo")), existing: []*corev1.Pod{podWithVolumes("n", aws("bar"))}},
		{name: "same aws", pod: podWithVolumes("", aws("foo")), existing: []*corev1.Pod{podWithVolumes("n", aws("foo"))}, wantFilter: conflict},
		{name: "rbd different monitors", pod: podWithVolumes("", rbd([]string{"a", "b"}, "bar", false)), existing: []*corev1.Pod{podWithVolumes("n", rbd([]string{"c", "d"}, "bar", false))}},
		{name: "rbd overlapping monitor", pod: podWithVolumes("", rbd([]string{"a", "b"}, "bar", false)), existing: []*corev1.Pod{podWithVolumes("n", rbd([]string{"b", "d"}, "bar", false))}, wantFilter: conflict},
		{name: "rbd other image", pod: podWithVolumes("", rbd([]string{"a"}, "bar", false)), existing: []*corev1.Pod{podWithVolumes("n", rbd([]string{"a"}, "baz", false))}},
		{name: "rbd read-only", pod: podWithVolumes("", rbd([]string{"a"}, "bar", true)), existing: []*corev1.Pod{podWithVolumes("n", rbd([]string{"a"}, "bar", true))}},
		{name: "iscsi different iqn", pod: podWithVolumes("", iscsi("iqn.2016-12.server:storage.target01", false)), existing: []*corev1.Pod{podWithVolumes("n", iscsi("iqn.2017-12.server:storage.target01", false))}},
		{name: "iscsi same iqn", pod: podWithVolumes("", iscsi("iqn.2016-12.server:storage.target01", false)), existing: []*corev1.Pod{podWithVolumes("n", iscsi("iqn.2016-12.server:storage.target01", false))}, wantFilter: conflict},
		{name: "iscsi same iqn read-only", pod: podWithVolumes("", iscsi("iqn.2016-12.server:storage.target01", true)), existing: []*corev1.Pod{podWithVolumes("n", iscsi("iqn.2016-12.server:storage.target01", true))}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ni := framework.NewNodeInfo(tt.existing...)
			ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
			pl := newPlugin(schedcache.NewSnapshot(tt.existing, nil))
			pre, filter := runFilter(t, pl, tt.pod, ni)
			if !pre.Equal(tt.wantPre) {
				t.Fatalf("PreFilter = %v, want %v", pre, tt.wantPre)
			}
			if !filter.Equal(tt.wantFilter) {
				t.Errorf("Filter = %v, want %v", filter, tt.wantFilter)
			}
		})
	}
}

// Cases from upstream's TestAccessModeConflicts.
func TestAccessModeConflicts(t *testing.T) {
	claimVol := func(claim string) corev1.Volume {
		return corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
	}
	pvc := func(name string, mode corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{mode}}}
	}
	rwop := pvc("claim-with-rwop-1", corev1.ReadWriteOncePod)
	rwop2 := pvc("claim-with-rwop-2", corev1.ReadWriteOncePod)
	rwo := pvc("claim-rwo", corev1.ReadWriteOnce)
	podWith := func(name, node string, claims ...string) *corev1.Pod {
		p := podWithVolumes(node)
		p.Name, p.UID = name, types.UID("uid-"+name)
		for _, c := range claims {
			p.Spec.Volumes = append(p.Spec.Volumes, claimVol(c))
		}
		return p
	}
	existing := podWith("existing", "node-1", rwop.Name)
	skip := framework.NewStatus(framework.Skip)
	for _, tt := range []struct {
		name       string
		pod        *corev1.Pod
		existing   []*corev1.Pod
		wantPre    *framework.Status
		wantFilter *framework.Status
	}{
		{name: "nothing", pod: podWith("p", ""), wantPre: skip},
		{name: "failed to get PVC", pod: podWith("p", "", "claim-missing"),
			wantPre: framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "claim-missing" not found`)},
		{name: "no access mode conflict", pod: podWith("p", "", rwop2.Name), existing: []*corev1.Pod{existing}, wantPre: skip},
		{name: "access mode conflict, unschedulable", pod: podWith("p", "", rwop.Name, rwop2.Name), existing: []*corev1.Pod{existing},
			wantFilter: framework.NewStatus(framework.Unschedulable, ErrReasonReadWriteOncePodConflict)},
		{name: "rwo claim in use", pod: podWith("p", "", rwo.Name), existing: []*corev1.Pod{podWith("other", "node-1", rwo.Name)}, wantPre: skip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ni := framework.NewNodeInfo()
			ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
			pl := newPlugin(schedcache.NewSnapshot(tt.existing, []*corev1.Node{ni.Node()}), rwop, rwop2, rwo)
			pre, filter := runFilter(t, pl, tt.pod, ni)
			if !pre.Equal(tt.wantPre) {
				t.Fatalf("PreFilter = %v, want %v", pre, tt.wantPre)
			}
			if !filter.Equal(tt.wantFilter) {
				t.Errorf("Filter = %v, want %v", filter, tt.wantFilter)
			}
		})
	}
}

// Preemption's simulation: removing the pod holding the claim clears the
// conflict, adding it back restores it.
func TestAddRemovePod(t *testing.T) {
	rwop := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}}}
	vol := corev1.Volume{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}
	holder := podWithVolumes("n", vol)
	pod := podWithVolumes("", vol)
	ni := framework.NewNodeInfo(holder)
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	pl := newPlugin(schedcache.NewSnapshot([]*corev1.Pod{holder}, []*corev1.Node{ni.Node()}), rwop)
	ctx := context.Background()
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter = %v", st)
	}
	if st := pl.Filter(ctx, state, pod, ni); st.Code() != framework.Unschedulable {
		t.Fatalf("Filter = %v, want Unschedulable", st)
	}
	clone := state.Clone()
	if st := pl.RemovePod(ctx, clone, pod, framework.NewPodInfo(holder), ni); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := pl.Filter(ctx, clone, pod, ni); !st.IsSuccess() {
		t.Errorf("Filter after RemovePod = %v, want Success", st)
	}
	if st := pl.Filter(ctx, state, pod, ni); st.Code() != framework.Unschedulable {
		t.Errorf("original state changed by the clone: %v", st)
	}
	_ = pl.AddPod(ctx, clone, pod, framework.NewPodInfo(holder), ni)
	if st := pl.Filter(ctx, clone, pod, ni); st.Code() != framework.Unschedulable {
		t.Errorf("Filter after AddPod = %v, want Unschedulable", st)
	}
}

func TestEventsHints(t *testing.T) {
	pl := newPlugin(nil)
	vol := corev1.Volume{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}
	pod := podWithVolumes("", vol)
	gce := corev1.Volume{VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "d"}}}
	for _, tt := range []struct {
		name string
		fn   framework.QueueingHintFn
		pod  *corev1.Pod
		old  any
		new  any
		want framework.QueueingHint
	}{
		{"own claim added", pl.isSchedulableAfterPersistentVolumeClaimAdded, pod, nil, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}, framework.Queue},
		{"other claim added", pl.isSchedulableAfterPersistentVolumeClaimAdded, pod, nil, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}}, framework.QueueSkip},
		{"claim of another namespace", pl.isSchedulableAfterPersistentVolumeClaimAdded, pod, nil, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "other"}}, framework.QueueSkip},
		{"deleted pod with the same claim", pl.isSchedulableAfterPodDeleted, pod, podWithVolumes("n", vol), nil, framework.Queue},
		{"deleted pod with the same disk", pl.isSchedulableAfterPodDeleted, podWithVolumes("", gce), podWithVolumes("n", gce), nil, framework.Queue},
		{"deleted unrelated pod", pl.isSchedulableAfterPodDeleted, pod, podWithVolumes("n"), nil, framework.QueueSkip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(nil, tt.pod, tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
