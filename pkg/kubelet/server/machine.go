package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// MemoryReader reads the node's memory: its capacity and working set
// (pkg/kubelet's HostMachine).
type MemoryReader interface {
	Memory(ctx context.Context) (capacity, workingSet uint64, err error)
}

// MachineStats measures the machine for Config.NodeStats: cumulative CPU
// of the root cgroup (cgroup v1 cpuacct.usage, v2 cpu.stat usage_usec,
// else the busy time of /proc/stat), its rate since the previous call as
// usageNanoCores, and memory from m (availableBytes is capacity minus the
// working set).
func MachineStats(m MemoryReader, clk clock.Clock) func(ctx context.Context) (*NodeStats, error) {
	if clk == nil {
		clk = clock.Real{}
	}
	var mu sync.Mutex
	var lastCPU uint64
	var lastAt time.Time
	return func(ctx context.Context) (*NodeStats, error) {
		now := clk.Now()
		n := &NodeStats{}
		if cpu, err := machineCPU(); err == nil {
			n.CPU = &CPUStats{Time: metav1.NewTime(now), UsageCoreNanoSeconds: u64(cpu)}
			mu.Lock()
			if !lastAt.IsZero() && now.After(lastAt) && cpu >= lastCPU {
				n.CPU.UsageNanoCores = u64(uint64(float64(cpu-lastCPU) / now.Sub(lastAt).Seconds()))
			}
			lastCPU, lastAt = cpu, now
			mu.Unlock()
		}
		if m != nil {
			capacity, ws, err := m.Memory(ctx)
			if err == nil {
				n.Memory = &MemoryStats{Time: metav1.NewTime(now), WorkingSetBytes: u64(ws), UsageBytes: u64(ws), AvailableBytes: u64(capacity - min(ws, capacity))}
			}
		}
		if n.CPU == nil && n.Memory == nil {
			return nil, errors.New("cannot measure the machine")
		}
		return n, nil
	}
}

// machineCPU is the machine's cumulative CPU time in nanoseconds.
func machineCPU() (uint64, error) {
	if b, err := os.ReadFile("/sys/fs/cgroup/cpuacct/cpuacct.usage"); err == nil {
		return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/cpu.stat"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "usage_usec "); ok {
				us, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				return us * 1000, err
			}
		}
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, errors.New("unexpected /proc/stat")
	}
	var busy uint64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseUint(v, 10, 64)
		busy += n
	}
	return busy * uint64(time.Second/100), nil // USER_HZ is 100
}
