package sim

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// Pod annotations giving a simulated container's resource usage (every
// container of the pod uses this much), so that `kubectl top` and the
// HPA have figures to work with on simulated nodes.
const (
	// AnnotationCPUUsage is a quantity of CPU, e.g. "250m" (default 1m).
	AnnotationCPUUsage = "sim.skiff.sh/cpu-usage"
	// AnnotationMemoryUsage is a quantity of memory, e.g. "64Mi" (default 4Mi).
	AnnotationMemoryUsage = "sim.skiff.sh/memory-usage"
)

const (
	defaultCPUNanoCores = 1_000_000 // 1m
	defaultMemoryBytes  = 4 << 20
)

func (r *Runtime) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.containers[req.GetContainerId()]; !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

func (r *Runtime) ReopenContainerLog(_ context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.containers[req.GetContainerId()]; !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}

// ExecSync succeeds without output in a running container: a simulated
// container passes every exec probe and hook.
func (r *Runtime) ExecSync(_ context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	if st, _, _, _, _ := c.state(r.cfg.Clock.Now()); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, fmt.Errorf("container %q is not running", c.id)
	}
	return &runtimeapi.ExecSyncResponse{ExitCode: 0}, nil
}

func (r *Runtime) Exec(context.Context, *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return nil, fmt.Errorf("exec into a simulated container: %w", cri.ErrUnsupported)
}

func (r *Runtime) Attach(context.Context, *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return nil, fmt.Errorf("attach to a simulated container: %w", cri.ErrUnsupported)
}

func (r *Runtime) PortForward(context.Context, *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return nil, fmt.Errorf("port-forward to a simulated pod: %w", cri.ErrUnsupported)
}

// usage is a container's simulated CPU rate (nanocores) and memory.
func (r *Runtime) usage(c *container) (uint64, uint64) {
	cpu, mem := uint64(defaultCPUNanoCores), uint64(defaultMemoryBytes)
	s := r.sandboxes[c.sandboxID]
	if s == nil {
		return cpu, mem
	}
	if q, err := resource.ParseQuantity(s.annotations[AnnotationCPUUsage]); err == nil {
		cpu = uint64(q.ScaledValue(resource.Nano))
	}
	if q, err := resource.ParseQuantity(s.annotations[AnnotationMemoryUsage]); err == nil {
		mem = uint64(q.Value())
	}
	return cpu, mem
}

// stats of a container at now: cumulative CPU is the rate times the time
// it ran; a container that is not running uses no memory.
func (r *Runtime) stats(c *container, now time.Time) *runtimeapi.ContainerStats {
	st, started, finished, _, _ := c.state(now)
	rate, mem := r.usage(c)
	var ran time.Duration
	switch st {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		ran = now.Sub(started)
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		ran, mem = finished.Sub(started), 0
	default:
		mem = 0
	}
	if st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		rate = 0
	}
	ts := now.UnixNano()
	return &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: c.id, Metadata: c.meta, Labels: c.labels, Annotations: c.annotations},
		Cpu: &runtimeapi.CpuUsage{Timestamp: ts,
			UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: uint64(ran.Seconds() * float64(rate))},
			UsageNanoCores:       &runtimeapi.UInt64Value{Value: rate}},
		Memory: &runtimeapi.MemoryUsage{Timestamp: ts,
			WorkingSetBytes: &runtimeapi.UInt64Value{Value: mem}, UsageBytes: &runtimeapi.UInt64Value{Value: mem},
			RssBytes: &runtimeapi.UInt64Value{Value: mem}},
		WritableLayer: &runtimeapi.FilesystemUsage{Timestamp: ts, UsedBytes: &runtimeapi.UInt64Value{}, InodesUsed: &runtimeapi.UInt64Value{}},
	}
}

func (r *Runtime) ContainerStats(_ context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	return &runtimeapi.ContainerStatsResponse{Stats: r.stats(c, r.cfg.Clock.Now())}, nil
}

func (r *Runtime) ListContainerStats(_ context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Clock.Now()
	var out []*runtimeapi.ContainerStats
	for _, c := range r.containers {
		if f.GetId() != "" && c.id != f.GetId() || f.GetPodSandboxId() != "" && c.sandboxID != f.GetPodSandboxId() ||
			!matches(c.labels, f.GetLabelSelector()) {
			continue
		}
		out = append(out, r.stats(c, now))
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: out}, nil
}

// sandboxStats sums the sandbox's containers.
func (r *Runtime) sandboxStats(s *sandbox, now time.Time) *runtimeapi.PodSandboxStats {
	ts := now.UnixNano()
	var cpuTotal, rate, mem uint64
	var cs []*runtimeapi.ContainerStats
	for _, c := range r.containers {
		if c.sandboxID != s.id {
			continue
		}
		st := r.stats(c, now)
		cs = append(cs, st)
		cpuTotal += st.Cpu.UsageCoreNanoSeconds.Value
		rate += st.Cpu.UsageNanoCores.Value
		mem += st.Memory.WorkingSetBytes.Value
	}
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: s.id, Metadata: s.meta, Labels: s.labels, Annotations: s.annotations},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu: &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: cpuTotal},
				UsageNanoCores: &runtimeapi.UInt64Value{Value: rate}},
			Memory: &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: &runtimeapi.UInt64Value{Value: mem},
				UsageBytes: &runtimeapi.UInt64Value{Value: mem}, RssBytes: &runtimeapi.UInt64Value{Value: mem}},
			Containers: cs,
		},
	}
}

func (r *Runtime) PodSandboxStats(_ context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: r.sandboxStats(s, r.cfg.Clock.Now())}, nil
}

func (r *Runtime) ListPodSandboxStats(_ context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Clock.Now()
	var out []*runtimeapi.PodSandboxStats
	for _, s := range r.sandboxes {
		if f.GetId() != "" && s.id != f.GetId() || !matches(s.labels, f.GetLabelSelector()) {
			continue
		}
		out = append(out, r.sandboxStats(s, now))
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: out}, nil
}

// UpdateRuntimeConfig takes the node's pod CIDR (comma separated, the
// first IPv4 one, else the first) as the subnet of new pods' IPs; pods
// already running keep theirs.
func (r *Runtime) UpdateRuntimeConfig(_ context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	cidrs := req.GetRuntimeConfig().GetNetworkConfig().GetPodCidr()
	if cidrs == "" {
		return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
	}
	var chosen netip.Prefix
	for _, c := range strings.Split(cidrs, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("pod CIDR %q: %w", c, err)
		}
		if !chosen.IsValid() || (p.Addr().Is4() && !chosen.Addr().Is4()) {
			chosen = p.Masked()
		}
	}
	r.mu.Lock()
	r.cfg.PodSubnet, r.podCIDR = chosen, true
	r.mu.Unlock()
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

// ImageFsInfo reports the simulated images' sizes as used bytes.
func (r *Runtime) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var used uint64
	for _, img := range r.images {
		used += img.Size
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		Timestamp: r.cfg.Clock.Now().UnixNano(), FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/sim/images"},
		UsedBytes: &runtimeapi.UInt64Value{Value: used}, InodesUsed: &runtimeapi.UInt64Value{Value: uint64(len(r.images))}}}}, nil
}
