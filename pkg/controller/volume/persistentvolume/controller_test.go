package persistentvolume

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// harness drives the binder's syncs by hand against a real API server
// (informers running, workers not).
type harness struct {
	t      *testing.T
	ctx    context.Context
	ctrl   *Controller
	f      *informers.SharedInformerFactory
	pvs    *client.Typed[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	pvcs   *client.Typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	scs    *client.Typed[*storagev1.StorageClass, *storagev1.StorageClassList]
	pods   *client.Typed[*corev1.Pod, *corev1.PodList]
	events *record.FakeRecorder
	clock  *clock.Fake
}

func newHarness(t *testing.T) *harness {
	// The binder runs alone here, without the protection controllers that
	// release the finalizers StorageObjectInUseProtection adds: deleted
	// claims and volumes must go at once.
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
	fc := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	events := record.NewFakeRecorder(100)
	ctrl, err := New(Config{Client: c, Informers: f, Recorder: events, Clock: fc,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	return &harness{t: t, ctx: ctx, ctrl: ctrl, f: f, events: events, clock: fc,
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

// settle waits until the caches hold the server's PVs, PVCs and classes.
func (h *harness) settle() {
	h.t.Helper()
	eventually(h.t, "caches to catch up", func() bool {
		pvs, err := h.pvs.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		for _, pv := range pvs.Items {
			c, err := h.ctrl.volumes.Get(pv.Name)
			if err != nil || c.ResourceVersion != pv.ResourceVersion {
				return false
			}
		}
		pvcs, err := h.pvcs.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		cachedPVs, _ := h.ctrl.volumes.List(labels.Everything())
		cachedPVCs, _ := h.ctrl.claims.List(labels.Everything())
		if len(cachedPVs) != len(pvs.Items) || len(cachedPVCs) != len(pvcs.Items) {
			return false
		}
		for _, pvc := range pvcs.Items {
			c, err := h.ctrl.claims.Namespace(pvc.Namespace).Get(pvc.Name)
			if err != nil || c.ResourceVersion != pvc.ResourceVersion {
				return false
			}
		}
		scs, err := h.scs.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		for _, sc := range scs.Items {
			if c, err := h.ctrl.classes.Get(sc.Name); err != nil || c.ResourceVersion != sc.ResourceVersion {
				return false
			}
		}
		pods, err := h.pods.List(h.ctx, metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		return len(pods.Items) == len(h.ctrl.pods.List())
	})
}

// syncAll runs claim and volume syncs until nothing changes (as the
// workers would), at most n rounds.
func (h *harness) syncAll(claims ...string) {
	h.t.Helper()
	for range 4 {
		h.settle()
		for _, k := range claims {
			if err := h.ctrl.syncClaim(h.ctx, "default/"+k); err != nil && !apierrors.IsConflict(err) {
				h.t.Fatalf("syncClaim %s: %v", k, err)
			}
		}
		h.settle()
		pvs, _ := h.pvs.List(h.ctx, metav1.ListOptions{})
		for _, pv := range pvs.Items {
			if err := h.ctrl.syncVolume(h.ctx, pv.Name); err != nil && !apierrors.IsConflict(err) {
				h.t.Fatalf("syncVolume %s: %v", pv.Name, err)
			}
		}
	}
	h.settle()
}

func (h *harness) createPV(pv *corev1.PersistentVolume) {
	h.t.Helper()
	st := pv.Status
	created, err := h.pvs.Create(h.ctx, pv, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	if st.Phase != "" && st.Phase != created.Status.Phase {
		created.Status = st
		if _, err := h.pvs.UpdateStatus(h.ctx, created, metav1.UpdateOptions{}); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) createClaim(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	h.t.Helper()
	created, err := h.pvcs.Create(h.ctx, c, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return created
}

func (h *harness) createClass(name, provisioner string, mode storagev1.VolumeBindingMode, isDefault bool) {
	h.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if isDefault {
		sc.Annotations = map[string]string{volumeutil.AnnDefaultClass: "true"}
	}
	if _, err := h.scs.Create(h.ctx, sc, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) claim(name string) *corev1.PersistentVolumeClaim {
	h.t.Helper()
	c, err := h.pvcs.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func (h *harness) volume(name string) *corev1.PersistentVolume {
	h.t.Helper()
	v, err := h.pvs.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

// expectEvent fails unless an event starting with prefix was recorded;
// events before it are dropped.
func (h *harness) expectEvent(prefix string) {
	h.t.Helper()
	for {
		select {
		case e := <-h.events.Events:
			if strings.HasPrefix(e, prefix) {
				return
			}
		default:
			h.t.Fatalf("no event %q", prefix)
			return
		}
	}
}

func TestBindsSmallestMatchingVolume(t *testing.T) {
	h := newHarness(t)
	h.createPV(newPV("pv-10", "10Gi", ""))
	h.createPV(newPV("pv-2", "2Gi", ""))
	h.createPV(newPV("pv-1", "1Gi", ""))
	claim := h.createClaim(newClaim("data", "1500Mi", ptr.To("")))
	h.syncAll("data")

	c := h.claim("data")
	if c.Spec.VolumeName != "pv-2" || c.Status.Phase != corev1.ClaimBound {
		t.Fatalf("claim: volume %q phase %q, want pv-2 Bound", c.Spec.VolumeName, c.Status.Phase)
	}
	if c.Annotations[volumeutil.AnnBindCompleted] != "yes" || c.Annotations[volumeutil.AnnBoundByController] != "yes" {
		t.Errorf("claim annotations %v", c.Annotations)
	}
	if got := c.Status.Capacity[corev1.ResourceStorage]; got.String() != "2Gi" {
		t.Errorf("claim capacity %s, want the volume's 2Gi", got.String())
	}
	if len(c.Status.AccessModes) != 1 || c.Status.AccessModes[0] != corev1.ReadWriteOnce {
		t.Errorf("claim access modes %v", c.Status.AccessModes)
	}
	v := h.volume("pv-2")
	if v.Status.Phase != corev1.VolumeBound || v.Spec.ClaimRef == nil || v.Spec.ClaimRef.UID != claim.UID || v.Spec.ClaimRef.Name != "data" {
		t.Fatalf("volume: phase %q claimRef %+v", v.Status.Phase, v.Spec.ClaimRef)
	}
	if v.Annotations[volumeutil.AnnBoundByController] != "yes" {
		t.Errorf("volume annotations %v", v.Annotations)
	}
	for _, name := range []string{"pv-1", "pv-10"} {
		if v := h.volume(name); v.Status.Phase != corev1.VolumeAvailable || v.Spec.ClaimRef != nil {
			t.Errorf("%s: phase %q claimRef %v, want Available and free", name, v.Status.Phase, v.Spec.ClaimRef)
		}
	}

	// Deleting the claim releases the volume; Retain keeps it.
	if err := h.pvcs.Delete(h.ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "claim gone", func() bool {
		_, err := h.pvcs.Get(h.ctx, "data", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	h.syncAll()
	if v := h.volume("pv-2"); v.Status.Phase != corev1.VolumeReleased {
		t.Errorf("volume after its claim was deleted: %q, want Released", v.Status.Phase)
	}
}

func TestPreBoundVolumeAndRequestedVolume(t *testing.T) {
	h := newHarness(t)
	// The user reserved pv-mine for claim "mine" (claimRef without UID).
	h.createPV(newPV("pv-mine", "5Gi", "", claimRef("default", "mine", "")))
	h.createPV(newPV("pv-small", "1Gi", ""))
	h.createPV(newPV("pv-tiny", "1Mi", ""))
	h.createClaim(newClaim("mine", "1Gi", ptr.To("")))
	// "named" asks for pv-small by name; "wrong" for a volume too small.
	h.createClaim(newClaim("named", "1Gi", ptr.To(""), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv-small" }))
	h.createClaim(newClaim("wrong", "1Gi", ptr.To(""), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv-tiny" }))
	h.syncAll("mine", "named", "wrong")

	if c := h.claim("mine"); c.Spec.VolumeName != "pv-mine" || c.Status.Phase != corev1.ClaimBound {
		t.Errorf("pre-bound claim: %q %q", c.Spec.VolumeName, c.Status.Phase)
	}
	if v := h.volume("pv-mine"); v.Annotations[volumeutil.AnnBoundByController] != "" || v.Status.Phase != corev1.VolumeBound {
		t.Errorf("pre-bound volume: annotations %v phase %q (the user bound it, not the controller)", v.Annotations, v.Status.Phase)
	}
	c := h.claim("named")
	if c.Status.Phase != corev1.ClaimBound || c.Annotations[volumeutil.AnnBoundByController] != "" {
		t.Errorf("claim naming its volume: phase %q annotations %v", c.Status.Phase, c.Annotations)
	}
	if v := h.volume("pv-small"); v.Annotations[volumeutil.AnnBoundByController] != "yes" {
		t.Errorf("volume chosen by the user's claim is bound by the controller: %v", v.Annotations)
	}
	if c := h.claim("wrong"); c.Status.Phase != corev1.ClaimPending {
		t.Errorf("claim naming a too small volume: %q, want Pending", c.Status.Phase)
	}
	h.expectEvent(`Warning VolumeMismatch Cannot bind to requested volume "pv-tiny": requested PV is too small`)
}

func TestUnmatchedClaims(t *testing.T) {
	h := newHarness(t)
	h.createClass("external", "example.com/nfs", storagev1.VolumeBindingImmediate, false)
	h.createClass("late", "example.com/nfs", storagev1.VolumeBindingWaitForFirstConsumer, false)
	h.createClass("intree", "kubernetes.io/no-provisioner", storagev1.VolumeBindingImmediate, false)

	tests := []struct {
		name, class string
		nilClass    bool
		selected    string // volume.kubernetes.io/selected-node
		pod         *corev1.Pod
		event       string
		provisioner string // expected storage-provisioner annotation
	}{
		{name: "noclass", nilClass: true, event: "Normal FailedBinding no persistent volumes available for this claim and no storage class is set"},
		{name: "empty", class: "", event: "Normal FailedBinding no persistent volumes available for this claim and no storage class is set"},
		{name: "external", class: "external", provisioner: "example.com/nfs",
			event: "Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'example.com/nfs' or manually by the system administrator."},
		{name: "missing", class: "nope", event: `Warning ProvisioningFailed storageclass.storage.k8s.io "nope" not found`},
		{name: "intree", class: "intree", event: "Warning ProvisioningFailed no volume plugin matched name: kubernetes.io/no-provisioner"},
		{name: "late", class: "late", event: "Normal WaitForFirstConsumer waiting for first consumer to be created before binding"},
		{name: "late-pod", class: "late", pod: podUsing("web", "late-pod", ""), event: "Normal WaitForPodScheduled waiting for pod web to be scheduled"},
		{name: "late-scheduled", class: "late", pod: podUsing("db", "late-scheduled", "node-a"),
			event: "Normal WaitForFirstConsumer waiting for first consumer to be created before binding"},
		{name: "late-selected", class: "late", selected: "node-a", provisioner: "example.com/nfs", event: "Normal ExternalProvisioning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var class *string
			if !tt.nilClass {
				class = ptr.To(tt.class)
			}
			c := newClaim(tt.name, "1Gi", class)
			if tt.selected != "" {
				c.Annotations = map[string]string{volumeutil.AnnSelectedNode: tt.selected}
			}
			h.createClaim(c)
			if tt.pod != nil {
				if _, err := h.pods.Create(h.ctx, tt.pod, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			h.settle()
			if err := h.ctrl.syncClaim(h.ctx, "default/"+tt.name); err != nil {
				t.Fatal(err)
			}
			if !h.h(t).hasEvent(tt.event) {
				t.Errorf("no event %q", tt.event)
			}
			got := h.claim(tt.name)
			if got.Status.Phase != corev1.ClaimPending {
				// The provisioning path writes the annotation first and
				// leaves the phase to the next sync, as upstream.
				if tt.provisioner == "" {
					t.Errorf("phase %q, want Pending", got.Status.Phase)
				}
			}
			if got.Annotations[volumeutil.AnnStorageProvisioner] != tt.provisioner || got.Annotations[volumeutil.AnnBetaStorageProvisioner] != tt.provisioner {
				t.Errorf("provisioner annotations %v, want %q", got.Annotations, tt.provisioner)
			}
		})
	}
}

// h rebinds the harness's failures to a subtest.
func (h *harness) h(t *testing.T) *harness { c := *h; c.t = t; return &c }

func podUsing(name, claim, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}}}
}

// A claim created before any default class exists gets the default class
// once one appears (upstream's retroactive default StorageClass), and
// is then handed to its provisioner.
func TestRetroactiveDefaultStorageClass(t *testing.T) {
	h := newHarness(t)
	h.createClaim(newClaim("old", "1Gi", nil))
	h.createClass("standard", "example.com/disk", storagev1.VolumeBindingImmediate, true)
	h.settle()
	if err := h.ctrl.syncClaim(h.ctx, "default/old"); err != nil {
		t.Fatal(err)
	}
	if c := h.claim("old"); c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != "standard" {
		t.Fatalf("storageClassName %v, want the default class", c.Spec.StorageClassName)
	}
	h.settle()
	if err := h.ctrl.syncClaim(h.ctx, "default/old"); err != nil {
		t.Fatal(err)
	}
	if c := h.claim("old"); c.Annotations[volumeutil.AnnStorageProvisioner] != "example.com/disk" {
		t.Errorf("annotations %v", c.Annotations)
	}
	// A claim asking for no class ("") keeps it.
	h.createClaim(newClaim("none", "1Gi", ptr.To("")))
	h.settle()
	if err := h.ctrl.syncClaim(h.ctx, "default/none"); err != nil {
		t.Fatal(err)
	}
	if c := h.claim("none"); c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != "" {
		t.Errorf(`storageClassName "" was changed to %v`, c.Spec.StorageClassName)
	}
}

// A provisioner's volume (pre-bound by claimRef with the claim's UID) is
// bound to its claim; when the claim goes, it is Released and left to its
// provisioner (Delete), whereas a static Delete volume fails (no in-tree
// deleter), and a bound claim whose volume disappears is Lost.
func TestReclaimAndLost(t *testing.T) {
	h := newHarness(t)
	h.createClass("ext", "example.com/disk", storagev1.VolumeBindingImmediate, false)
	claim := h.createClaim(newClaim("dyn", "1Gi", ptr.To("ext")))
	h.createPV(newPV("pvc-dyn", "1Gi", "ext", claimRef("default", "dyn", string(claim.UID)), func(pv *corev1.PersistentVolume) {
		pv.Annotations = map[string]string{volumeutil.AnnDynamicallyProvisioned: "example.com/disk"}
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	}))
	h.createPV(newPV("static", "1Gi", "", func(pv *corev1.PersistentVolume) {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	}))
	h.createClaim(newClaim("st", "1Gi", ptr.To("")))
	h.syncAll("dyn", "st")
	for claim, vol := range map[string]string{"dyn": "pvc-dyn", "st": "static"} {
		if c := h.claim(claim); c.Spec.VolumeName != vol || c.Status.Phase != corev1.ClaimBound {
			t.Fatalf("claim %s: %q %q", claim, c.Spec.VolumeName, c.Status.Phase)
		}
	}
	for _, name := range []string{"dyn", "st"} {
		if err := h.pvcs.Delete(h.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.syncAll()
	if v := h.volume("pvc-dyn"); v.Status.Phase != corev1.VolumeReleased {
		t.Errorf("provisioned volume: %q, want Released (its provisioner deletes it)", v.Status.Phase)
	}
	v := h.volume("static")
	if v.Status.Phase != corev1.VolumeFailed || !strings.Contains(v.Status.Message, "no deletable volume plugin matched") {
		t.Errorf("static Delete volume: %q %q, want Failed", v.Status.Phase, v.Status.Message)
	}
	h.expectEvent("Warning VolumeFailedDelete")

	// Lost: the volume of a bound claim is deleted.
	h.createPV(newPV("short", "1Gi", ""))
	h.createClaim(newClaim("lose", "1Gi", ptr.To("")))
	h.syncAll("lose")
	if c := h.claim("lose"); c.Status.Phase != corev1.ClaimBound {
		t.Fatalf("claim lose: %q", c.Status.Phase)
	}
	if err := h.pvs.Delete(h.ctx, "short", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "volume gone from the cache", func() bool {
		_, err := h.ctrl.volumes.Get("short")
		return apierrors.IsNotFound(err)
	})
	h.syncAll("lose")
	if c := h.claim("lose"); c.Status.Phase != corev1.ClaimLost {
		t.Errorf("claim whose volume was deleted: %q, want Lost", c.Status.Phase)
	}
	h.expectEvent("Warning ClaimLost Bound claim has lost its PersistentVolume. Data on the volume is lost!")
}

// With the controller running, a claim that found no volume is bound by
// the periodic resync once a volume exists (the volume's arrival alone
// does not queue unrelated claims, as upstream).
func TestRunResyncBindsLater(t *testing.T) {
	h := newHarness(t)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(h.ctx)
	go func() { done <- h.ctrl.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	h.createClaim(newClaim("later", "1Gi", ptr.To("")))
	eventually(t, "claim Pending", func() bool { return h.claim("later").Status.Phase == corev1.ClaimPending })
	h.createPV(newPV("arrives", "1Gi", "", phase(""))) // the controller makes it Available
	eventually(t, "volume Available", func() bool { return h.volume("arrives").Status.Phase == corev1.VolumeAvailable })
	h.settle()
	if c := h.claim("later"); c.Status.Phase != corev1.ClaimPending {
		t.Fatalf("claim bound before the resync: %q", c.Status.Phase)
	}
	eventually(t, "resync ticker registered", func() bool { return h.clock.Waiters() > 0 })
	h.clock.Step(DefaultSyncPeriod)
	eventually(t, "claim bound after the resync", func() bool { return h.claim("later").Status.Phase == corev1.ClaimBound })
}

// hasEvent reports whether an event starting with prefix was recorded
// (the events seen are consumed).
func (h *harness) hasEvent(prefix string) bool {
	var seen []string
	for {
		select {
		case e := <-h.events.Events:
			if strings.HasPrefix(e, prefix) {
				return true
			}
			seen = append(seen, e)
		default:
			h.t.Logf("events: %q", seen)
			return false
		}
	}
}

// Two volumes claim one claim (a stale binding): the claim keeps the
// volume it names; the other is unbound if the binder bound it, or only
// forgets the claim's UID if the user pre-bound it; a provisioned Delete
// volume is Released instead (its provisioner deletes it). A claim whose
// volume names another claim is Misbound.
func TestStaleBindings(t *testing.T) {
	h := newHarness(t)
	claim := h.createClaim(newClaim("data", "1Gi", ptr.To("")))
	uid := string(claim.UID)
	h.createPV(newPV("chosen", "1Gi", ""))
	h.syncAll("data")
	if c := h.claim("data"); c.Spec.VolumeName != "chosen" {
		t.Fatalf("claim bound to %q", c.Spec.VolumeName)
	}
	boundBy := func(pv *corev1.PersistentVolume) {
		pv.Annotations = map[string]string{volumeutil.AnnBoundByController: "yes"}
	}
	provisioned := func(pv *corev1.PersistentVolume) {
		pv.Annotations = map[string]string{volumeutil.AnnDynamicallyProvisioned: "example.com/x"}
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	}
	h.createPV(newPV("by-controller", "1Gi", "", claimRef("default", "data", uid), boundBy, phase(corev1.VolumeBound)))
	h.createPV(newPV("by-user", "1Gi", "", claimRef("default", "data", uid), phase(corev1.VolumeBound)))
	h.createPV(newPV("extra", "1Gi", "", claimRef("default", "data", uid), provisioned, phase(corev1.VolumeBound)))
	h.settle()
	for _, name := range []string{"by-controller", "by-user", "extra"} {
		if err := h.ctrl.syncVolume(h.ctx, name); err != nil {
			t.Fatalf("syncVolume %s: %v", name, err)
		}
	}
	if v := h.volume("by-controller"); v.Spec.ClaimRef != nil || v.Status.Phase != corev1.VolumeAvailable || v.Annotations[volumeutil.AnnBoundByController] != "" {
		t.Errorf("by-controller: claimRef %v phase %q annotations %v, want free and Available", v.Spec.ClaimRef, v.Status.Phase, v.Annotations)
	}
	if v := h.volume("by-user"); v.Spec.ClaimRef == nil || v.Spec.ClaimRef.Name != "data" || v.Spec.ClaimRef.UID != "" || v.Status.Phase != corev1.VolumeAvailable {
		t.Errorf("by-user: claimRef %+v phase %q, want still reserved for data (no UID) and Available", v.Spec.ClaimRef, v.Status.Phase)
	}
	if v := h.volume("extra"); v.Status.Phase != corev1.VolumeReleased {
		t.Errorf("extra: phase %q, want Released", v.Status.Phase)
	}

	// Misbound: the claim's volume now names another claim.
	v := h.volume("chosen")
	v.Spec.ClaimRef.UID = "someone-else"
	if _, err := h.pvs.Update(h.ctx, v, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if err := h.ctrl.syncClaim(h.ctx, "default/data"); err != nil {
		t.Fatal(err)
	}
	if c := h.claim("data"); c.Status.Phase != corev1.ClaimLost {
		t.Errorf("misbound claim: %q, want Lost", c.Status.Phase)
	}
	if !h.hasEvent("Warning ClaimMisbound Two claims are bound to the same volume, this one is bound incorrectly") {
		t.Error("no ClaimMisbound event")
	}
}
