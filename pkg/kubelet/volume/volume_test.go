package volume

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

type harness struct {
	ctx  context.Context
	c    *client.Client
	m    *Manager
	clk  *clock.Fake
	root string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	env := testenv.StartT(t)
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	// The API server's clock is the real one (token expiry): start near it.
	clk := clock.NewFake(time.Now())
	root := t.TempDir()
	m, err := New(Config{Client: c, RootDir: root, Clock: clk,
		NodeAllocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi"), corev1.ResourceCPU: resource.MustParse("4")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Never leave a tmpfs behind.
		mps, _ := mountPointsUnder(root)
		for _, mp := range mps {
			unmount(mp)
		}
	})
	return &harness{ctx: ctx, c: c, m: m, clk: clk, root: root}
}

func (h *harness) createConfigMap(t *testing.T, name string, data map[string]string) {
	t.Helper()
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](h.c).Namespace("default")
	if _, err := cms.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) createSecret(t *testing.T, name string, data map[string][]byte) {
	t.Helper()
	ss := client.For[*corev1.Secret, *corev1.SecretList](h.c).Namespace("default")
	if _, err := ss.Create(h.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var uidSeq int

// testPod is a pod with vols, all mounted by its container c at /v/<name>.
func testPod(vols ...corev1.Volume) *corev1.Pod {
	uidSeq++
	var mounts []corev1.VolumeMount
	for _, v := range vols {
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: "/v/" + v.Name})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%d", uidSeq)),
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "one"}},
		Spec: corev1.PodSpec{Volumes: vols, ServiceAccountName: "default", NodeName: "n1",
			Containers: []corev1.Container{{Name: "c", Image: "busybox", VolumeMounts: mounts}}},
	}
}

func ptr[T any](v T) *T { return &v }

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func TestConfigMapAndSecret(t *testing.T) {
	h := newHarness(t)
	h.createConfigMap(t, "cfg", map[string]string{"a": "alpha", "b": "beta"})
	h.createSecret(t, "sec", map[string][]byte{"user": []byte("admin"), "pass": []byte("s3cret")})
	cases := []struct {
		name    string
		vol     corev1.VolumeSource
		files   map[string]string      // path → contents
		modes   map[string]os.FileMode // path → mode
		absent  []string
		wantErr string
	}{
		{name: "configmap all keys", vol: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}},
			files: map[string]string{"a": "alpha", "b": "beta"}, modes: map[string]os.FileMode{"a": 0o644}},
		{name: "configmap items and modes", vol: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
			DefaultMode: ptr[int32](0o400), Items: []corev1.KeyToPath{{Key: "a", Path: "dir/x.conf", Mode: ptr[int32](0o600)}, {Key: "b", Path: "y"}}}},
			files: map[string]string{"dir/x.conf": "alpha", "y": "beta"}, modes: map[string]os.FileMode{"dir/x.conf": 0o600, "y": 0o400}, absent: []string{"a", "b"}},
		{name: "configmap missing", vol: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}}},
			wantErr: `MountVolume.SetUp failed for volume "v" : configmap "nope" not found`},
		{name: "configmap missing optional", vol: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Optional: ptr(true)}},
			files: map[string]string{}},
		{name: "configmap missing key", vol: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
			Items: []corev1.KeyToPath{{Key: "zz", Path: "zz"}}}},
			wantErr: `MountVolume.SetUp failed for volume "v" : configmap references non-existent config key: zz`},
		{name: "configmap missing key optional", vol: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
			Optional: ptr(true), Items: []corev1.KeyToPath{{Key: "zz", Path: "zz"}, {Key: "a", Path: "a"}}}},
			files: map[string]string{"a": "alpha"}, absent: []string{"zz"}},
		{name: "secret", vol: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec", DefaultMode: ptr[int32](0o440)}},
			files: map[string]string{"user": "admin", "pass": "s3cret"}, modes: map[string]os.FileMode{"pass": 0o440}},
		{name: "secret missing", vol: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope"}},
			wantErr: `MountVolume.SetUp failed for volume "v" : secret "nope" not found`},
		{name: "secret missing key", vol: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec", Items: []corev1.KeyToPath{{Key: "k", Path: "k"}}}},
			wantErr: `MountVolume.SetUp failed for volume "v" : references non-existent secret key: k`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(corev1.Volume{Name: "v", VolumeSource: tc.vol})
			err := h.m.SetUp(h.ctx, pod)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("SetUp error %v, want %q", err, tc.wantErr)
				}
				if got := Messages(err); len(got) != 1 || got[0] != tc.wantErr {
					t.Fatalf("Messages %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := h.m.VolumeDir(pod.UID, contentPlugin(&tc.vol), "v")
			for p, want := range tc.files {
				if got := readFile(t, filepath.Join(dir, p)); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			for p, want := range tc.modes {
				if got := mode(t, filepath.Join(dir, p)).Perm(); got != want {
					t.Errorf("mode of %s = %v, want %v", p, got, want)
				}
			}
			for _, p := range tc.absent {
				if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
					t.Errorf("%s exists", p)
				}
			}
			// The atomic layout: ..data → ..<ts>, top-level names → ..data/<name>.
			target, err := os.Readlink(filepath.Join(dir, "..data"))
			if err != nil || !strings.HasPrefix(target, "..") {
				t.Fatalf("..data → %q, %v", target, err)
			}
			for p := range tc.files {
				top := strings.Split(p, "/")[0]
				if l, err := os.Readlink(filepath.Join(dir, top)); err != nil || l != "..data/"+top {
					t.Errorf("%s → %q, %v", top, l, err)
				}
			}
			// Idempotent.
			if err := h.m.SetUp(h.ctx, pod); err != nil {
				t.Fatal(err)
			}
			if t2, _ := os.Readlink(filepath.Join(dir, "..data")); t2 != target {
				t.Errorf("a second SetUp rewrote the volume (%s → %s)", target, t2)
			}
			mounts, err := h.m.Mounts(pod, &corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/etc/v"}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(mounts) != 1 || mounts[0].HostPath != dir || mounts[0].ContainerPath != "/etc/v" || !mounts[0].Readonly {
				t.Errorf("mounts %v", mounts)
			}
		})
	}
}

func TestRefresh(t *testing.T) {
	h := newHarness(t)
	h.createConfigMap(t, "cfg", map[string]string{"a": "1", "b": "2"})
	pod := testPod(corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}})
	if err := h.m.SetUp(h.ctx, pod); err != nil {
		t.Fatal(err)
	}
	dir := h.m.VolumeDir(pod.UID, PluginConfigMap, "v")
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](h.c).Namespace("default")
	cm, err := cms.Get(h.ctx, "cfg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"a": "one", "c": "3"}
	if _, err := cms.Update(h.ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Run refreshes every ResyncPeriod of the (fake) clock.
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	go func() { h.m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the refresh ticker", func() bool { return h.clk.Waiters() > 0 })
	h.clk.Step(time.Minute)
	// (readers see the new files at the ..data swap; the old ones go after)
	waitFor(t, "the new contents, the old ones gone", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "a"))
		_, errB := os.Lstat(filepath.Join(dir, "b"))
		_, errOld := os.Lstat(filepath.Join(dir, old))
		return string(b) == "one" && os.IsNotExist(errB) && os.IsNotExist(errOld)
	})
	if got := readFile(t, filepath.Join(dir, "c")); got != "3" {
		t.Errorf("c = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Errorf("b still exists (%v)", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, old)); !os.IsNotExist(err) {
		t.Errorf("the old data dir %s still exists", old)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 4 { // ..<ts>, ..data, a, c
		t.Errorf("volume dir holds %v", names)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestHostPath(t *testing.T) {
	h := newHarness(t)
	base := t.TempDir()
	os.Mkdir(filepath.Join(base, "dir"), 0o755)
	os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
	cases := []struct {
		path    string
		typ     corev1.HostPathType
		wantErr string
		check   func(t *testing.T)
	}{
		{path: "dir", typ: corev1.HostPathDirectory},
		{path: "file", typ: corev1.HostPathDirectory, wantErr: "hostPath type check failed: %s is not a directory"},
		{path: "missing", typ: corev1.HostPathDirectory, wantErr: "hostPath type check failed: %s is not a directory"},
		{path: "new/sub", typ: corev1.HostPathDirectoryOrCreate, check: func(t *testing.T) {
			if fi, err := os.Stat(filepath.Join(base, "new/sub")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
				t.Errorf("DirectoryOrCreate made %v, %v", fi, err)
			}
		}},
		{path: "file", typ: corev1.HostPathDirectoryOrCreate, wantErr: "hostPath type check failed: %s is not a directory"},
		{path: "file", typ: corev1.HostPathFile},
		{path: "dir", typ: corev1.HostPathFile, wantErr: "hostPath type check failed: %s is not a file"},
		{path: "newfile", typ: corev1.HostPathFileOrCreate, check: func(t *testing.T) {
			if fi, err := os.Stat(filepath.Join(base, "newfile")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("FileOrCreate made %v, %v", fi, err)
			}
		}},
		{path: "dir", typ: corev1.HostPathSocket, wantErr: "hostPath type check failed: %s is not a socket file"},
		{path: "/dev/null", typ: corev1.HostPathCharDev},
		{path: "file", typ: corev1.HostPathCharDev, wantErr: "hostPath type check failed: %s is not a character device"},
		{path: "/dev/null", typ: corev1.HostPathBlockDev, wantErr: "hostPath type check failed: %s is not a block device"},
		{path: "anything", typ: corev1.HostPathUnset},
		{path: "dir", typ: "Bogus", wantErr: "Bogus is an invalid volume type"},
		{path: "dir/../file", typ: corev1.HostPathUnset, wantErr: "invalid HostPath `%s`: must not contain '..'"},
	}
	for _, tc := range cases {
		t.Run(string(tc.typ)+" "+tc.path, func(t *testing.T) {
			p := tc.path
			if !filepath.IsAbs(p) {
				p = base + "/" + p // (not cleaned: the ".." case)
			}
			pod := testPod(corev1.Volume{Name: "hp", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p, Type: &tc.typ}}})
			err := h.m.SetUp(h.ctx, pod)
			if tc.wantErr != "" {
				want := `MountVolume.SetUp failed for volume "hp" : ` + strings.ReplaceAll(tc.wantErr, "%s", p)
				if err == nil || err.Error() != want {
					t.Fatalf("error %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t)
			}
			mounts, err := h.m.Mounts(pod, &corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "hp", MountPath: "/host", ReadOnly: true}}})
			if err != nil || len(mounts) != 1 || mounts[0].HostPath != p || !mounts[0].Readonly {
				t.Errorf("mounts %v, %v", mounts, err)
			}
		})
	}
}

func TestEmptyDir(t *testing.T) {
	h := newHarness(t)
	limited := testPod()
	limited.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")}
	cases := []struct {
		name     string
		pod      *corev1.Pod
		src      corev1.EmptyDirVolumeSource
		wantSize int64 // tmpfs size, 0: a directory
	}{
		{name: "disk", pod: testPod(), src: corev1.EmptyDirVolumeSource{}},
		{name: "memory: node allocatable", pod: testPod(), src: corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}, wantSize: 64 << 20},
		{name: "memory: pod limit", pod: limited, src: corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}, wantSize: 16 << 20},
		{name: "memory: sizeLimit", pod: testPod(), src: corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("8Mi"))}, wantSize: 8 << 20},
		{name: "memory: sizeLimit above the pod limit", pod: limited, src: corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("32Mi"))}, wantSize: 16 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantSize > 0 && os.Geteuid() != 0 {
				t.Skip("mounting a tmpfs needs root")
			}
			pod := tc.pod
			src := tc.src
			pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &src}}}
			pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
			for i := 0; i < 2; i++ { // idempotent: mounted once
				if err := h.m.SetUp(h.ctx, pod); err != nil {
					t.Fatal(err)
				}
			}
			dir := h.m.VolumeDir(pod.UID, PluginEmptyDir, "scratch")
			mps, err := mountPointsUnder(h.m.PodDir(pod.UID))
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantSize == 0 {
				if m := mode(t, dir); !m.IsDir() || m.Perm() != 0o777 {
					t.Errorf("mode %v", m)
				}
				if len(mps) != 0 {
					t.Errorf("mounts %v", mps)
				}
			} else {
				if len(mps) != 1 || mps[0] != dir {
					t.Fatalf("mounts %v, want one on %s", mps, dir)
				}
				var st syscall.Statfs_t
				if err := syscall.Statfs(dir, &st); err != nil {
					t.Fatal(err)
				}
				if got := int64(st.Blocks) * st.Bsize; got != tc.wantSize {
					t.Errorf("tmpfs size %d, want %d", got, tc.wantSize)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := h.m.TearDown(h.ctx, pod.UID); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(h.m.PodDir(pod.UID)); !os.IsNotExist(err) {
				t.Errorf("pod dir still there: %v", err)
			}
			if mps, _ := mountPointsUnder(h.root); len(mps) != 0 {
				t.Errorf("mounts left: %v", mps)
			}
		})
	}
}

func TestFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chgrp to another group needs root")
	}
	h := newHarness(t)
	h.createConfigMap(t, "cfg", map[string]string{"a": "1"})
	pod := testPod(corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, DefaultMode: ptr[int32](0o400)}}})
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr[int64](2345)}
	if err := h.m.SetUp(h.ctx, pod); err != nil {
		t.Fatal(err)
	}
	gid := func(p string) uint32 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Gid
	}
	ed := h.m.VolumeDir(pod.UID, PluginEmptyDir, "scratch")
	if g, m := gid(ed), mode(t, ed); g != 2345 || m&os.ModeSetgid == 0 || m.Perm() != 0o777 {
		t.Errorf("emptyDir gid %d mode %v", g, m)
	}
	f := filepath.Join(h.m.VolumeDir(pod.UID, PluginConfigMap, "cfg"), "a")
	if g, m := gid(f), mode(t, f); g != 2345 || m.Perm() != 0o440 {
		t.Errorf("configMap file gid %d mode %v (want 2345, 0440: 0400 plus g+r)", g, m)
	}
	// A refresh with unchanged contents leaves the files alone.
	dir := h.m.VolumeDir(pod.UID, PluginConfigMap, "cfg")
	before, _ := os.Readlink(filepath.Join(dir, "..data"))
	h.m.Refresh(h.ctx)
	if after, _ := os.Readlink(filepath.Join(dir, "..data")); after != before {
		t.Errorf("an unchanged refresh rewrote the volume")
	}
}

func TestDownwardAPI(t *testing.T) {
	h := newHarness(t)
	pod := testPod(corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
		{Path: "app", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}},
		{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		{Path: "ns/namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}, Mode: ptr[int32](0o600)},
		{Path: "cpu_limit", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.cpu", Divisor: resource.MustParse("1m")}},
		{Path: "mem_request", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}},
		{Path: "mem_limit", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.memory"}},
	}}}})
	pod.Labels["tier"] = "front"
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1500Ki")}
	if err := h.m.SetUp(h.ctx, pod); err != nil {
		t.Fatal(err)
	}
	dir := h.m.VolumeDir(pod.UID, PluginDownwardAPI, "info")
	want := map[string]string{
		"labels": "app=\"web\"\ntier=\"front\"", "annotations": `note="one"`, "app": "web", "name": "p", "ns/namespace": "default",
		"cpu_limit":   "4000", // the node's allocatable: the container has no limit
		"mem_request": "2",    // 1500Ki in Mi, rounded up
		"mem_limit":   "67108864",
	}
	for p, w := range want {
		if got := readFile(t, filepath.Join(dir, p)); got != w {
			t.Errorf("%s = %q, want %q", p, got, w)
		}
	}
	if m := mode(t, filepath.Join(dir, "ns/namespace")).Perm(); m != 0o600 {
		t.Errorf("mode %v", m)
	}
	// A label change reaches the files at the next SetUp.
	upd := pod.DeepCopy()
	upd.Labels["tier"] = "back"
	if err := h.m.SetUp(h.ctx, upd); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "labels")); got != "app=\"web\"\ntier=\"back\"" {
		t.Errorf("labels after the change: %q", got)
	}
	bad := testPod(corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "x", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}}}}}})
	if err := h.m.SetUp(h.ctx, bad); err == nil || err.Error() != `MountVolume.SetUp failed for volume "info" : container nope not found` {
		t.Errorf("error %v", err)
	}
}

func TestMounts(t *testing.T) {
	h := newHarness(t)
	h.createConfigMap(t, "cfg", map[string]string{"app.conf": "x=1"})
	pod := testPod(corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}})
	if err := h.m.SetUp(h.ctx, pod); err != nil {
		t.Fatal(err)
	}
	data := h.m.VolumeDir(pod.UID, PluginEmptyDir, "data")
	cfg := h.m.VolumeDir(pod.UID, PluginConfigMap, "cfg")
	target, _ := os.Readlink(filepath.Join(cfg, "..data"))
	os.Symlink("/etc", filepath.Join(data, "escape"))
	cases := []struct {
		name    string
		c       corev1.Container
		want    []*runtimeapi.Mount
		wantErr string
	}{
		{name: "plain", c: corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}},
			want: []*runtimeapi.Mount{{ContainerPath: "/data", HostPath: data}}},
		{name: "subPath made", c: corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/logs", SubPath: "logs/app", ReadOnly: true,
			MountPropagation: ptr(corev1.MountPropagationHostToContainer)}}},
			want: []*runtimeapi.Mount{{ContainerPath: "/logs", HostPath: filepath.Join(data, "logs/app"), Readonly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER}}},
		{name: "subPathExpr", c: corev1.Container{Name: "c", Env: []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/mine", SubPathExpr: "pods/$(POD)"}}},
			want: []*runtimeapi.Mount{{ContainerPath: "/mine", HostPath: filepath.Join(data, "pods/p")}}},
		{name: "configMap key by subPath", c: corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/app.conf", SubPath: "app.conf"}}},
			want: []*runtimeapi.Mount{{ContainerPath: "/etc/app.conf", HostPath: filepath.Join(cfg, target, "app.conf"), Readonly: true}}},
		{name: "subPath escaping by symlink", c: corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/x", SubPath: "escape"}}},
			wantErr: `failed to prepare subPath for volumeMount "data" of container "c"`},
		{name: "subPath made through an escaping symlink", c: corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/x", SubPath: "escape/new-dir"}}},
			wantErr: `failed to create subPath directory for volumeMount "data" of container "c"`},
		{name: "subPathExpr with a missing variable", c: corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/x", SubPathExpr: "$(NOPE)/$(ALSO)/$(NOPE)"}}},
			wantErr: `missing value for ALSO, NOPE`},
		{name: "subPath backstep", c: corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/x", SubPath: "../x"}}},
			wantErr: "must not contain '..'"},
		{name: "bidirectional privileged", c: corev1.Container{Name: "c", SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/x", MountPropagation: ptr(corev1.MountPropagationBidirectional)}}},
			want: []*runtimeapi.Mount{{ContainerPath: "/x", HostPath: data, Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL}}},
		{name: "unknown volume", c: corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "nope", MountPath: "/x"}}},
			wantErr: `cannot find volume "nope" to mount into container "c"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.m.Mounts(pod, &tc.c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("mounts %v", got)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.ContainerPath != w.ContainerPath || g.HostPath != w.HostPath || g.Readonly != w.Readonly || g.Propagation != w.Propagation {
					t.Errorf("mount %d = %v, want %v", i, g, w)
				}
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(data, "pods/p")); err != nil || !fi.IsDir() {
		t.Errorf("subPathExpr directory: %v", err)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "x", "B": "y"}
	for in, want := range map[string]string{
		"plain": "plain", "$(A)/$(B)": "x/y", "$(C)": "$(C)", "$$(A)": "$(A)", "a$": "a$", "$(A": "$(A", "$A": "$A",
	} {
		if got := expand(in, env); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteAtomicPaths(t *testing.T) {
	for _, p := range []string{"/abs", "../x", "..x", "a/../b"} {
		if _, err := writeAtomic(t.TempDir(), map[string]fileProjection{p: {Data: []byte("x"), Mode: 0o644}}, time.Now(), 0, nil); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

func TestRelease(t *testing.T) {
	h := newHarness(t)
	pod := testPod(corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	if err := h.m.SetUp(h.ctx, pod); err != nil {
		t.Fatal(err)
	}
	// The kubelet's termination message file of a container.
	msg := filepath.Join(h.m.PodDir(pod.UID), ContainersDir, "main", "0123")
	if err := os.MkdirAll(filepath.Dir(msg), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(msg, []byte("all done"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Release(h.ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	exists := func() bool { _, err := os.Stat(h.m.PodDir(pod.UID)); return err == nil }
	if entries, err := os.ReadDir(h.m.PodDir(pod.UID)); err != nil || len(entries) != 1 || entries[0].Name() != ContainersDir {
		t.Fatalf("after Release the pod's directory holds %v (%v), want only %s", entries, err, ContainersDir)
	}
	if b, err := os.ReadFile(msg); err != nil || string(b) != "all done" {
		t.Fatalf("termination message after Release: %q, %v", b, err)
	}
	if err := h.m.TearDown(h.ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if exists() {
		t.Fatal("TearDown left the pod's directory")
	}
	// Without containers, Release removes the directory.
	if err := h.m.SetUp(h.ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Release(h.ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if exists() {
		t.Fatal("Release left the pod's directory")
	}
	// A released pod is not set up again...
	if err := h.m.SetUp(h.ctx, pod); err != nil || exists() {
		t.Fatalf("SetUp after Release: %v, directory there: %v", err, exists())
	}
	// ...until TearDown forgets it (the UID is never reused in practice).
	if err := h.m.TearDown(h.ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if err := h.m.SetUp(h.ctx, pod); err != nil || !exists() {
		t.Fatalf("SetUp after TearDown: %v, directory there: %v", err, exists())
	}
}

// As upstream's, a volume no container uses is not set up (a missing
// configMap there keeps nothing from starting).
func TestUnusedVolumesIgnored(t *testing.T) {
	h := newHarness(t)
	pod := testPod(corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "unused", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}}}})
	if err := h.m.SetUp(h.ctx, pod); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.m.VolumeDir(pod.UID, PluginConfigMap, "unused")); !os.IsNotExist(err) {
		t.Errorf("the unused volume was set up: %v", err)
	}
	// An init container's mount counts.
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", VolumeMounts: []corev1.VolumeMount{{Name: "unused", MountPath: "/x"}}}}
	want := `MountVolume.SetUp failed for volume "unused" : configmap "missing" not found`
	if err := h.m.SetUp(h.ctx, pod); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
