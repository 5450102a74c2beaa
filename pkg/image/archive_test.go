package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tarEntry is a header and the content of one tar entry.
type tarEntry struct {
	*tar.Header
	Content []byte
}

func readTar(t *testing.T, b []byte) []tarEntry {
	t.Helper()
	var out []tarEntry
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading tar: %v", err)
		}
		c, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarEntry{h, c})
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// imageConfig is what the tests read of a config JSON.
type imageConfig struct {
	Architecture string
	OS           string
	Config       struct {
		Env        []string
		Entrypoint []string
		Cmd        []string
	}
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// loadedImage is one image of an archive, read back as a loader does.
type loadedImage struct {
	ID       string
	RepoTags []string
	Config   imageConfig
	Layer    []tarEntry
}

// readDockerArchive checks an archive as containerd's importer reads it:
// manifest.json names a config and layers present in the archive, the
// config's diff_ids are the layers' digests.
func readDockerArchive(t *testing.T, b []byte) []loadedImage {
	t.Helper()
	files := map[string][]byte{}
	for _, e := range readTar(t, b) {
		if e.Typeflag == tar.TypeReg {
			files[e.Name] = e.Content
		}
	}
	var manifest []ManifestEntry
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	var out []loadedImage
	for _, m := range manifest {
		config, ok := files[m.Config]
		if !ok {
			t.Fatalf("config %s not in the archive", m.Config)
		}
		var c imageConfig
		if err := json.Unmarshal(config, &c); err != nil {
			t.Fatal(err)
		}
		if len(m.Layers) != 1 || len(c.RootFS.DiffIDs) != 1 || c.RootFS.Type != "layers" {
			t.Fatalf("want one layer, manifest %v, rootfs %+v", m.Layers, c.RootFS)
		}
		layer, ok := files[m.Layers[0]]
		if !ok {
			t.Fatalf("layer %s not in the archive", m.Layers[0])
		}
		if got := sha(layer); got != c.RootFS.DiffIDs[0] {
			t.Fatalf("diff_id %s, layer digest %s", c.RootFS.DiffIDs[0], got)
		}
		if want := strings.TrimPrefix(sha(config), "sha256:") + ".json"; m.Config != want {
			t.Errorf("config named %s, want %s (its digest)", m.Config, want)
		}
		out = append(out, loadedImage{ID: sha(config), RepoTags: m.RepoTags, Config: c, Layer: readTar(t, layer)})
	}
	return out
}

func TestWriteDockerArchive(t *testing.T) {
	img := Image{
		Names:      []string{"example.com/a/b:1", "example.com/a/b:latest"},
		Arch:       "amd64",
		Entrypoint: []string{"/bin/tool"},
		Cmd:        []string{"--flag"},
		Env:        []string{"PATH=/bin"},
		Files: []File{
			{Path: "/bin/tool", Mode: 0o755, Content: []byte("#!/bin/sh\n")},
			{Path: "bin/alias", Mode: fs.ModeSymlink | 0o777, Linkname: "tool"},
			{Path: "/etc/deep/er/conf", Mode: 0o600, Content: []byte("x=1")},
			{Path: "/tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
		},
	}
	other := Image{Names: []string{"localhost/other:v2"}, Arch: "arm64", Files: []File{{Path: "/f", Mode: 0o644, Content: []byte("f")}}}
	var buf bytes.Buffer
	if err := WriteDockerArchive(&buf, img, other); err != nil {
		t.Fatal(err)
	}
	images := readDockerArchive(t, buf.Bytes())
	if len(images) != 2 {
		t.Fatalf("%d images, want 2", len(images))
	}
	got := images[0]
	if !reflect.DeepEqual(got.RepoTags, img.Names) {
		t.Errorf("RepoTags %v, want %v", got.RepoTags, img.Names)
	}
	c := got.Config
	if c.Architecture != "amd64" || c.OS != "linux" || !reflect.DeepEqual(c.Config.Entrypoint, img.Entrypoint) ||
		!reflect.DeepEqual(c.Config.Cmd, img.Cmd) || !reflect.DeepEqual(c.Config.Env, img.Env) {
		t.Errorf("config %+v", c)
	}
	type entry struct {
		Name     string
		Type     byte
		Mode     int64
		Linkname string
		Content  string
	}
	var layer []entry
	for _, e := range got.Layer {
		if e.Uid != 0 || e.Gid != 0 || !e.ModTime.Equal(epoch) {
			t.Errorf("%s: uid %d gid %d mtime %v, want root at the epoch", e.Name, e.Uid, e.Gid, e.ModTime)
		}
		layer = append(layer, entry{e.Name, e.Typeflag, e.Mode, e.Linkname, string(e.Content)})
	}
	want := []entry{
		{"bin/", tar.TypeDir, 0o755, "", ""},
		{"bin/alias", tar.TypeSymlink, 0o777, "tool", ""},
		{"bin/tool", tar.TypeReg, 0o755, "", "#!/bin/sh\n"},
		{"etc/", tar.TypeDir, 0o755, "", ""},
		{"etc/deep/", tar.TypeDir, 0o755, "", ""},
		{"etc/deep/er/", tar.TypeDir, 0o755, "", ""},
		{"etc/deep/er/conf", tar.TypeReg, 0o600, "", "x=1"},
		{"tmp/", tar.TypeDir, 0o1777, "", ""},
	}
	if !reflect.DeepEqual(layer, want) {
		t.Errorf("layer\n got %+v\nwant %+v", layer, want)
	}
	if images[1].Config.Architecture != "arm64" || !reflect.DeepEqual(images[1].RepoTags, other.Names) {
		t.Errorf("second image %+v", images[1])
	}

	// Deterministic: the same images give the same bytes, so the same IDs.
	var again bytes.Buffer
	if err := WriteDockerArchive(&again, img, other); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two archives of the same images differ")
	}
	b, err := Build(img)
	if err != nil {
		t.Fatal(err)
	}
	if b.ID != got.ID {
		t.Errorf("Build's ID %s, archive's %s", b.ID, got.ID)
	}
}

func TestWriteDockerArchiveErrors(t *testing.T) {
	reg := func(p string) File { return File{Path: p, Mode: 0o644, Content: []byte("x")} }
	for _, tc := range []struct {
		name string
		img  Image
		want string
	}{
		{"no name", Image{Arch: "amd64"}, "no name"},
		{"no tag", Image{Names: []string{"example.com/a"}, Arch: "amd64"}, "has no tag"},
		{"port is no tag", Image{Names: []string{"localhost:5000/a"}, Arch: "amd64"}, "has no tag"},
		{"digest", Image{Names: []string{"a@sha256:00"}, Arch: "amd64"}, "digest"},
		{"no arch", Image{Names: []string{"a:1"}}, "no architecture"},
		{"twice", Image{Names: []string{"a:1"}, Arch: "amd64", Files: []File{reg("/x"), reg("x")}}, "listed twice"},
		{"file as dir", Image{Names: []string{"a:1"}, Arch: "amd64", Files: []File{reg("/x"), reg("/x/y")}}, "parent directory and a file"},
		{"root", Image{Names: []string{"a:1"}, Arch: "amd64", Files: []File{reg("/")}}, "root"},
		{"symlink without target", Image{Names: []string{"a:1"}, Arch: "amd64", Files: []File{{Path: "/l", Mode: fs.ModeSymlink}}}, "no target"},
		{"device", Image{Names: []string{"a:1"}, Arch: "amd64", Files: []File{{Path: "/d", Mode: fs.ModeDevice}}}, "unsupported mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteDockerArchive(io.Discard, tc.img)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if err := WriteDockerArchive(io.Discard); err == nil {
		t.Error("no image: no error")
	}
}

func TestWriteDockerArchiveFile(t *testing.T) {
	img := Image{Names: []string{"a:1"}, Arch: "amd64", Files: []File{{Path: "/f", Mode: 0o644, Content: []byte("f")}}}
	file := filepath.Join(t.TempDir(), "a.tar")
	if err := WriteDockerArchiveFile(file, img); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if images := readDockerArchive(t, b); len(images) != 1 || images[0].RepoTags[0] != "a:1" {
		t.Errorf("images %+v", images)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	// A failed write leaves neither the file nor a temporary one.
	bad := filepath.Join(t.TempDir(), "bad.tar")
	if err := WriteDockerArchiveFile(bad, Image{Names: []string{"notag"}, Arch: "amd64"}); err == nil {
		t.Fatal("no error for an image without a tag")
	}
	if entries, _ := os.ReadDir(filepath.Dir(bad)); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
