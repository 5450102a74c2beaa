package kubelet

import (
	"context"
	goruntime "runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/skiff-sh/skiff/pkg/kubelet/eviction"
)

func TestAllocatable(t *testing.T) {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"), corev1.ResourcePods: resource.MustParse("110")}
	custom, err := eviction.ParseThresholds(map[string]string{"memory.available": "10%", "nodefs.available": "1Gi"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		reserved   corev1.ResourceList
		thresholds []eviction.Threshold
		want       map[corev1.ResourceName]string
	}{
		{name: "upstream's default hard thresholds", want: map[corev1.ResourceName]string{
			corev1.ResourceCPU: "4", corev1.ResourceMemory: "8092Mi", corev1.ResourceEphemeralStorage: "96636764000", corev1.ResourcePods: "110"}}, // 10% taken through a float32, as upstream
		{name: "reservations and custom thresholds", reserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			thresholds: custom, want: map[corev1.ResourceName]string{
				corev1.ResourceCPU: "3500m", corev1.ResourceEphemeralStorage: "99Gi", corev1.ResourcePods: "110"}},
		{name: "no thresholds", thresholds: []eviction.Threshold{}, want: map[corev1.ResourceName]string{corev1.ResourceMemory: "8Gi"}},
		{name: "never below zero", reserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}, want: map[corev1.ResourceName]string{corev1.ResourceCPU: "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &Kubelet{cfg: Config{Reserved: tt.reserved, EvictionThresholds: tt.thresholds}}
			got := k.allocatable(capacity)
			for name, want := range tt.want {
				q := got[name]
				if q.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("%s: %s, want %s", name, q.String(), want)
				}
			}
		})
	}
	// 10% of 8Gi (through a float32, as upstream's) with 1Gi reserved.
	k := &Kubelet{cfg: Config{Reserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}, EvictionThresholds: custom}}
	want := int64(8<<30) - 1<<30 - int64(float64(8<<30)*float64(float32(0.1)))
	if got := k.allocatable(capacity)[corev1.ResourceMemory]; got.Value() != want {
		t.Errorf("memory with a percentage threshold: %d, want %d", got.Value(), want)
	}
}

// TestHostMachine reads this machine: the figures are the host's.
func TestHostMachineCapacity(t *testing.T) {
	m := HostMachine{RootDir: t.TempDir()}
	c, err := m.Capacity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Cpu().Value(); got != int64(goruntime.NumCPU()) {
		t.Errorf("cpu %d, want %d", got, goruntime.NumCPU())
	}
	if c.Memory().Value() < 64<<20 || c.StorageEphemeral().Value() <= 0 || c.Pods().Value() != MaxPods {
		t.Errorf("capacity %v", c)
	}
	info := m.SystemInfo()
	if info.KernelVersion == "" || info.OSImage == "" || info.BootID == "" {
		t.Errorf("system info %+v", info)
	}
}

func TestOSImage(t *testing.T) {
	for in, want := range map[string]string{
		"NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n": "Debian GNU/Linux 12 (bookworm)",
		"ID=alpine\nPRETTY_NAME='Alpine Linux v3.20'":                                 "Alpine Linux v3.20",
		"": "Linux",
	} {
		if got := osImage(in); got != want {
			t.Errorf("osImage(%q) = %q, want %q", in, got, want)
		}
	}
}
