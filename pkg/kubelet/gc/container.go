package gc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// ContainerPolicy is upstream's container GC policy.
type ContainerPolicy struct {
	// MinAge: a dead container younger than this is kept.
	MinAge time.Duration
	// MaxPerPodContainer: dead containers kept per (pod, container name);
	// negative: no limit.
	MaxPerPodContainer int
	// MaxContainers: dead containers kept on the node; negative: no limit.
	MaxContainers int
}

// DefaultContainerPolicy is the kubelet's default: MinAge 0,
// MaxPerPodContainer 1, MaxContainers -1.
func DefaultContainerPolicy() ContainerPolicy {
	return ContainerPolicy{MinAge: 0, MaxPerPodContainer: 1, MaxContainers: -1}
}

// PodState tells the collector what the kubelet knows of a pod (upstream's
// podStateProvider).
type PodState interface {
	// ShouldPodContentBeRemoved: the pod is unknown to the kubelet, was
	// evicted, or was deleted and has terminated: all of its dead
	// containers and sandboxes go.
	ShouldPodContentBeRemoved(uid types.UID) bool
	// ShouldPodRuntimeBeRemoved: the pod is unknown or has terminated
	// (DeleteAllUnusedContainers removes its dead containers too).
	ShouldPodRuntimeBeRemoved(uid types.UID) bool
}

// ContainerGC removes dead containers and sandboxes, as upstream's
// containerGC.
type ContainerGC struct {
	Runtime cri.RuntimeService
	Policy  ContainerPolicy
	Pods    PodState
	Clock   clock.Clock
	// PodLogDir: the pods' log directories (<dir>/<ns>_<name>_<uid>) of
	// pods whose content is removable are removed; "": none.
	PodLogDir string
}

type gcContainer struct {
	id, name string
	created  time.Time
	unknown  bool
}

type unit struct {
	uid  types.UID
	name string
}

// GarbageCollect is one pass: dead containers beyond the policy, then
// sandboxes without containers (all but the newest of a pod), then the
// log directories of removable pods.
func (g *ContainerGC) GarbageCollect(ctx context.Context) error {
	return g.collect(ctx, false)
}

// DeleteAllUnusedContainers also removes every dead container of
// terminated pods (disk-pressure reclaim, upstream's).
func (g *ContainerGC) DeleteAllUnusedContainers(ctx context.Context) error {
	return g.collect(ctx, true)
}

func (g *ContainerGC) collect(ctx context.Context, evictNonDeleted bool) error {
	var errs []error
	if err := g.evictContainers(ctx, evictNonDeleted); err != nil {
		errs = append(errs, err)
	}
	if err := g.evictSandboxes(ctx, evictNonDeleted); err != nil {
		errs = append(errs, err)
	}
	if err := g.evictLogDirs(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (g *ContainerGC) removable(uid types.UID, evictNonDeleted bool) bool {
	return g.Pods.ShouldPodContentBeRemoved(uid) || evictNonDeleted && g.Pods.ShouldPodRuntimeBeRemoved(uid)
}

// evictableContainers groups the dead containers older than MinAge by
// (pod, name). A container is dead when it exited or its state is
// unknown; a CREATED container (never started, or starting) counts only
// when a newer container of the same name exists (skiff's: a container
// that the simulated runtime keeps CREATED for its start latency is not
// mistaken for a leftover, so the previous one survives for `kubectl
// logs --previous`).
func (g *ContainerGC) evictableContainers(ctx context.Context) (map[unit][]gcContainer, error) {
	resp, err := g.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, err
	}
	newest := map[unit]time.Time{}
	for _, c := range resp.Containers {
		u := unit{types.UID(c.Labels[cri.LabelPodUID]), c.GetMetadata().GetName()}
		if t := time.Unix(0, c.CreatedAt); t.After(newest[u]) {
			newest[u] = t
		}
	}
	cutoff := g.Clock.Now().Add(-g.Policy.MinAge)
	units := map[unit][]gcContainer{}
	for _, c := range resp.Containers {
		if c.Labels[cri.LabelPodUID] == "" {
			continue // not the kubelet's
		}
		u := unit{types.UID(c.Labels[cri.LabelPodUID]), c.GetMetadata().GetName()}
		created := time.Unix(0, c.CreatedAt)
		switch c.State {
		case runtimeapi.ContainerState_CONTAINER_RUNNING:
			continue
		case runtimeapi.ContainerState_CONTAINER_CREATED:
			if !created.Before(newest[u]) {
				continue
			}
		}
		if cutoff.Before(created) {
			continue
		}
		units[u] = append(units[u], gcContainer{id: c.Id, name: u.name, created: created,
			unknown: c.State == runtimeapi.ContainerState_CONTAINER_UNKNOWN})
	}
	return units, nil
}

func (g *ContainerGC) evictContainers(ctx context.Context, evictNonDeleted bool) error {
	units, err := g.evictableContainers(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for u, cs := range units {
		if g.removable(u.uid, evictNonDeleted) {
			errs = append(errs, g.removeOldest(ctx, cs, len(cs))...)
			delete(units, u)
		}
	}
	enforce := func(max int) {
		for u, cs := range units {
			if n := len(cs) - max; n > 0 {
				errs = append(errs, g.removeOldest(ctx, cs, n)...)
				units[u] = sortNewestFirst(cs)[:max]
			}
		}
	}
	if g.Policy.MaxPerPodContainer >= 0 {
		enforce(g.Policy.MaxPerPodContainer)
	}
	if g.Policy.MaxContainers >= 0 {
		total := 0
		for _, cs := range units {
			total += len(cs)
		}
		if total > g.Policy.MaxContainers && len(units) > 0 {
			enforce(max(g.Policy.MaxContainers/len(units), 1))
			var all []gcContainer
			for _, cs := range units {
				all = append(all, cs...)
			}
			if len(all) > g.Policy.MaxContainers {
				errs = append(errs, g.removeOldest(ctx, all, len(all)-g.Policy.MaxContainers)...)
			}
		}
	}
	return errors.Join(errs...)
}

func sortNewestFirst(cs []gcContainer) []gcContainer {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].created.After(cs[j].created) })
	return cs
}

// removeOldest removes the n oldest of cs (a container in an unknown
// state is stopped first), with its log file.
func (g *ContainerGC) removeOldest(ctx context.Context, cs []gcContainer, n int) []error {
	var errs []error
	cs = sortNewestFirst(cs)
	for i := len(cs) - 1; i >= len(cs)-n && i >= 0; i-- {
		c := cs[i]
		if c.unknown {
			if _, err := g.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.id}); err != nil && !cri.IsNotFound(err) {
				errs = append(errs, err)
				continue
			}
		}
		// The container's log file goes with it, as upstream's
		// removeContainerLog.
		if st, err := g.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.id}); err == nil {
			if p := st.GetStatus().GetLogPath(); filepath.IsAbs(p) {
				os.Remove(p)
			}
		}
		if _, err := g.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.id}); err != nil && !cri.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errs
}

// evictSandboxes removes sandboxes that are not ready and hold no
// container: all of them for removable pods, all but the newest for the
// others.
func (g *ContainerGC) evictSandboxes(ctx context.Context, evictNonDeleted bool) error {
	cs, err := g.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return err
	}
	sbs, err := g.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, c := range cs.Containers {
		used[c.PodSandboxId] = true
	}
	byPod := map[types.UID][]*runtimeapi.PodSandbox{}
	for _, s := range sbs.Items {
		uid := types.UID(s.GetMetadata().GetUid())
		if uid == "" {
			uid = types.UID(s.Labels[cri.LabelPodUID])
		}
		if uid == "" {
			continue
		}
		byPod[uid] = append(byPod[uid], s)
	}
	var errs []error
	for uid, list := range byPod {
		sort.SliceStable(list, func(i, j int) bool { return list[i].CreatedAt > list[j].CreatedAt })
		keep := 1
		if g.removable(uid, evictNonDeleted) {
			keep = 0
		}
		for _, s := range list[min(keep, len(list)):] {
			if s.State == runtimeapi.PodSandboxState_SANDBOX_READY || used[s.Id] {
				continue
			}
			if _, err := g.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil && !cri.IsNotFound(err) {
				errs = append(errs, err)
				continue
			}
			if _, err := g.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil && !cri.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// evictLogDirs removes <PodLogDir>/<ns>_<name>_<uid> of removable pods.
func (g *ContainerGC) evictLogDirs() error {
	if g.PodLogDir == "" {
		return nil
	}
	entries, err := os.ReadDir(g.PodLogDir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		i := strings.LastIndex(e.Name(), "_")
		if !e.IsDir() || i < 0 {
			continue
		}
		if g.Pods.ShouldPodContentBeRemoved(types.UID(e.Name()[i+1:])) {
			if err := os.RemoveAll(filepath.Join(g.PodLogDir, e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
