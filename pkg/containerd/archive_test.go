package containerd

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"runtime"
	"testing"
)

// testImage is an image of busybox alone, for tests (pkg/image builds the
// real ones).
type testImage struct {
	ref        string
	entrypoint []string
}

// writeBusyboxArchive writes a docker-archive (docker save's format) of
// images made of /bin/busybox (from busybox-static) and links to it.
func writeBusyboxArchive(t *testing.T, path string, images ...testImage) {
	t.Helper()
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Skipf("no /bin/busybox (install busybox-static): %v", err)
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	for _, d := range []string{"bin/", "tmp/", "etc/", "proc/", "sys/", "dev/"} {
		must(t, tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}))
	}
	must(t, tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bb))}))
	_, err = tw.Write(bb)
	must(t, err)
	for _, l := range []string{"sh", "echo", "sleep", "cat", "ls", "true"} {
		must(t, tw.WriteHeader(&tar.Header{Name: "bin/" + l, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}))
	}
	must(t, tw.Close())
	layerSum := sha256.Sum256(layer.Bytes())
	layerHex := hex.EncodeToString(layerSum[:])

	var out bytes.Buffer
	aw := tar.NewWriter(&out)
	add := func(name string, b []byte) {
		must(t, aw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}))
		_, err := aw.Write(b)
		must(t, err)
	}
	add(layerHex+"/layer.tar", layer.Bytes())
	type entry struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	var manifest []entry
	for _, im := range images {
		cfg, err := json.Marshal(map[string]any{
			"architecture": runtime.GOARCH, "os": "linux",
			"config": map[string]any{"Entrypoint": im.entrypoint, "Env": []string{"PATH=/bin"}},
			"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerHex}},
		})
		must(t, err)
		sum := sha256.Sum256(cfg)
		name := hex.EncodeToString(sum[:]) + ".json"
		add(name, cfg)
		manifest = append(manifest, entry{Config: name, RepoTags: []string{im.ref}, Layers: []string{layerHex + "/layer.tar"}})
	}
	m, err := json.Marshal(manifest)
	must(t, err)
	add("manifest.json", m)
	must(t, aw.Close())
	must(t, os.WriteFile(path, out.Bytes(), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
