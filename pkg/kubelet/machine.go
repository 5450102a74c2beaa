package kubelet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/gc"
)

// Machine is the host as garbage collection and eviction see it
// (Config.Machine); tests and hollow nodes fake it.
type Machine interface {
	// Memory is the node's memory capacity and working set.
	Memory(ctx context.Context) (capacity, workingSet uint64, err error)
	// NodeFs is the filesystem holding the kubelet's root directory.
	NodeFs(ctx context.Context) (gc.FsStats, error)
	// ImageFs is the filesystem holding the runtime's images (fs is
	// ImageFsInfo's: its mountpoint).
	ImageFs(ctx context.Context, fs *runtimeapi.FilesystemUsage) (gc.FsStats, error)
	// PIDs is the most processes the node may run and how many run.
	PIDs(ctx context.Context) (max, running uint64, err error)
}

// HostMachine reads the machine the kubelet runs on (a real runtime):
// /proc/meminfo and the root memory cgroup, statfs of RootDir and of the
// runtime's image mountpoint, /proc/sys/kernel/pid_max and the running
// processes.
type HostMachine struct {
	// RootDir is the kubelet's root directory (default /var/lib/kubelet;
	// "/" when it does not exist).
	RootDir string
}

// Memory implements Machine: MemTotal, and the root cgroup's usage
// without inactive file pages (upstream's working set) when cgroup v1's
// memory controller is readable, else MemTotal - MemAvailable.
func (m HostMachine) Memory(context.Context) (uint64, uint64, error) {
	info, err := readKV("/proc/meminfo")
	if err != nil {
		return 0, 0, err
	}
	total, avail := info["MemTotal"]*1024, info["MemAvailable"]*1024
	if total == 0 {
		return 0, 0, errors.New("no MemTotal in /proc/meminfo")
	}
	ws := total - min(avail, total)
	if b, err := os.ReadFile("/sys/fs/cgroup/memory/memory.usage_in_bytes"); err == nil {
		if usage, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			if st, err := readKV("/sys/fs/cgroup/memory/memory.stat"); err == nil {
				inactive := st["total_inactive_file"]
				ws = usage - min(inactive, usage)
			}
		}
	}
	return total, min(ws, total), nil
}

// readKV reads "key: value" or "key value" lines.
func readKV(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(strings.Replace(sc.Text(), ":", " ", 1))
		if len(f) >= 2 {
			if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				out[f[0]] = v
			}
		}
	}
	return out, nil
}

func (m HostMachine) rootDir() string {
	d := m.RootDir
	if d == "" {
		d = "/var/lib/kubelet"
	}
	if _, err := os.Stat(d); err != nil {
		return "/"
	}
	return d
}

// NodeFs implements Machine.
func (m HostMachine) NodeFs(context.Context) (gc.FsStats, error) { return statfs(m.rootDir()) }

// ImageFs implements Machine: the filesystem holding the mountpoint (the
// node fs when the runtime names none).
func (m HostMachine) ImageFs(_ context.Context, fs *runtimeapi.FilesystemUsage) (gc.FsStats, error) {
	p := fs.GetFsId().GetMountpoint()
	if p == "" {
		p = m.rootDir()
	}
	return statfs(p)
}

// PIDs implements Machine: pid_max (bounded by threads-max) and the
// processes running.
func (m HostMachine) PIDs(context.Context) (uint64, uint64, error) {
	read := func(p string) uint64 {
		b, _ := os.ReadFile(p)
		v, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return v
	}
	max := read("/proc/sys/kernel/pid_max")
	if t := read("/proc/sys/kernel/threads-max"); t > 0 && t < max {
		max = t
	}
	if max == 0 {
		return 0, 0, errors.New("cannot read /proc/sys/kernel/pid_max")
	}
	running, err := runningProcesses()
	return max, running, err
}

// simMachine is a machine of Config.Capacity whose usage is what the
// runtime reports (the simulated runtime's per-pod annotations): memory
// is the running containers' working sets, the node fs (ephemeral-storage
// capacity, 1 inode per 64 KiB) holds the containers' writable layers
// and, being the same disk, the images.
type simMachine struct{ k *Kubelet }

func (m simMachine) Memory(ctx context.Context) (uint64, uint64, error) {
	q := m.k.capacity()[corev1.ResourceMemory]
	resp, err := m.k.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		return 0, 0, err
	}
	var ws uint64
	for _, s := range resp.Stats {
		ws += s.GetMemory().GetWorkingSetBytes().GetValue()
	}
	return uint64(q.Value()), ws, nil
}

func (m simMachine) disk(ctx context.Context) (gc.FsStats, uint64, uint64, error) {
	q := m.k.capacity()[corev1.ResourceEphemeralStorage]
	capacity := uint64(q.Value())
	fs := gc.FsStats{CapacityBytes: capacity, Inodes: capacity / (64 << 10)}
	resp, err := m.k.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		return fs, 0, 0, err
	}
	var used, inodes uint64
	for _, s := range resp.Stats {
		used += s.GetWritableLayer().GetUsedBytes().GetValue()
		inodes += s.GetWritableLayer().GetInodesUsed().GetValue()
	}
	info, err := m.k.cfg.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		return fs, 0, 0, err
	}
	for _, f := range info.ImageFilesystems {
		used += f.GetUsedBytes().GetValue()
		inodes += f.GetInodesUsed().GetValue()
	}
	return fs, used, inodes, nil
}

func (m simMachine) NodeFs(ctx context.Context) (gc.FsStats, error) {
	fs, used, inodes, err := m.disk(ctx)
	fs.AvailableBytes = fs.CapacityBytes - min(used, fs.CapacityBytes)
	fs.InodesFree = fs.Inodes - min(inodes, fs.Inodes)
	return fs, err
}

func (m simMachine) ImageFs(ctx context.Context, _ *runtimeapi.FilesystemUsage) (gc.FsStats, error) {
	return m.NodeFs(ctx)
}

// PIDs: upstream's default pid_max, a process per running container.
func (m simMachine) PIDs(ctx context.Context) (uint64, uint64, error) {
	resp, err := m.k.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{
		Filter: &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}})
	if err != nil {
		return 0, 0, err
	}
	return 4194304, uint64(len(resp.Containers)), nil
}
