package containerd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/image"
	"github.com/skiff-sh/skiff/pkg/kubelet/remote"
)

// ImportImage imports the images of tarPath (a docker-archive, as
// `docker save` writes, or an OCI image layout tar with
// org.opencontainers.image.ref.name annotations) into the containerd at
// socket, in the CRI namespace k8s.io, as `ctr -n k8s.io images import`
// does (ctr from PATH), and unpacks them for the default snapshotter. It
// returns the names imported (e.g. "localhost/skiff/pause:3.10",
// "docker.io/library/busybox:latest": a docker-archive's short names are
// normalised as docker does).
func ImportImage(ctx context.Context, socket, tarPath string) ([]string, error) {
	ctr, err := exec.LookPath("ctr")
	if err != nil {
		return nil, errors.New("containerd: ctr (containerd's client) is not on PATH; it is needed to import images")
	}
	if _, err := os.Stat(tarPath); err != nil {
		return nil, fmt.Errorf("containerd: import: %w", err)
	}
	if _, err := os.Stat(socket); err != nil {
		return nil, fmt.Errorf("containerd: import: no containerd socket: %w", err)
	}
	// --all-platforms: an archive's single image is imported even when its
	// config names no platform or another variant (unpacking is still for
	// this machine's platform).
	cmd := exec.CommandContext(ctx, ctr, "--address", socket, "--namespace", Namespace,
		"images", "import", "--all-platforms", tarPath)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return nil, fmt.Errorf("containerd: ctr images import %s: %v: %s", tarPath, err, msg)
	}
	return importedNames(out.String()), nil
}

// importedNames reads ctr import's output: "unpacking NAME (sha256:…)...done"
// per image unpacked.
func importedNames(out string) []string {
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "unpacking ")
		if !ok {
			continue
		}
		if name, _, ok := strings.Cut(rest, " "); ok && name != "" {
			names = append(names, name)
		}
	}
	return names
}

// Image is one image as the CRI runtime lists it.
type Image struct {
	// ID is the image's config digest ("sha256:…").
	ID          string
	RepoTags    []string
	RepoDigests []string
	// Size in bytes (compressed layers, as CRI reports it).
	Size   uint64
	Pinned bool
}

// ListImages lists the images the CRI runtime at socket (a path or
// unix:///path) knows, sorted by first tag then ID.
func ListImages(ctx context.Context, socket string) ([]Image, error) {
	c, err := remote.Dial(ctx, socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	resp, err := c.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return nil, err
	}
	images := make([]Image, 0, len(resp.Images))
	for _, im := range resp.Images {
		images = append(images, Image{ID: im.Id, RepoTags: im.RepoTags, RepoDigests: im.RepoDigests, Size: im.Size, Pinned: im.Pinned})
	}
	sort.Slice(images, func(i, j int) bool {
		a, b := firstOr(images[i].RepoTags), firstOr(images[j].RepoTags)
		if a != b {
			return a < b
		}
		return images[i].ID < images[j].ID
	})
	return images, nil
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return "\xff" // untagged images last
	}
	return s[0]
}

// EnsureImages imports those of images the CRI runtime at socket does not
// know by their first name, through a docker-archive written in tmpDir
// (removed afterwards), and returns the names imported. skiff builds the
// images it needs itself (pkg/image): the pod sandbox image above all.
func EnsureImages(ctx context.Context, socket, tmpDir string, images ...image.Image) ([]string, error) {
	if len(images) == 0 {
		return nil, nil
	}
	c, err := remote.Dial(ctx, socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var missing []image.Image
	for _, im := range images {
		if len(im.Names) == 0 {
			return nil, errors.New("containerd: an image to import has no name")
		}
		st, err := c.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: im.Names[0]}})
		if err != nil {
			return nil, err
		}
		if st.Image == nil {
			missing = append(missing, im)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	f, err := os.CreateTemp(tmpDir, "images-*.tar")
	if err != nil {
		return nil, fmt.Errorf("containerd: %w", err)
	}
	f.Close()
	defer os.Remove(f.Name())
	if err := image.WriteDockerArchiveFile(f.Name(), missing...); err != nil {
		return nil, fmt.Errorf("containerd: %w", err)
	}
	return ImportImage(ctx, socket, f.Name())
}
