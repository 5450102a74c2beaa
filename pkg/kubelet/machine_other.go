//go:build !linux

package kubelet

import (
	"errors"

	"github.com/skiff-sh/skiff/pkg/kubelet/gc"
)

func statfs(string) (gc.FsStats, error) {
	return gc.FsStats{}, errors.New("statfs: not supported on this OS")
}

func runningProcesses() (uint64, error) {
	return 0, errors.New("process count: not supported on this OS")
}
