package localpath

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type harness struct {
	t      *testing.T
	ctx    context.Context
	ctrl   *Controller
	dir    string
	pvs    *client.Typed[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	pvcs   *client.Typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	scs    *client.Typed[*storagev1.StorageClass, *storagev1.StorageClassList]
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	events *record.FakeRecorder
}

func newHarness(t *testing.T) *harness {
	// The provisioner runs alone here, without the protection controllers
	// that release the finalizers StorageObjectInUseProtection adds.
	env := testenv.StartT(t, testenv.Config{Tweak: func(c *apiserver.Config) {
		c.DisableAdmissionPlugins = append(c.DisableAdmissionPlugins, "StorageObjectInUseProtection")
	}})
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(c, 0)
	events := record.NewFakeRecorder(100)
	dir := filepath.Join(t.TempDir(), "storage")
	ctrl, err := New(Config{Client: c, Informers: f, Recorder: events, Clock: clock.NewFake(time.Unix(0, 0)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StorageDir: dir, ManageDirectories: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	return &harness{t: t, ctx: ctx, ctrl: ctrl, dir: dir, events: events,
		pvs:  client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c),
		pvcs: client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c).Namespace("default"),
		scs:  client.For[*storagev1.StorageClass, *storagev1.StorageClassList](c),
		pods: client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cached waits until the claim's cached copy is the server's.
func (h *harness) cachedClaim(name string) *corev1.PersistentVolumeClaim {
	h.t.Helper()
	live, err := h.pvcs.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	eventually(h.t, "claim cached", func() bool {
		c, err := h.ctrl.claims.Namespace("default").Get(name)
		return err == nil && c.ResourceVersion == live.ResourceVersion
	})
	return live
}

func (h *harness) hasEvent(prefix string) bool {
	for {
		select {
		case e := <-h.events.Events:
			if strings.HasPrefix(e, prefix) {
				return true
			}
			h.t.Logf("event %q", e)
		default:
			return false
		}
	}
}

func claim(name, class string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
			StorageClassName: ptr.To(class),
		},
	}
}

func TestEnsureClass(t *testing.T) {
	h := newHarness(t)
	if err := h.ctrl.ensureClass(h.ctx); err != nil {
		t.Fatal(err)
	}
	sc, err := h.scs.Get(h.ctx, ClassName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Provisioner != ProvisionerName || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer ||
		*sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || sc.Annotations[volumeutil.AnnDefaultClass] != "true" {
		t.Errorf("class %+v", sc)
	}
	// A user's change is kept; a deleted class comes back, not default
	// when another class is.
	if err := h.scs.Delete(h.ctx, ClassName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.scs.Create(h.ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast",
		Annotations: map[string]string{volumeutil.AnnDefaultClass: "true"}}, Provisioner: "example.com/fast"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.ctrl.ensureClass(h.ctx); err != nil {
		t.Fatal(err)
	}
	if sc, err := h.scs.Get(h.ctx, ClassName, metav1.GetOptions{}); err != nil || sc.Annotations[volumeutil.AnnDefaultClass] != "false" {
		t.Errorf("re-created class: %v %v, want not default beside another default", err, sc.Annotations)
	}
}

func TestProvisionAndDelete(t *testing.T) {
	h := newHarness(t)
	if _, err := h.scs.Create(h.ctx, DefaultClass(true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	handed := map[string]string{volumeutil.AnnSelectedNode: "node-a", volumeutil.AnnStorageProvisioner: ProvisionerName}
	created, err := h.pvcs.Create(h.ctx, claim("data", ClassName, handed), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "class cached", func() bool { _, err := h.ctrl.classes.Get(ClassName); return err == nil })
	h.cachedClaim("data")
	if err := h.ctrl.syncClaim(h.ctx, "default/data"); err != nil {
		t.Fatal(err)
	}
	pvName := "pvc-" + string(created.UID)
	pv, err := h.pvs.Get(h.ctx, pvName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantPath := filepath.Join(h.dir, pvName+"_default_data")
	if pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != wantPath || *pv.Spec.HostPath.Type != corev1.HostPathDirectoryOrCreate {
		t.Errorf("hostPath %+v, want %s", pv.Spec.HostPath, wantPath)
	}
	if st, err := os.Stat(wantPath); err != nil || !st.IsDir() || st.Mode().Perm() != 0o777 {
		t.Errorf("directory: %v %v", err, st)
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != created.UID || pv.Spec.StorageClassName != ClassName ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		pv.Annotations[volumeutil.AnnDynamicallyProvisioned] != ProvisionerName {
		t.Errorf("volume %+v", pv)
	}
	if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.String() != "2Gi" {
		t.Errorf("capacity %s", got.String())
	}
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchExpressions[0].Key != "kubernetes.io/hostname" || terms[0].MatchExpressions[0].Values[0] != "node-a" {
		t.Errorf("node affinity %+v", terms)
	}
	if !h.hasEvent(`Normal Provisioning External provisioner is provisioning volume for claim "default/data"`) ||
		!h.hasEvent("Normal ProvisioningSucceeded Successfully provisioned volume "+pvName) {
		t.Error("no Provisioning/ProvisioningSucceeded events")
	}
	// Provisioning again creates nothing new.
	eventually(t, "volume cached", func() bool { _, err := h.ctrl.volumes.Get(pvName); return err == nil })
	if err := h.ctrl.syncClaim(h.ctx, "default/data"); err != nil {
		t.Fatal(err)
	}

	// Bound volumes are kept; Released ones are deleted with their directory.
	if err := h.ctrl.syncVolume(h.ctx, pvName); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wantPath); err != nil {
		t.Fatalf("directory of a volume not released: %v", err)
	}
	pv, _ = h.pvs.Get(h.ctx, pvName, metav1.GetOptions{})
	pv.Status.Phase = corev1.VolumeReleased
	if pv, err = h.pvs.UpdateStatus(h.ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Released cached", func() bool {
		c, err := h.ctrl.volumes.Get(pvName)
		return err == nil && c.ResourceVersion == pv.ResourceVersion
	})
	if err := h.ctrl.syncVolume(h.ctx, pvName); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wantPath); !os.IsNotExist(err) {
		t.Errorf("directory still there: %v", err)
	}
	if _, err := h.pvs.Get(h.ctx, pvName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("volume still there: %v", err)
	}
}

// What the provisioner leaves alone or refuses.
func TestClaimsNotProvisioned(t *testing.T) {
	h := newHarness(t)
	if _, err := h.scs.Create(h.ctx, DefaultClass(true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	immediate := DefaultClass(false)
	immediate.Name = "local-now"
	immediate.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	if _, err := h.scs.Create(h.ctx, immediate, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.scs.Create(h.ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Provisioner: "example.com/other"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "classes cached", func() bool {
		_, e1 := h.ctrl.classes.Get("other")
		_, e2 := h.ctrl.classes.Get("local-now")
		_, e3 := h.ctrl.classes.Get(ClassName)
		return e1 == nil && e2 == nil && e3 == nil
	})
	tests := []struct {
		name, class string
		ann         map[string]string
		event       string // "" : none
	}{
		{name: "other-provisioner", class: "other", ann: map[string]string{volumeutil.AnnSelectedNode: "n", volumeutil.AnnStorageProvisioner: "example.com/other"}},
		{name: "not-handed-over", class: ClassName, ann: map[string]string{volumeutil.AnnSelectedNode: "n"}},
		{name: "no-node", class: "local-now", ann: map[string]string{volumeutil.AnnBetaStorageProvisioner: ProvisionerName},
			event: `Warning ProvisioningFailed failed to provision volume with StorageClass "local-now": configuration error, no node was specified`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			h.pvcs.Create(h.ctx, claim(tt.name, tt.class, tt.ann), metav1.CreateOptions{})
			h.cachedClaim(tt.name)
			if err := h.ctrl.syncClaim(h.ctx, "default/"+tt.name); err != nil {
				t.Fatal(err)
			}
			if l, _ := h.pvs.List(h.ctx, metav1.ListOptions{}); len(l.Items) != 0 {
				t.Errorf("volumes provisioned: %d", len(l.Items))
			}
			if tt.event != "" && !h.hasEvent(tt.event) {
				t.Errorf("no event %q", tt.event)
			}
		})
	}
}

// Without a scheduler, a pod that names its node selects the node of a
// WaitForFirstConsumer claim of the local-path class.
func TestNodeSelectedFromPod(t *testing.T) {
	h := newHarness(t)
	if _, err := h.scs.Create(h.ctx, DefaultClass(true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "class cached", func() bool { _, err := h.ctrl.classes.Get(ClassName); return err == nil })
	if _, err := h.pvcs.Create(h.ctx, claim("web-data", ClassName, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.cachedClaim("web-data")
	if err := h.ctrl.syncClaim(h.ctx, "default/web-data"); err != nil {
		t.Fatal(err)
	}
	if c, _ := h.pvcs.Get(h.ctx, "web-data", metav1.GetOptions{}); c.Annotations[volumeutil.AnnSelectedNode] != "" {
		t.Fatalf("node selected without a pod: %v", c.Annotations)
	}
	for _, p := range []struct{ name, node string }{{"pending", ""}, {"placed", "node-b"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: p.name},
			Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "web-data"}}}}}}
		if _, err := h.pods.Create(h.ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "pods cached", func() bool { return len(h.ctrl.pods.List()) == 2 })
	if err := h.ctrl.syncClaim(h.ctx, "default/web-data"); err != nil {
		t.Fatal(err)
	}
	if c, _ := h.pvcs.Get(h.ctx, "web-data", metav1.GetOptions{}); c.Annotations[volumeutil.AnnSelectedNode] != "node-b" {
		t.Errorf("selected node %q, want the pod's node-b", c.Annotations[volumeutil.AnnSelectedNode])
	}
}

func TestRemoveDirectoryStaysInStorageDir(t *testing.T) {
	h := newHarness(t)
	outside := t.TempDir()
	for _, path := range []string{outside, filepath.Join(h.dir, "pvc-other_default_x"), filepath.Join(h.dir, "..", "pvc-1_default_x")} {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-1"},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}}
		if err := h.ctrl.removeDirectory(pv); err == nil {
			t.Errorf("removing %s was not refused", path)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("outside directory: %v", err)
	}
}
