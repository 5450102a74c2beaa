package kubelet

import (
	"syscall"

	"github.com/skiff-sh/skiff/pkg/kubelet/gc"
)

func statfs(path string) (gc.FsStats, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return gc.FsStats{}, err
	}
	bs := uint64(st.Bsize)
	return gc.FsStats{CapacityBytes: st.Blocks * bs, AvailableBytes: st.Bavail * bs, Inodes: st.Files, InodesFree: st.Ffree}, nil
}

func runningProcesses() (uint64, error) {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0, err
	}
	return uint64(info.Procs), nil
}
