package compat

// Volume scheduling, skiff's scheduler against upstream's: the same
// cluster (two nodes, storage classes, volumes, claims, pods) is built
// on two in-process skiff API servers with skiff's PV binder and
// local-path provisioner; on one upstream's kube-scheduler 1.34 runs, on
// the other skiff's. Each pod must end on the same node, or stay pending
// with the same message ("0/2 nodes are available: ... preemption: ...").

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/scheduler"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// volumeOutcome is where a pod went: "node:<name>" or "pending:<reasons>".
type volumeOutcome map[string]string

var volumePods = []string{"missing-claim", "immediate", "static", "affinity-conflict", "no-volume", "zone", "rwop", "provisioned", "zone-provisioned",
	"disk-conflict", "volume-limit", "dra-allocated", "dra-unallocated"}

func TestVolumeSchedulingMatchesUpstream(t *testing.T) {
	bin := upstreamBinaries(t)
	upstream := runVolumeScenario(t, func(t *testing.T, env *testenv.Environment) {
		startProc(t, filepath.Join(bin, "kube-scheduler"), "--kubeconfig", env.KubeconfigPath,
			"--authentication-kubeconfig", env.KubeconfigPath, "--authorization-kubeconfig", env.KubeconfigPath,
			"--leader-elect=false", "--secure-port", strconv.Itoa(freeTCPPort(t)), "--bind-address=127.0.0.1")
	}, nil)
	// skiff's scheduler starts, as upstream's, once the scenario is set
	// up: started with the environment, its informers could see a pod
	// before the volume it needs, and the first (recorded) outcome would
	// be "pending" where upstream's, which starts with everything in its
	// caches, binds.
	skiff := runVolumeScenario(t, func(t *testing.T, env *testenv.Environment) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- scheduler.InProcess(nil, scheduler.Config{})(ctx, env.KubeconfigPath) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("scheduler: %v", err)
			}
		})
	}, nil)
	// Both nodes fit the local-path pod equally: the schedulers break the
	// tie at random.
	for _, out := range []volumeOutcome{upstream, skiff} {
		if strings.HasPrefix(out["provisioned"], "node:") {
			out["provisioned"] = "node:any"
		}
	}
	// A claim nobody allocated: upstream allocates devices from
	// ResourceSlices (there are none here); skiff does not allocate and
	// says so.
	if !strings.Contains(skiff["dra-unallocated"], "skiff cannot allocate devices yet") {
		t.Errorf("pod dra-unallocated: skiff %q, want skiff's own reason", skiff["dra-unallocated"])
	}
	t.Logf("pod dra-unallocated: skiff %q, upstream %q", skiff["dra-unallocated"], upstream["dra-unallocated"])
	delete(skiff, "dra-unallocated")
	delete(upstream, "dra-unallocated")
	for _, p := range volumePods {
		if p == "dra-unallocated" {
			continue
		}
		if upstream[p] != skiff[p] {
			t.Errorf("pod %s: skiff %q, upstream %q", p, skiff[p], upstream[p])
		} else {
			t.Logf("pod %s: %s", p, skiff[p])
		}
	}
}

func runVolumeScenario(t *testing.T, start func(*testing.T, *testenv.Environment), inProcess func(context.Context, string) error) volumeOutcome {
	t.Helper()
	env := testenv.StartT(t, testenv.Config{
		ControllerManager: controllermanager.InProcess(controllermanager.Config{
			Controllers: []string{"persistentvolume-binder-controller", "skiff-local-path-provisioner", "serviceaccount-controller", "serviceaccount-token-controller"},
			LocalPath:   controllermanager.LocalPathConfig{StorageDir: filepath.Join(t.TempDir(), "storage")},
		}),
		Scheduler: inProcess,
	})
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	cs := clientset(t, restConfig(t, env))
	for i, name := range []string{"node-1", "node-2"} {
		res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
		n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname: name, corev1.LabelTopologyZone: "zone-" + string(rune('b'+i))}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}}
		if n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		n.Spec.Taints = nil // no node lifecycle controller here
		if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wait, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "local-storage"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wait},
		{ObjectMeta: metav1.ObjectMeta{Name: "local-storage-empty"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wait},
		{ObjectMeta: metav1.ObjectMeta{Name: "manual"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &immediate},
		{ObjectMeta: metav1.ObjectMeta{Name: "zoned-local-path"}, Provisioner: "skiff.io/local-path", VolumeBindingMode: &wait,
			AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelTopologyZone, Values: []string{"zone-c"}}}}}},
	} {
		if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the local-path StorageClass", func() (bool, string) {
		_, err := cs.StorageV1().StorageClasses().Get(ctx, "local-path", metav1.GetOptions{})
		return err == nil, "missing"
	})
	onNode := func(key, value string) *corev1.VolumeNodeAffinity {
		return &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}}}}}}
	}
	pv := func(name, class, claimName string, affinity *corev1.VolumeNodeAffinity, labels map[string]string, modes ...corev1.PersistentVolumeAccessMode) {
		t.Helper()
		if len(modes) == 0 {
			modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
		}
		src := corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/" + name}}
		if affinity != nil {
			src = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/" + name}}
		}
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.PersistentVolumeSpec{StorageClassName: class, AccessModes: modes, NodeAffinity: affinity, ClaimRef: claimRef(claimName),
				Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}, PersistentVolumeSource: src}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(name, class string, modes ...corev1.PersistentVolumeAccessMode) {
		t.Helper()
		if len(modes) == 0 {
			modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
		}
		if _, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), AccessModes: modes,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name, node string, claims ...string) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		for _, c := range claims {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitBound := func(claimName string) {
		t.Helper()
		waitFor(t, "claim "+claimName+" bound", func() (bool, string) {
			c, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, claimName, metav1.GetOptions{})
			return err == nil && c.Status.Phase == corev1.ClaimBound, "not bound"
		})
	}

	// Volumes bound before any pod asks (Immediate, "manual" class).
	// Pre-bound (claimRef), so that the binder pairs them the same way
	// in both clusters.
	pv("pv-elsewhere", "manual", "affinity-conflict", onNode("disk", "nowhere"), nil)
	claim("affinity-conflict", "manual")
	pv("pv-zoned", "manual", "zone", nil, map[string]string{corev1.LabelTopologyZone: "zone-a"})
	claim("zone", "manual")
	pv("pv-rwop", "manual", "rwop", nil, nil, corev1.ReadWriteOncePod)
	claim("rwop", "manual", corev1.ReadWriteOncePod)
	for _, c := range []string{"affinity-conflict", "zone", "rwop"} {
		waitBound(c)
	}
	pod("rwop-holder", "node-1", "rwop") // already running there

	// NodeVolumeLimits: one attachable volume of csi.example.com per node;
	// both have one attached already.
	csiPV := func(name, claimName string) {
		t.Helper()
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{StorageClassName: "manual", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, ClaimRef: claimRef(claimName),
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: name}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		claim(claimName, "manual")
		waitBound(claimName)
	}
	csiPV("csi-attached", "csi-attached")
	csiPV("csi-attached-2", "csi-attached-2")
	csiPV("csi-new", "volume-limit")
	for _, n := range []string{"node-1", "node-2"} {
		if _, err := cs.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: n, Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](1)}}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod("csi-holder", "node-1", "csi-attached")
	pod("csi-holder-2", "node-2", "csi-attached-2")
	// VolumeRestrictions: the same GCE disk, read-write, is on both nodes.
	gce := corev1.Volume{Name: "disk", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "shared-disk"}}}
	for _, n := range []string{"node-1", "node-2"} {
		if _, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gce-holder-" + n},
			Spec: corev1.PodSpec{NodeName: n, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}, Volumes: []corev1.Volume{gce}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// DynamicResources: a claim allocated (by a driver) on node-2.
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rc, err := cs.ResourceV1().ResourceClaims("default").Create(ctx, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{Request: "req", Driver: "gpu.example.com", Pool: "node-2", Device: "gpu-0"}}},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-2"}}}}}},
	}
	if _, err := cs.ResourceV1().ResourceClaims("default").UpdateStatus(ctx, rc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ResourceV1().ResourceClaims("default").Create(ctx, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "gpu-unallocated"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv("local-on-node-2", "local-storage", "", onNode(corev1.LabelHostname, "node-2"), nil)
	claim("static", "local-storage")
	claim("immediate", "manual") // no volume for it: stays unbound
	claim("no-volume", "local-storage-empty")
	claim("provisioned", "local-path")
	claim("zone-provisioned", "zoned-local-path")
	if start != nil {
		start(t, env)
	}
	for _, p := range volumePods {
		switch p {
		case "missing-claim":
			pod(p, "", "missing")
		case "disk-conflict":
			if _, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}, Volumes: []corev1.Volume{gce}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "dra-allocated", "dra-unallocated":
			claimName := "gpu"
			if p == "dra-unallocated" {
				claimName = "gpu-unallocated"
			}
			if _, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
					ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(claimName)}}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			pod(p, "", p)
		}
	}
	out := volumeOutcome{}
	deadline := time.Now().Add(upstreamWait)
	for _, p := range volumePods {
		out[p] = podOutcome(t, cs, p, deadline)
	}
	// The missing claim appears (a local-path one): the PVC event
	// requeues the pending pod, which is then placed and its claim
	// provisioned.
	claim("missing", "local-path")
	created := time.Now()
	waitFor(t, "the missing-claim pod bound after its claim appeared", func() (bool, string) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "missing-claim", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != "", "not bound"
	})
	if d := time.Since(created); d > 20*time.Second {
		t.Errorf("the pod waited %v for its claim's event", d)
	}
	return out
}

func claimRef(name string) *corev1.ObjectReference {
	if name == "" {
		return nil
	}
	return &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "default", Name: name}
}

// podOutcome waits until the pod is bound or reported unschedulable.
func podOutcome(t *testing.T, cs *kubernetes.Clientset, name string, deadline time.Time) string {
	t.Helper()
	for {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			if p.Spec.NodeName != "" {
				return "node:" + p.Spec.NodeName
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					return "pending:" + c.Message
				}
			}
		}
		if time.Now().After(deadline) {
			return "timeout"
		}
		time.Sleep(100 * time.Millisecond)
	}
}
