package kubelet

import (
	"context"
	"os"
	"runtime"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// HostMachine reads this machine: figures that can be wrong only if the
// reading is (memory and disk sizes, a working set within the memory, a
// process count within pid_max).
func TestHostMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("HostMachine reads /proc and statfs (Linux)")
	}
	ctx := context.Background()
	m := HostMachine{RootDir: t.TempDir()}
	capacity, ws, err := m.Memory(ctx)
	if err != nil || capacity < 64<<20 || ws == 0 || ws > capacity {
		t.Errorf("memory %d, working set %d, %v", capacity, ws, err)
	}
	fs, err := m.NodeFs(ctx)
	if err != nil || fs.CapacityBytes == 0 || fs.AvailableBytes > fs.CapacityBytes || fs.Inodes > 0 && fs.InodesFree > fs.Inodes {
		t.Errorf("node fs %+v, %v", fs, err)
	}
	img, err := m.ImageFs(ctx, &runtimeapi.FilesystemUsage{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: os.TempDir()}})
	if err != nil || img.CapacityBytes == 0 {
		t.Errorf("image fs %+v, %v", img, err)
	}
	if _, err := m.ImageFs(ctx, &runtimeapi.FilesystemUsage{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/does/not/exist"}}); err == nil {
		t.Error("statfs of a missing mountpoint succeeded")
	}
	max, running, err := m.PIDs(ctx)
	if err != nil || max == 0 || running == 0 || running > max {
		t.Errorf("pids %d of %d, %v", running, max, err)
	}
}
