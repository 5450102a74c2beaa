package kubelet

import (
	"context"
	"os"
	goruntime "runtime"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/skiff-sh/skiff/pkg/kubelet/eviction"
)

// MaxPods is the pods a node takes (upstream's --max-pods default).
const MaxPods = 110

// Capacity is the machine's capacity as upstream's kubelet reports it
// (from cAdvisor there): the CPUs this process may use, MemTotal, the
// size of the filesystem holding the root directory as
// ephemeral-storage, MaxPods, and no huge pages.
func (m HostMachine) Capacity(ctx context.Context) (corev1.ResourceList, error) {
	memory, _, err := m.Memory(ctx)
	if err != nil {
		return nil, err
	}
	fs, err := m.NodeFs(ctx)
	if err != nil {
		return nil, err
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(goruntime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(int64(memory), resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(fs.CapacityBytes), resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(MaxPods, resource.DecimalSI),
		"hugepages-1Gi":                 *resource.NewQuantity(0, resource.BinarySI),
		"hugepages-2Mi":                 *resource.NewQuantity(0, resource.BinarySI),
	}, nil
}

// SystemInfo is the machine's part of the node's nodeInfo, read where
// upstream's kubelet reads it: /etc/machine-id, the DMI product UUID,
// the boot ID, uname's release, /etc/os-release's PRETTY_NAME. Fields it
// cannot read stay empty.
func (m HostMachine) SystemInfo() corev1.NodeSystemInfo {
	read := func(paths ...string) string {
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				if s := strings.TrimSpace(string(b)); s != "" {
					return s
				}
			}
		}
		return ""
	}
	info := corev1.NodeSystemInfo{
		MachineID:  read("/etc/machine-id", "/var/lib/dbus/machine-id"),
		SystemUUID: strings.ToUpper(read("/sys/class/dmi/id/product_uuid")),
		BootID:     read("/proc/sys/kernel/random/boot_id"),
		OSImage:    osImage(read("/etc/os-release", "/usr/lib/os-release")),
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		var b strings.Builder
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			b.WriteByte(byte(c))
		}
		info.KernelVersion = b.String()
	}
	return info
}

// osImage is os-release's PRETTY_NAME ("Linux" without one, as upstream).
func osImage(osRelease string) string {
	for _, l := range strings.Split(osRelease, "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return "Linux"
}

// capacityOf asks a machine that knows its capacity (HostMachine).
type capacityOf interface {
	Capacity(context.Context) (corev1.ResourceList, error)
}

// systemInfoOf asks a machine that knows its system information.
type systemInfoOf interface {
	SystemInfo() corev1.NodeSystemInfo
}

// allocatable is upstream's node allocatable: capacity less
// Config.Reserved (kube-reserved and system-reserved) and the hard
// eviction thresholds of memory.available and nodefs.available, never
// below zero.
func (k *Kubelet) allocatable(capacity corev1.ResourceList) corev1.ResourceList {
	out := capacity.DeepCopy()
	sub := func(name corev1.ResourceName, q resource.Quantity) {
		v, ok := out[name]
		if !ok {
			return
		}
		v.Sub(q)
		if v.Sign() < 0 {
			v = *resource.NewQuantity(0, v.Format)
		}
		out[name] = v
	}
	for name, q := range k.cfg.Reserved {
		sub(name, q)
	}
	th := k.cfg.EvictionThresholds
	if th == nil {
		th = eviction.DefaultThresholds()
	}
	for _, t := range th {
		if !t.IsHard() {
			continue
		}
		var name corev1.ResourceName
		switch t.Signal {
		case eviction.SignalMemoryAvailable:
			name = corev1.ResourceMemory
		case eviction.SignalNodeFsAvailable:
			name = corev1.ResourceEphemeralStorage
		default:
			continue
		}
		c, ok := capacity[name]
		if !ok {
			continue
		}
		sub(name, *t.Value.Of(&c))
	}
	return out
}
