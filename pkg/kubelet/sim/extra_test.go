package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

func TestStats(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		wantRate    uint64
		wantMem     uint64
	}{
		{name: "defaults", wantRate: defaultCPUNanoCores, wantMem: defaultMemoryBytes},
		{name: "annotated", annotations: map[string]string{AnnotationCPUUsage: "250m", AnnotationMemoryUsage: "64Mi"},
			wantRate: 250_000_000, wantMem: 64 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			r := New(Config{Clock: clk})
			sb := run(t, r, tt.annotations)
			id := start(t, r, sb, "c", "regular")
			clk.Step(10 * time.Second)
			cs, err := r.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.Stats.Cpu.UsageNanoCores.Value; got != tt.wantRate {
				t.Errorf("nanocores %d, want %d", got, tt.wantRate)
			}
			if got, want := cs.Stats.Cpu.UsageCoreNanoSeconds.Value, 10*tt.wantRate; got != want {
				t.Errorf("core nanoseconds %d, want %d", got, want)
			}
			if got := cs.Stats.Memory.WorkingSetBytes.Value; got != tt.wantMem {
				t.Errorf("working set %d, want %d", got, tt.wantMem)
			}
			ps, err := r.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{})
			if err != nil || len(ps.Stats) != 1 || ps.Stats[0].Linux.Memory.WorkingSetBytes.Value != tt.wantMem {
				t.Errorf("sandbox stats %v, %v", ps, err)
			}
			// A stopped container uses nothing.
			if _, err := r.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30}); err != nil {
				t.Fatal(err)
			}
			clk.Step(time.Minute)
			cs, _ = r.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
			if cs.Stats.Cpu.UsageNanoCores.Value != 0 || cs.Stats.Memory.WorkingSetBytes.Value != 0 {
				t.Errorf("stopped container stats %v", cs.Stats)
			}
			if _, err := r.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id}); err == nil {
				t.Error("ExecSync in an exited container succeeded")
			}
		})
	}
}

func TestStreamingUnsupported(t *testing.T) {
	r := New(Config{})
	if _, err := r.Exec(context.Background(), &runtimeapi.ExecRequest{}); !errors.Is(err, cri.ErrUnsupported) {
		t.Errorf("Exec: %v, want ErrUnsupported", err)
	}
	if _, err := r.PortForward(context.Background(), &runtimeapi.PortForwardRequest{}); !errors.Is(err, cri.ErrUnsupported) {
		t.Errorf("PortForward: %v, want ErrUnsupported", err)
	}
}
