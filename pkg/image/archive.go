package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// File is one entry of an image's filesystem.
type File struct {
	// Path inside the image, absolute ("/bin/sh") or relative to its
	// root ("bin/sh").
	Path string
	// Mode holds the permission bits and fs.ModeDir for a directory or
	// fs.ModeSymlink for a symbolic link; a plain mode is a regular file.
	Mode fs.FileMode
	// Content of a regular file.
	Content []byte
	// Linkname is the target of a symbolic link.
	Linkname string
}

// Image is an image of one layer.
type Image struct {
	// Names are the image's references ("localhost/skiff/pause:3.10"),
	// the RepoTags of manifest.json. At least one.
	Names []string
	// Arch is the GOARCH the image's executables are built for (amd64,
	// arm64); OS is always linux.
	Arch       string
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	// Labels of the image config.
	Labels map[string]string
	// Files of the image's single layer; parent directories are added.
	Files []File
}

// epoch is the modification time of every entry and the creation time of
// every image: archives are byte for byte reproducible.
var epoch = time.Unix(0, 0).UTC()

// Built is an image laid out as the archive holds it.
type Built struct {
	Image
	// Config is the image config JSON; ID is "sha256:" + its digest, the
	// image ID docker and crictl show.
	Config []byte
	ID     string
	// Layer is the uncompressed layer tar; DiffID is "sha256:" + its
	// digest, as the config's rootfs.diff_ids lists it.
	Layer  []byte
	DiffID string
}

// Build lays out img: its layer tar and config JSON.
func Build(img Image) (*Built, error) {
	if len(img.Names) == 0 {
		return nil, fmt.Errorf("image has no name")
	}
	if img.Arch == "" {
		return nil, fmt.Errorf("image %s has no architecture", img.Names[0])
	}
	layer, err := layerTar(img.Files)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", img.Names[0], err)
	}
	diffID := digest(layer)
	type containerConfig struct {
		Env        []string          `json:"Env,omitempty"`
		Entrypoint []string          `json:"Entrypoint,omitempty"`
		Cmd        []string          `json:"Cmd,omitempty"`
		WorkingDir string            `json:"WorkingDir,omitempty"`
		Labels     map[string]string `json:"Labels,omitempty"`
	}
	type history struct {
		Created   time.Time `json:"created"`
		CreatedBy string    `json:"created_by"`
	}
	cfg := struct {
		Architecture string          `json:"architecture"`
		OS           string          `json:"os"`
		Created      time.Time       `json:"created"`
		Config       containerConfig `json:"config"`
		RootFS       struct {
			Type    string   `json:"type"`
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
		History []history `json:"history"`
	}{
		Architecture: img.Arch,
		OS:           "linux",
		Created:      epoch,
		Config: containerConfig{
			Env: img.Env, Entrypoint: img.Entrypoint, Cmd: img.Cmd, WorkingDir: img.WorkingDir, Labels: img.Labels,
		},
		History: []history{{Created: epoch, CreatedBy: "skiff (pkg/image)"}},
	}
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{diffID}
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return &Built{Image: img, Config: config, ID: digest(config), Layer: layer, DiffID: diffID}, nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// hexOf strips "sha256:".
func hexOf(d string) string { return strings.TrimPrefix(d, "sha256:") }

// layerTar writes files as a layer: relative paths, parent directories
// first (mode 0755 unless listed), sorted, owned by root, at the epoch.
func layerTar(files []File) ([]byte, error) {
	entries := map[string]File{}
	for _, f := range files {
		p := path.Clean("/" + f.Path)
		if p == "/" {
			return nil, fmt.Errorf("file %q: the root is not a file", f.Path)
		}
		p = p[1:]
		if _, dup := entries[p]; dup {
			return nil, fmt.Errorf("file %q listed twice", f.Path)
		}
		switch {
		case f.Mode&fs.ModeSymlink != 0:
			if f.Linkname == "" {
				return nil, fmt.Errorf("symlink %q has no target", f.Path)
			}
		case f.Mode.IsDir(), f.Mode.IsRegular():
		default:
			return nil, fmt.Errorf("file %q: unsupported mode %v", f.Path, f.Mode)
		}
		f.Path = p
		entries[p] = f
	}
	for p := range entries {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if e, ok := entries[d]; ok {
				if !e.Mode.IsDir() {
					return nil, fmt.Errorf("%q is a parent directory and a file", d)
				}
				continue
			}
			entries[d] = File{Path: d, Mode: fs.ModeDir | 0o755}
		}
	}
	names := make([]string, 0, len(entries))
	for p := range entries {
		names = append(names, p)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range names {
		f := entries[p]
		h := &tar.Header{Name: p, Mode: int64(f.Mode.Perm()), ModTime: epoch, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		switch {
		case f.Mode.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, p+"/"
		case f.Mode&fs.ModeSymlink != 0:
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.Linkname, 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Content))
		}
		if f.Mode&fs.ModeSetuid != 0 {
			h.Mode |= 0o4000
		}
		if f.Mode&fs.ModeSetgid != 0 {
			h.Mode |= 0o2000
		}
		if f.Mode&fs.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Content); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ManifestEntry is one element of a docker archive's manifest.json.
type ManifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// WriteDockerArchive writes images as one docker-archive tarball (what
// `docker save IMAGE...` writes): for each image its config as
// "<config hex>.json" and its layer as "<diff ID hex>/layer.tar", then
// manifest.json listing them with their RepoTags. (The legacy
// "repositories" file is left out: every loader of the last decade reads
// manifest.json.)
func WriteDockerArchive(w io.Writer, images ...Image) error {
	if len(images) == 0 {
		return fmt.Errorf("no image to write")
	}
	tw := tar.NewWriter(w)
	var manifest []ManifestEntry
	written := map[string]bool{}
	add := func(name string, content []byte) error {
		if written[name] {
			return nil
		}
		written[name] = true
		if dir, _ := path.Split(name); dir != "" && !written[dir] {
			written[dir] = true
			if err := tw.WriteHeader(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(content)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(content)
		return err
	}
	for _, img := range images {
		for _, n := range img.Names {
			if _, _, err := splitTag(n); err != nil {
				return err
			}
		}
		b, err := Build(img)
		if err != nil {
			return err
		}
		configName := hexOf(b.ID) + ".json"
		layerName := hexOf(b.DiffID) + "/layer.tar"
		if err := add(layerName, b.Layer); err != nil {
			return err
		}
		if err := add(configName, b.Config); err != nil {
			return err
		}
		manifest = append(manifest, ManifestEntry{Config: configName, RepoTags: img.Names, Layers: []string{layerName}})
	}
	m, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	if err := add("manifest.json", m); err != nil {
		return err
	}
	return tw.Close()
}

// WriteDockerArchiveFile writes images as a docker-archive tarball to
// file, atomically: a temporary file in the same directory renamed over
// file once complete (mode 0644).
func WriteDockerArchiveFile(file string, images ...Image) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".skiff-image-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := WriteDockerArchive(tmp, images...); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// splitTag splits "host/repo:tag" into repository and tag; a reference
// without a tag, or with a digest, is refused (an archive names tags).
func splitTag(ref string) (repo, tag string, err error) {
	if strings.Contains(ref, "@") {
		return "", "", fmt.Errorf("image name %q: a digest cannot be a tag in an archive", ref)
	}
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return "", "", fmt.Errorf("image name %q has no tag", ref)
	}
	repo, tag = ref[:i], ref[i+1:]
	if repo == "" || tag == "" {
		return "", "", fmt.Errorf("image name %q: empty repository or tag", ref)
	}
	return repo, tag, nil
}
