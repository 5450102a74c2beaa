package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Container log rotation, as upstream's container log manager: every
// LogRotationPeriod (10 s) the log file of each running container that
// has grown past ContainerLogMaxSize (10Mi) is renamed to
// <log>.<YYYYmmdd-HHMMSS> and the runtime asked to reopen the file
// (ReopenContainerLog); of the rotated files the newest
// ContainerLogMaxFiles-1 are kept (5 files in all, the live one counted),
// the older removed. Upstream also gzips the rotated files but the
// newest; skiff keeps them plain. `kubectl logs` reads the live file, and
// follows it across a rotation.
const (
	DefaultContainerLogMaxSize  = 10 << 20
	DefaultContainerLogMaxFiles = 5
	logRotationPeriod           = 10 * time.Second
	rotatedTimestampFormat      = "20060102-150405"
)

// rotateLog rotates the log at path when it is larger than maxSize,
// keeping maxFiles files in all; reopen makes the runtime write a new
// file at path. It reports whether it rotated. A failed reopen puts the
// file back, as upstream's does.
func rotateLog(path string, maxSize int64, maxFiles int, now time.Time, reopen func() error) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if fi.Size() <= maxSize {
		return false, nil
	}
	rotated := path + "." + now.UTC().Format(rotatedTimestampFormat)
	if _, err := os.Stat(rotated); err == nil {
		rotated += fmt.Sprintf(".%d", now.UnixNano()) // two rotations within a second
	}
	if err := os.Rename(path, rotated); err != nil {
		return false, err
	}
	if err := reopen(); err != nil {
		if rerr := os.Rename(rotated, path); rerr != nil {
			return false, errors.Join(err, rerr)
		}
		return false, err
	}
	// Keep the newest maxFiles-1 rotated files.
	olds, err := filepath.Glob(path + ".*")
	if err != nil {
		return true, err
	}
	var kept []string
	for _, o := range olds {
		if !strings.HasSuffix(o, ".tmp") {
			kept = append(kept, o)
		}
	}
	sort.Strings(kept) // timestamps sort in time order
	for len(kept) > maxFiles-1 && len(kept) > 0 {
		if err := os.Remove(kept[0]); err != nil && !errors.Is(err, os.ErrNotExist) {
			return true, err
		}
		kept = kept[1:]
	}
	return true, nil
}

// logRotationLoop rotates the running containers' logs every
// logRotationPeriod (real runtimes only: simulated containers have no
// log files).
func (k *Kubelet) logRotationLoop(ctx context.Context) {
	if k.cfg.PodLogDir == "" {
		return
	}
	maxSize, maxFiles := k.cfg.ContainerLogMaxSize, k.cfg.ContainerLogMaxFiles
	if maxSize <= 0 {
		maxSize = DefaultContainerLogMaxSize
	}
	if maxFiles < 2 {
		maxFiles = DefaultContainerLogMaxFiles
	}
	t := k.clock.NewTicker(logRotationPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		list, err := k.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}})
		if err != nil {
			continue
		}
		for _, c := range list.Containers {
			st, err := k.cfg.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
			if err != nil || st.GetStatus().GetLogPath() == "" {
				continue
			}
			id := c.Id
			reopen := func() error {
				_, err := k.cfg.Runtime.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id})
				return err
			}
			if _, err := rotateLog(st.Status.LogPath, maxSize, maxFiles, k.clock.Now(), reopen); err != nil {
				k.log.Warn("rotating a container's log", "container", id, "path", st.Status.LogPath, "err", err)
			}
		}
	}
}
