package kubelet

import (
	"os"
	"syscall"

	"github.com/skiff-sh/skiff/pkg/kubelet/gc"
)

func statfs(path string) (gc.FsStats, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return gc.FsStats{}, err
	}
	bs := uint64(st.Bsize)
	// What the kubelet's user may use: a root kubelet (and its root
	// containers) may use the blocks reserved for root too (upstream's
	// cAdvisor reports Bavail whoever runs it; on machines reserving
	// much of the disk for root that reads as DiskPressure on an
	// almost empty disk).
	avail := st.Bavail
	if os.Geteuid() == 0 {
		avail = st.Bfree
	}
	return gc.FsStats{CapacityBytes: st.Blocks * bs, AvailableBytes: avail * bs, Inodes: st.Files, InodesFree: st.Ffree}, nil
}

func runningProcesses() (uint64, error) {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0, err
	}
	return uint64(info.Procs), nil
}
