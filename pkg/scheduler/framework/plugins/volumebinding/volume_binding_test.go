package volumebinding

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	dto "github.com/prometheus/client_model/go"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
)

func indexer[T runtime.Object](objs ...T) cache.Indexer {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = idx.Add(o)
	}
	return idx
}

func lister[T runtime.Object](objs ...T) cache.Lister[T] {
	return cache.NewLister[T](indexer(objs...), schema.GroupResource{})
}

var (
	waitMode      = storagev1.VolumeBindingWaitForFirstConsumer
	immediateMode = storagev1.VolumeBindingImmediate

	immediateSC   = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "immediate-sc"}, VolumeBindingMode: &immediateMode}
	waitSC        = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "wait-sc"}, VolumeBindingMode: &waitMode, Provisioner: "kubernetes.io/no-provisioner"}
	provisionedSC = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-path"}, VolumeBindingMode: &waitMode, Provisioner: "skiff.io/local-path"}
	zonedSC       = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "zoned"}, VolumeBindingMode: &waitMode, Provisioner: "skiff.io/local-path",
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelTopologyZone, Values: []string{"zone-a"}}}}}}
	csiSC      = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "csi-sc"}, VolumeBindingMode: &waitMode, Provisioner: "csi.example.com"}
	csiNoCapSC = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "csi-nocap"}, VolumeBindingMode: &waitMode, Provisioner: "nocap.example.com"}
	csiDrivers = []*storagev1.CSIDriver{
		{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "nocap.example.com"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(false)}},
	}
	capacities = []*storagev1.CSIStorageCapacity{
		{ObjectMeta: metav1.ObjectMeta{Name: "cap-a", Namespace: "kube-system"}, StorageClassName: "csi-sc", Capacity: ptr.To(resource.MustParse("10Gi")),
			NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{"node-label": "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cap-b-unavailable", Namespace: "kube-system"}, StorageClassName: "csi-sc", Capacity: ptr.To(resource.MustParse("100Gi"))},
	}
)

type pvcB struct{ *corev1.PersistentVolumeClaim }

func makePVC(name, class string) pvcB {
	return pvcB{&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}
}

func (p pvcB) bound(pv string) pvcB {
	p.Spec.VolumeName = pv
	p.Annotations = map[string]string{AnnBindCompleted: "yes"}
	p.Status.Phase = corev1.ClaimBound
	return p
}

func (p pvcB) request(q string) pvcB {
	p.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(q)
	return p
}

func (p pvcB) selectedNode(n string) pvcB {
	p.Annotations = map[string]string{AnnSelectedNode: n}
	return p
}

type pvB struct{ *corev1.PersistentVolume }

func makePV(name, class string) pvB {
	return pvB{&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}}}
}

func (p pvB) onNode(key, value string) pvB {
	p.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}}}}}}
	return p
}

func (p pvB) capacity(q string) pvB {
	p.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse(q)
	return p
}

func (p pvB) boundTo(c pvcB) pvB {
	p.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, UID: c.UID}
	p.Status.Phase = corev1.VolumeBound
	return p
}

func podWith(claims ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-a", Namespace: "default", UID: "pod-a-uid"}}
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func makeNode(name string, labels map[string]string) *corev1.Node {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[corev1.LabelHostname] = name
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func newTestPlugin(pvcs []pvcB, pvs []pvB) *VolumeBinding {
	var claims []*corev1.PersistentVolumeClaim
	for _, c := range pvcs {
		claims = append(claims, c.PersistentVolumeClaim)
	}
	var vols []*corev1.PersistentVolume
	for _, v := range pvs {
		vols = append(vols, v.PersistentVolume)
	}
	b := &binder{
		pvcCache:        newAssumeCache(lister(claims...), helper.PersistentVolumeClaimResource),
		pvCache:         newAssumeCache(lister(vols...), helper.PersistentVolumeResource),
		classLister:     lister(immediateSC, waitSC, provisionedSC, zonedSC, csiSC, csiNoCapSC),
		csiDriverLister: lister(csiDrivers...),
		capacityLister:  lister(capacities...),
		podLister:       lister[*corev1.Pod](),
		nodeLister:      lister[*corev1.Node](),
		clock:           clock.Real{},
		bindTimeout:     time.Minute,
		pollInterval:    time.Second,
	}
	return newWithBinder(b)
}

// Cases from upstream's TestVolumeBinding (without scoring) plus the
// provisioning paths.
func TestVolumeBinding(t *testing.T) {
	unresolvable := func(reasons ...string) *framework.Status {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...)
	}
	nodeA := makeNode("node-a", map[string]string{"node-label": "a", corev1.LabelTopologyZone: "zone-a"})
	nodeB := makeNode("node-b", map[string]string{"node-label": "b", corev1.LabelTopologyZone: "zone-b"})
	for _, tt := range []struct {
		name       string
		pod        *corev1.Pod
		pvcs       []pvcB
		pvs        []pvB
		wantPre    *framework.Status
		wantFilter map[string]*framework.Status
		// what Reserve on node-a assumes
		wantBinding   map[string]string // pv → claim
		wantProvision []string
	}{
		{name: "pod has no pvcs", pod: podWith(), wantPre: framework.NewStatus(framework.Skip)},
		{name: "all bound", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name).bound("pv-a")}, pvs: []pvB{makePV("pv-a", waitSC.Name).boundTo(makePVC("pvc-a", waitSC.Name))},
			wantFilter: map[string]*framework.Status{"node-a": nil, "node-b": nil}},
		{name: "PVC does not exist", pod: podWith("pvc-a"), wantPre: unresolvable(`persistentvolumeclaim "pvc-a" not found`)},
		{name: "part of PVCs do not exist", pod: podWith("pvc-a", "pvc-b"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name).bound("pv-a")},
			wantPre: unresolvable(`persistentvolumeclaim "pvc-b" not found`)},
		{name: "immediate claims not bound", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", immediateSC.Name)}, wantPre: unresolvable(ErrReasonUnboundImmediate)},
		{name: "claim of a missing class counts as immediate", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", "no-such-class")}, wantPre: unresolvable(ErrReasonUnboundImmediate)},
		{name: "pre-bound claim not bound yet is immediate", pod: podWith("pvc-a"), pvcs: []pvcB{func() pvcB { c := makePVC("pvc-a", waitSC.Name); c.Spec.VolumeName = "pv-a"; return c }()},
			wantPre: unresolvable(ErrReasonUnboundImmediate)},
		{name: "lost claim", pod: podWith("pvc-a"), pvcs: []pvcB{func() pvcB {
			c := makePVC("pvc-a", waitSC.Name).bound("pv-x")
			c.Status.Phase = corev1.ClaimLost
			return c
		}()},
			wantPre: unresolvable(`persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-x"`)},
		{name: "claim being deleted", pod: podWith("pvc-a"), pvcs: []pvcB{func() pvcB { c := makePVC("pvc-a", waitSC.Name); c.DeletionTimestamp = &metav1.Time{}; return c }()},
			wantPre: unresolvable(`persistentvolumeclaim "pvc-a" is being deleted`)},
		{name: "unbound claim with a matching volume on node-a", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name)},
			pvs:         []pvB{makePV("pv-a", waitSC.Name).onNode("node-label", "a")},
			wantFilter:  map[string]*framework.Status{"node-a": nil, "node-b": unresolvable(ErrReasonBindConflict)},
			wantBinding: map[string]string{"pv-a": "pvc-a"}},
		{name: "smallest fitting volume chosen", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name).request("5Gi")},
			pvs:        []pvB{makePV("pv-small", waitSC.Name).capacity("1Gi"), makePV("pv-big", waitSC.Name).capacity("100Gi"), makePV("pv-fit", waitSC.Name).capacity("10Gi")},
			wantFilter: map[string]*framework.Status{"node-a": nil, "node-b": nil}, wantBinding: map[string]string{"pv-fit": "pvc-a"}},
		{name: "two claims do not take the same volume", pod: podWith("pvc-a", "pvc-b"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name), makePVC("pvc-b", waitSC.Name)},
			pvs:        []pvB{makePV("pv-a", waitSC.Name)},
			wantFilter: map[string]*framework.Status{"node-a": unresolvable(ErrReasonBindConflict)}},
		{name: "volume of another class, access mode or bound elsewhere does not match", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name)},
			pvs: []pvB{makePV("pv-other-class", provisionedSC.Name),
				func() pvB {
					v := makePV("pv-rox", waitSC.Name)
					v.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
					return v
				}(),
				makePV("pv-taken", waitSC.Name).boundTo(makePVC("other", waitSC.Name))},
			wantFilter: map[string]*framework.Status{"node-a": unresolvable(ErrReasonBindConflict)}},
		{name: "volume pre-bound to the claim wins", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name)},
			pvs: []pvB{makePV("pv-free", waitSC.Name), func() pvB {
				v := makePV("pv-pre", waitSC.Name).capacity("10Gi")
				v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "pvc-a"}
				return v
			}()},
			wantFilter: map[string]*framework.Status{"node-a": nil}, wantBinding: map[string]string{"pv-pre": "pvc-a"}},
		{name: "bound and unbound unsatisfied", pod: podWith("pvc-a", "pvc-b"),
			pvcs: []pvcB{makePVC("pvc-a", waitSC.Name).bound("pv-a"), makePVC("pvc-b", waitSC.Name)},
			pvs:  []pvB{makePV("pv-a", waitSC.Name).onNode("node-label", "b").boundTo(makePVC("pvc-a", waitSC.Name)), makePV("pv-b", waitSC.Name).onNode("node-label", "b")},
			wantFilter: map[string]*framework.Status{
				"node-a": unresolvable(ErrReasonNodeConflict, ErrReasonBindConflict),
				"node-b": nil,
			}},
		{name: "pv not found", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name).bound("pv-a")},
			wantFilter: map[string]*framework.Status{"node-a": unresolvable(ErrReasonPVNotExist)}},
		{name: "dynamic provisioning", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", provisionedSC.Name)},
			wantFilter: map[string]*framework.Status{"node-a": nil, "node-b": nil}, wantProvision: []string{"pvc-a"}},
		{name: "provisioning restricted by allowed topologies", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", zonedSC.Name)},
			wantFilter: map[string]*framework.Status{"node-a": nil, "node-b": unresolvable(ErrReasonBindConflict)}, wantProvision: []string{"pvc-a"}},
		{name: "storage capacity: enough on node-a only", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", csiSC.Name).request("5Gi")},
			wantFilter: map[string]*framework.Status{"node-a": nil, "node-b": unresolvable(ErrReasonNotEnoughSpace)}, wantProvision: []string{"pvc-a"}},
		{name: "storage capacity: request larger than any", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", csiSC.Name).request("50Gi")},
			wantFilter: map[string]*framework.Status{"node-a": unresolvable(ErrReasonNotEnoughSpace)}},
		{name: "storage capacity not tracked by the driver", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", csiNoCapSC.Name).request("500Gi")},
			wantFilter: map[string]*framework.Status{"node-a": nil}, wantProvision: []string{"pvc-a"}},
		{name: "no-provisioner class without volumes", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", waitSC.Name)},
			wantFilter: map[string]*framework.Status{"node-a": unresolvable(ErrReasonBindConflict)}},
		{name: "claim already handed to node-b's provisioner", pod: podWith("pvc-a"), pvcs: []pvcB{makePVC("pvc-a", provisionedSC.Name).selectedNode("node-b")},
			wantFilter: map[string]*framework.Status{"node-a": unresolvable(ErrReasonBindConflict), "node-b": nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl := newTestPlugin(tt.pvcs, tt.pvs)
			ctx := context.Background()
			state := framework.NewCycleState()
			_, pre := pl.PreFilter(ctx, state, tt.pod, nil)
			if !pre.Equal(tt.wantPre) {
				t.Fatalf("PreFilter = %v, want %v", pre, tt.wantPre)
			}
			if !pre.IsSuccess() {
				return
			}
			for _, n := range []*corev1.Node{nodeA, nodeB} {
				want, ok := tt.wantFilter[n.Name]
				if !ok {
					continue
				}
				ni := framework.NewNodeInfo()
				ni.SetNode(n)
				if got := pl.Filter(ctx, state, tt.pod, ni); !got.Equal(want) {
					t.Errorf("Filter(%s) = %v, want %v", n.Name, got, want)
				}
			}
			if tt.wantFilter["node-a"] != nil {
				return
			}
			if st := pl.Reserve(ctx, state, tt.pod, "node-a"); !st.IsSuccess() {
				t.Fatalf("Reserve = %v", st)
			}
			s, _ := getStateData(state)
			if s.allBound != (tt.wantBinding == nil && tt.wantProvision == nil) {
				t.Errorf("allBound = %v", s.allBound)
			}
			for pvName, claimName := range tt.wantBinding {
				got, err := pl.binder.pvCache.get("", pvName)
				if err != nil || got.Spec.ClaimRef == nil || got.Spec.ClaimRef.Name != claimName || got.Spec.ClaimRef.UID != types.UID(claimName+"-uid") {
					t.Errorf("assumed %s = %+v, %v; want bound to %s", pvName, got, err, claimName)
				}
			}
			for _, c := range tt.wantProvision {
				got, _ := pl.binder.pvcCache.get("default", c)
				if got.Annotations[AnnSelectedNode] != "node-a" {
					t.Errorf("assumed claim %s annotations = %v, want selected-node node-a", c, got.Annotations)
				}
			}
			pl.Unreserve(ctx, state, tt.pod, "node-a")
			for pvName := range tt.wantBinding {
				if got, _ := pl.binder.pvCache.get("", pvName); got.Spec.ClaimRef != nil && got.Spec.ClaimRef.UID != "" && got.Spec.ClaimRef.Name == "pvc-a" && pvName != "pv-pre" {
					t.Errorf("Unreserve left %s bound: %+v", pvName, got.Spec.ClaimRef)
				}
			}
			for _, c := range tt.wantProvision {
				if got, _ := pl.binder.pvcCache.get("default", c); got.Annotations[AnnSelectedNode] != "" {
					t.Errorf("Unreserve left claim %s with selected-node", c)
				}
			}
		})
	}
}

// A second pod of the same cycle sees the volume the first one took.
func TestAssumedVolumeNotReused(t *testing.T) {
	pl := newTestPlugin([]pvcB{makePVC("pvc-a", waitSC.Name), makePVC("pvc-b", waitSC.Name)}, []pvB{makePV("pv-a", waitSC.Name)})
	ctx := context.Background()
	ni := framework.NewNodeInfo()
	ni.SetNode(makeNode("node-a", nil))
	first, second := podWith("pvc-a"), podWith("pvc-b")
	s1 := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, s1, first, nil); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := pl.Filter(ctx, s1, first, ni); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := pl.Reserve(ctx, s1, first, "node-a"); !st.IsSuccess() {
		t.Fatal(st)
	}
	s2 := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, s2, second, nil); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := pl.Filter(ctx, s2, second, ni); !st.Equal(framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonBindConflict)) {
		t.Errorf("second pod's Filter = %v, want the bind conflict", st)
	}
	pl.Unreserve(ctx, s1, first, "node-a")
	s3 := framework.NewCycleState()
	_, _ = pl.PreFilter(ctx, s3, second, nil)
	if st := pl.Filter(ctx, s3, second, ni); !st.IsSuccess() {
		t.Errorf("after Unreserve the volume is free again: %v", st)
	}
}

func TestAssumeCacheGivesWayToNewerObjects(t *testing.T) {
	pv := makePV("pv-a", "c").PersistentVolume
	idx := indexer(pv)
	c := newAssumeCache(cache.NewLister[*corev1.PersistentVolume](idx, schema.GroupResource{}), helper.PersistentVolumeResource)
	assumed := pv.DeepCopy()
	assumed.Spec.ClaimRef = &corev1.ObjectReference{Name: "x"}
	if err := c.assume(assumed); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.get("", "pv-a"); got.Spec.ClaimRef == nil {
		t.Fatal("assumed object not returned")
	}
	newer := pv.DeepCopy()
	newer.ResourceVersion = "2"
	_ = idx.Update(newer)
	if got, _ := c.get("", "pv-a"); got.Spec.ClaimRef != nil || got.ResourceVersion != "2" {
		t.Errorf("get = %+v, want the informer's newer object", got)
	}
	stale := pv.DeepCopy() // RV 1 < 2
	if err := c.assume(stale); err == nil {
		t.Error("assuming a stale object succeeded")
	}
}

func TestHints(t *testing.T) {
	pl := &VolumeBinding{}
	pod := podWith("pvc-a")
	topo := func(zone string) []corev1.TopologySelectorTerm {
		return []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "zone", Values: []string{zone}}}}}
	}
	for _, tt := range []struct {
		name     string
		fn       framework.QueueingHintFn
		old, new any
		want     framework.QueueingHint
	}{
		{"own claim", pl.isSchedulableAfterPersistentVolumeClaimChange, nil, makePVC("pvc-a", "c").PersistentVolumeClaim, framework.Queue},
		{"other claim", pl.isSchedulableAfterPersistentVolumeClaimChange, nil, makePVC("pvc-b", "c").PersistentVolumeClaim, framework.QueueSkip},
		{"new class", pl.isSchedulableAfterStorageClassChange, nil, &storagev1.StorageClass{}, framework.Queue},
		{"class topology changed", pl.isSchedulableAfterStorageClassChange, &storagev1.StorageClass{AllowedTopologies: topo("a")}, &storagev1.StorageClass{AllowedTopologies: topo("b")}, framework.Queue},
		{"class unchanged topology", pl.isSchedulableAfterStorageClassChange, &storagev1.StorageClass{AllowedTopologies: topo("a")}, &storagev1.StorageClass{AllowedTopologies: topo("a"), Parameters: map[string]string{"x": "y"}}, framework.QueueSkip},
		{"new CSINode", pl.isSchedulableAfterCSINodeChange, nil, &storagev1.CSINode{}, framework.Queue},
		{"CSINode unchanged migration", pl.isSchedulableAfterCSINodeChange, &storagev1.CSINode{}, &storagev1.CSINode{}, framework.QueueSkip},
		{"new capacity", pl.isSchedulableAfterCSIStorageCapacityChange, nil, &storagev1.CSIStorageCapacity{}, framework.Queue},
		{"capacity grew", pl.isSchedulableAfterCSIStorageCapacityChange, &storagev1.CSIStorageCapacity{Capacity: ptr.To(resource.MustParse("1Gi"))}, &storagev1.CSIStorageCapacity{Capacity: ptr.To(resource.MustParse("2Gi"))}, framework.Queue},
		{"capacity shrank", pl.isSchedulableAfterCSIStorageCapacityChange, &storagev1.CSIStorageCapacity{Capacity: ptr.To(resource.MustParse("2Gi"))}, &storagev1.CSIStorageCapacity{Capacity: ptr.To(resource.MustParse("1Gi"))}, framework.QueueSkip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(nil, pod, tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// A Reserve that cannot assume (the volume changed since Filter) fails
// and counts in scheduler_volume_scheduling_stage_error_total{assume}.
func TestReserveOutOfSyncCountsAssumeError(t *testing.T) {
	pl := newTestPlugin([]pvcB{makePVC("pvc-a", waitSC.Name)}, []pvB{makePV("pv-a", waitSC.Name)})
	ctx := context.Background()
	pod := podWith("pvc-a")
	ni := framework.NewNodeInfo()
	ni.SetNode(makeNode("node-a", nil))
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := pl.Filter(ctx, state, pod, ni); !st.IsSuccess() {
		t.Fatal(st)
	}
	// The informer now holds a newer version of the volume.
	newer := makePV("pv-a", waitSC.Name).PersistentVolume
	newer.ResourceVersion = "7"
	pl.binder.pvCache = newAssumeCache(lister(newer), helper.PersistentVolumeResource)
	before := counterValue(t, "assume")
	if st := pl.Reserve(ctx, state, pod, "node-a"); st.Code() != framework.Error {
		t.Fatalf("Reserve = %v, want an Error", st)
	}
	if got := counterValue(t, "assume"); got != before+1 {
		t.Errorf("assume errors = %v, want %v", got, before+1)
	}
}

func counterValue(t *testing.T, op string) float64 {
	t.Helper()
	var m dto.Metric
	if err := stageFailed.WithLabelValues(op).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
