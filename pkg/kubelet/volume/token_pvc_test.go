package volume

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
)

// The kube-api-access volume the ServiceAccount admission plugin injects:
// a token bound to the pod (3607 s), the cluster CA and the namespace.
func TestServiceAccountTokenVolume(t *testing.T) {
	h := newHarness(t)
	h.createConfigMap(t, "kube-root-ca.crt", map[string]string{"ca.crt": "PEM"})
	pods := client.For[*corev1.Pod, *corev1.PodList](h.c).Namespace("default")
	pod, err := pods.Create(h.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var vol *corev1.Volume
	for i := range pod.Spec.Volumes {
		if strings.HasPrefix(pod.Spec.Volumes[i].Name, "kube-api-access-") {
			vol = &pod.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.Projected == nil {
		t.Fatalf("no kube-api-access volume injected: %v", pod.Spec.Volumes)
	}
	if err := h.m.SetUp(h.ctx, pod); err != nil {
		t.Fatal(err)
	}
	dir := h.m.VolumeDir(pod.UID, PluginProjected, vol.Name)
	if got := readFile(t, filepath.Join(dir, "ca.crt")); got != "PEM" {
		t.Errorf("ca.crt = %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "namespace")); got != "default" {
		t.Errorf("namespace = %q", got)
	}
	tok1 := readFile(t, filepath.Join(dir, "token"))
	claims := jwtClaims(t, tok1)
	k8s, _ := claims["kubernetes.io"].(map[string]any)
	podClaim, _ := k8s["pod"].(map[string]any)
	if podClaim["name"] != "web" || podClaim["uid"] != string(pod.UID) {
		t.Errorf("token not bound to the pod: %v", claims)
	}
	if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 3607 {
		t.Errorf("token lifetime %v s, want 3607", exp-iat)
	}
	mounts, err := h.m.Mounts(pod, &pod.Spec.Containers[0])
	if err != nil || len(mounts) != 1 || mounts[0].ContainerPath != "/var/run/secrets/kubernetes.io/serviceaccount" || mounts[0].HostPath != dir || !mounts[0].Readonly {
		t.Fatalf("mounts %v, %v", mounts, err)
	}
	// Rotation: kept until 80% of its lifetime (48m05.6s), then replaced.
	h.clk.Step(47 * time.Minute)
	h.m.Refresh(h.ctx)
	if got := readFile(t, filepath.Join(dir, "token")); got != tok1 {
		t.Fatal("token replaced before 80% of its lifetime")
	}
	h.clk.Step(2 * time.Minute)
	h.m.Refresh(h.ctx)
	tok2 := readFile(t, filepath.Join(dir, "token"))
	if tok2 == tok1 {
		t.Fatal("token not replaced past 80% of its lifetime")
	}
	// TearDown forgets the pod's tokens.
	if err := h.m.TearDown(h.ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if n := len(h.m.tokens.tokens); n != 0 {
		t.Errorf("%d tokens kept after TearDown", n)
	}
}

func jwtClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRequiresRefresh(t *testing.T) {
	iat := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tr := func(seconds int64) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
			Status: authenticationv1.TokenRequestStatus{ExpirationTimestamp: metav1.NewTime(iat.Add(time.Duration(seconds) * time.Second))}}
	}
	cases := []struct {
		seconds int64
		age     time.Duration
		want    bool
	}{
		{3600, 47 * time.Minute, false},
		{3600, 48*time.Minute + time.Second, true},
		{3607, 48 * time.Minute, false},
		{86400 * 2, 30 * time.Hour, true}, // older than 24 h, though only 62% of its lifetime
		{86400 * 2, 23 * time.Hour, false},
		{86400 * 365, 24*time.Hour + time.Second, true},
	}
	for _, tc := range cases {
		if got := requiresRefresh(tr(tc.seconds), iat.Add(tc.age)); got != tc.want {
			t.Errorf("lifetime %ds, age %v: refresh %v, want %v", tc.seconds, tc.age, got, tc.want)
		}
	}
}

func TestPersistentVolumeClaim(t *testing.T) {
	h := newHarness(t)
	pvcs := client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](h.c).Namespace("default")
	pvs := client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](h.c)
	hostDir := filepath.Join(t.TempDir(), "pv-data")
	localDir := t.TempDir()
	cases := []struct {
		name     string
		pv       corev1.PersistentVolumeSource
		readOnly bool
		path     string
	}{
		{name: "hostpath", pv: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: ptr(corev1.HostPathDirectoryOrCreate)}}, path: hostDir},
		{name: "local", pv: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: localDir}}, readOnly: true, path: localDir},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pvc, err := pvcs.Create(h.ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim-" + tc.name},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: "pv-" + tc.name,
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pod := testPod(corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: pvc.Name, ReadOnly: tc.readOnly}}},
				corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
			want := "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/" +
				pvc.Name + ": PVC is not bound"
			if err := h.m.SetUp(h.ctx, pod); err == nil || err.Error() != want {
				t.Fatalf("SetUp of a pod with an unbound claim: %v, want %q", err, want)
			}
			// Bind: the PV points at the claim, the claim is Bound.
			pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + tc.name},
				Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: tc.pv, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: pvc.Name, UID: pvc.UID}}}
			if tc.pv.Local != nil {
				pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}}}}
			}
			if _, err := pvs.Create(h.ctx, pv, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			pvc.Status.Phase = corev1.ClaimBound
			if _, err := pvcs.UpdateStatus(h.ctx, pvc, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := h.m.SetUp(h.ctx, pod); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(tc.path); err != nil || !fi.IsDir() {
				t.Fatalf("PV path: %v", err)
			}
			mounts, err := h.m.Mounts(pod, &corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}})
			if err != nil || len(mounts) != 1 || mounts[0].HostPath != tc.path || mounts[0].Readonly != tc.readOnly {
				t.Fatalf("mounts %v, %v", mounts, err)
			}
			// TearDown leaves the PV's data alone.
			os.WriteFile(filepath.Join(tc.path, "keep"), []byte("x"), 0o644)
			if err := h.m.TearDown(h.ctx, pod.UID); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(tc.path, "keep")); err != nil {
				t.Errorf("TearDown touched the PV: %v", err)
			}
		})
	}
}
