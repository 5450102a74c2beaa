package gc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// ImagePolicy is upstream's image GC policy.
type ImagePolicy struct {
	// HighThresholdPercent: image fs usage at or above which images are
	// collected (85).
	HighThresholdPercent int
	// LowThresholdPercent: usage collection brings the fs under (80).
	LowThresholdPercent int
	// MinAge: an image detected more recently is kept (2 min).
	MinAge time.Duration
}

// DefaultImagePolicy is the kubelet's default: 85 %, 80 %, 2 min.
func DefaultImagePolicy() ImagePolicy {
	return ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute}
}

// Validate checks the thresholds as upstream's NewImageGCManager.
func (p ImagePolicy) Validate() error {
	switch {
	case p.HighThresholdPercent < 0 || p.HighThresholdPercent > 100:
		return fmt.Errorf("invalid HighThresholdPercent %d, must be in range [0-100]", p.HighThresholdPercent)
	case p.LowThresholdPercent < 0 || p.LowThresholdPercent > 100:
		return fmt.Errorf("invalid LowThresholdPercent %d, must be in range [0-100]", p.LowThresholdPercent)
	case p.LowThresholdPercent > p.HighThresholdPercent:
		return fmt.Errorf("LowThresholdPercent %d can not be higher than HighThresholdPercent %d", p.LowThresholdPercent, p.HighThresholdPercent)
	}
	return nil
}

// FsStats is a filesystem's size and what is left of it.
type FsStats struct {
	CapacityBytes, AvailableBytes uint64
	Inodes, InodesFree            uint64
}

// Event reasons of image garbage collection (upstream's).
const (
	ReasonFreeDiskSpaceFailed = "FreeDiskSpaceFailed"
	ReasonImageGCFailed       = "ImageGCFailed"
	ReasonInvalidDiskCapacity = "InvalidDiskCapacity"
	ReasonContainerGCFailed   = "ContainerGCFailed"
)

// ImageGC removes unused images when the image filesystem fills up, as
// upstream's realImageGCManager (without MaxAge).
type ImageGC struct {
	Runtime cri.RuntimeService
	Images  cri.ImageService
	Policy  ImagePolicy
	Clock   clock.Clock
	// SandboxImage is never removed (the pause image; containerd 1.6 does
	// not report it pinned).
	SandboxImage string
	// FsStats reports the image filesystem (ImageFsInfo's first
	// filesystem is given).
	FsStats func(ctx context.Context, fs *runtimeapi.FilesystemUsage) (FsStats, error)
	// Event records a Warning event about the node.
	Event func(eventtype, reason, message string)

	mu      sync.Mutex
	records map[string]*imageRecord // by image ID
	failed  bool                    // the last Collect failed
}

type imageRecord struct {
	firstDetected, lastUsed time.Time
	size                    uint64
	keep                    bool // pinned or the sandbox image
}

// Detect lists the images and the containers, and records when each image
// was first seen and last used (upstream's detectImages).
func (g *ImageGC) Detect(ctx context.Context) (map[string]bool, error) {
	now := g.Clock.Now()
	imgs, err := g.Images.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return nil, err
	}
	cs, err := g.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, err
	}
	inUse := map[string]bool{}
	for _, c := range cs.Containers {
		for _, id := range []string{c.ImageRef, c.ImageId, c.GetImage().GetImage()} {
			if id != "" {
				inUse[id] = true
			}
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.records == nil {
		g.records = map[string]*imageRecord{}
	}
	seen := map[string]bool{}
	for _, img := range imgs.Images {
		seen[img.Id] = true
		r := g.records[img.Id]
		if r == nil {
			r = &imageRecord{firstDetected: now}
			g.records[img.Id] = r
		}
		used := inUse[img.Id]
		for _, t := range img.RepoTags {
			used = used || inUse[t]
		}
		for _, d := range img.RepoDigests {
			used = used || inUse[d]
		}
		if used {
			r.lastUsed = now
			inUse[img.Id] = true
		}
		r.size = img.Size
		r.keep = img.Pinned || g.SandboxImage != "" && (img.Id == g.SandboxImage || contains(img.RepoTags, g.SandboxImage) || contains(img.RepoDigests, g.SandboxImage))
	}
	for id := range g.records {
		if !seen[id] {
			delete(g.records, id)
		}
	}
	return inUse, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type candidate struct {
	id string
	imageRecord
}

// inEvictionOrder: the unused images, least recently used first (then
// first detected).
func (g *ImageGC) inEvictionOrder(ctx context.Context) ([]candidate, error) {
	inUse, err := g.Detect(ctx)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	var out []candidate
	for id, r := range g.records {
		if !inUse[id] && !r.keep {
			out = append(out, candidate{id, *r})
		}
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].lastUsed.Equal(out[j].lastUsed) {
			if out[i].firstDetected.Equal(out[j].firstDetected) {
				return out[i].id < out[j].id
			}
			return out[i].firstDetected.Before(out[j].firstDetected)
		}
		return out[i].lastUsed.Before(out[j].lastUsed)
	})
	return out, nil
}

// GarbageCollect frees images when the image fs usage is at or above
// HighThresholdPercent, down to LowThresholdPercent; a shortfall records
// FreeDiskSpaceFailed and is an error.
func (g *ImageGC) GarbageCollect(ctx context.Context) error {
	now := g.Clock.Now()
	images, err := g.inEvictionOrder(ctx)
	if err != nil {
		return err
	}
	info, err := g.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		return err
	}
	if len(info.ImageFilesystems) == 0 {
		return errors.New("no image filesystem reported by the runtime")
	}
	fs, err := g.FsStats(ctx, info.ImageFilesystems[0])
	if err != nil {
		return err
	}
	capacity, available := int64(fs.CapacityBytes), int64(fs.AvailableBytes)
	available = min(available, capacity)
	if capacity == 0 {
		err := errors.New("invalid capacity 0 on image filesystem")
		g.event(corev1.EventTypeWarning, ReasonInvalidDiskCapacity, err.Error())
		return err
	}
	usage := 100 - int(available*100/capacity)
	if usage < g.Policy.HighThresholdPercent {
		return nil
	}
	toFree := capacity*int64(100-g.Policy.LowThresholdPercent)/100 - available
	freed, err := g.freeSpace(ctx, toFree, now, images)
	if err != nil {
		return err
	}
	if freed < toFree {
		err := fmt.Errorf("Failed to garbage collect required amount of images. Attempted to free %d bytes, but only found %d bytes eligible to free.", toFree, freed)
		g.event(corev1.EventTypeWarning, ReasonFreeDiskSpaceFailed, err.Error())
		return err
	}
	return nil
}

// DeleteUnusedImages removes every unused image older than MinAge
// (disk-pressure reclaim).
func (g *ImageGC) DeleteUnusedImages(ctx context.Context) error {
	images, err := g.inEvictionOrder(ctx)
	if err != nil {
		return err
	}
	_, err = g.freeSpace(ctx, math.MaxInt64, g.Clock.Now(), images)
	return err
}

func (g *ImageGC) freeSpace(ctx context.Context, toFree int64, now time.Time, images []candidate) (int64, error) {
	var freed int64
	var errs []error
	for _, img := range images {
		if !img.lastUsed.Before(now) && !img.lastUsed.IsZero() {
			continue // used right now
		}
		if now.Sub(img.firstDetected) < g.Policy.MinAge {
			continue
		}
		if _, err := g.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: img.id}}); err != nil {
			errs = append(errs, err)
			continue
		}
		g.mu.Lock()
		delete(g.records, img.id)
		g.mu.Unlock()
		freed += int64(img.size)
		if freed >= toFree {
			break
		}
	}
	if len(errs) > 0 {
		return freed, fmt.Errorf("wanted to free %d bytes, but freed %d bytes space with errors in image deletion: %w", toFree, freed, errors.Join(errs...))
	}
	return freed, nil
}

func (g *ImageGC) event(eventtype, reason, message string) {
	if g.Event != nil {
		g.Event(eventtype, reason, message)
	}
}
