package server

import (
	"context"
	"net/http"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// The /stats/summary document: upstream's stats/v1alpha1 types (JSON
// field names as k8s.io/kubelet's), the fields skiff fills.

// Summary is a node's and its pods' resource usage.
type Summary struct {
	Node NodeStats  `json:"node"`
	Pods []PodStats `json:"pods"`
}

// NodeStats is the node's usage.
type NodeStats struct {
	NodeName         string           `json:"nodeName"`
	SystemContainers []ContainerStats `json:"systemContainers,omitempty"`
	StartTime        metav1.Time      `json:"startTime"`
	CPU              *CPUStats        `json:"cpu,omitempty"`
	Memory           *MemoryStats     `json:"memory,omitempty"`
	Fs               *FsStats         `json:"fs,omitempty"`
	Runtime          *RuntimeStats    `json:"runtime,omitempty"`
}

// RuntimeStats is the runtime's filesystems.
type RuntimeStats struct {
	ImageFs     *FsStats `json:"imageFs,omitempty"`
	ContainerFs *FsStats `json:"containerFs,omitempty"`
}

// PodStats is one pod's usage.
type PodStats struct {
	PodRef           PodReference     `json:"podRef"`
	StartTime        metav1.Time      `json:"startTime"`
	Containers       []ContainerStats `json:"containers"`
	CPU              *CPUStats        `json:"cpu,omitempty"`
	Memory           *MemoryStats     `json:"memory,omitempty"`
	EphemeralStorage *FsStats         `json:"ephemeral-storage,omitempty"`
}

// ContainerStats is one container's usage.
type ContainerStats struct {
	Name      string       `json:"name"`
	StartTime metav1.Time  `json:"startTime"`
	CPU       *CPUStats    `json:"cpu,omitempty"`
	Memory    *MemoryStats `json:"memory,omitempty"`
	Rootfs    *FsStats     `json:"rootfs,omitempty"`
	Logs      *FsStats     `json:"logs,omitempty"`
}

// PodReference names a pod.
type PodReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
}

// CPUStats is CPU usage.
type CPUStats struct {
	Time                 metav1.Time `json:"time"`
	UsageNanoCores       *uint64     `json:"usageNanoCores,omitempty"`
	UsageCoreNanoSeconds *uint64     `json:"usageCoreNanoSeconds,omitempty"`
}

// MemoryStats is memory usage.
type MemoryStats struct {
	Time            metav1.Time `json:"time"`
	AvailableBytes  *uint64     `json:"availableBytes,omitempty"`
	UsageBytes      *uint64     `json:"usageBytes,omitempty"`
	WorkingSetBytes *uint64     `json:"workingSetBytes,omitempty"`
	RSSBytes        *uint64     `json:"rssBytes,omitempty"`
	PageFaults      *uint64     `json:"pageFaults,omitempty"`
	MajorPageFaults *uint64     `json:"majorPageFaults,omitempty"`
}

// FsStats is filesystem usage.
type FsStats struct {
	Time           metav1.Time `json:"time"`
	AvailableBytes *uint64     `json:"availableBytes,omitempty"`
	CapacityBytes  *uint64     `json:"capacityBytes,omitempty"`
	UsedBytes      *uint64     `json:"usedBytes,omitempty"`
	InodesFree     *uint64     `json:"inodesFree,omitempty"`
	Inodes         *uint64     `json:"inodes,omitempty"`
	InodesUsed     *uint64     `json:"inodesUsed,omitempty"`
}

func u64(v uint64) *uint64 { return &v }

// uv is a CRI optional value as a pointer (nil when absent).
func uv(v *runtimeapi.UInt64Value) *uint64 {
	if v == nil {
		return nil
	}
	return u64(v.Value)
}

func addTo(sum **uint64, v *uint64) {
	if v == nil {
		return
	}
	if *sum == nil {
		*sum = u64(0)
	}
	**sum += *v
}

// summary reads the runtime's container statistics: each pod's
// containers, the pod as their sum, the node as the sum of its pods unless
// Config.NodeStats measures the machine.
func (s *Server) summary(ctx context.Context) (*Summary, error) {
	now := metav1.NewTime(s.cfg.Clock.Now())
	sbs, err := s.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return nil, err
	}
	cstats, err := s.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		return nil, err
	}
	cs, err := s.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return nil, err
	}
	containers := map[string]*runtimeapi.Container{}
	for _, c := range cs.GetContainers() {
		containers[c.Id] = c
	}
	// One entry per pod UID: its newest ready sandbox.
	pods := map[string]*PodStats{}
	for _, sb := range sbs.GetItems() {
		uid := sb.GetLabels()[cri.LabelPodUID]
		if uid == "" || sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		if p := pods[uid]; p != nil && p.StartTime.UnixNano() >= sb.CreatedAt {
			continue
		}
		pods[uid] = &PodStats{PodRef: PodReference{Name: sb.GetMetadata().GetName(), Namespace: sb.GetMetadata().GetNamespace(), UID: uid},
			StartTime: metav1.NewTime(time.Unix(0, sb.CreatedAt)), Containers: []ContainerStats{}}
	}
	var nodeCPU, nodeCPUTotal, nodeMem, nodeRSS, nodeUsage *uint64
	for _, st := range cstats.GetStats() {
		attr := st.GetAttributes()
		c := containers[attr.GetId()]
		if c == nil || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		p := pods[attr.GetLabels()[cri.LabelPodUID]]
		if p == nil {
			continue
		}
		ct := ContainerStats{Name: attr.GetMetadata().GetName(), StartTime: metav1.NewTime(time.Unix(0, c.CreatedAt))}
		if cpu := st.GetCpu(); cpu != nil {
			ct.CPU = &CPUStats{Time: metav1.NewTime(time.Unix(0, cpu.Timestamp)), UsageNanoCores: uv(cpu.UsageNanoCores), UsageCoreNanoSeconds: uv(cpu.UsageCoreNanoSeconds)}
		}
		if m := st.GetMemory(); m != nil {
			ct.Memory = &MemoryStats{Time: metav1.NewTime(time.Unix(0, m.Timestamp)), UsageBytes: uv(m.UsageBytes), WorkingSetBytes: uv(m.WorkingSetBytes),
				RSSBytes: uv(m.RssBytes), PageFaults: uv(m.PageFaults), MajorPageFaults: uv(m.MajorPageFaults)}
		}
		if fs := st.GetWritableLayer(); fs != nil {
			ct.Rootfs = &FsStats{Time: metav1.NewTime(time.Unix(0, fs.Timestamp)), UsedBytes: uv(fs.UsedBytes), InodesUsed: uv(fs.InodesUsed)}
		}
		p.Containers = append(p.Containers, ct)
		if ct.CPU != nil {
			if p.CPU == nil {
				p.CPU = &CPUStats{Time: ct.CPU.Time}
			}
			addTo(&p.CPU.UsageNanoCores, ct.CPU.UsageNanoCores)
			addTo(&p.CPU.UsageCoreNanoSeconds, ct.CPU.UsageCoreNanoSeconds)
			addTo(&nodeCPU, ct.CPU.UsageNanoCores)
			addTo(&nodeCPUTotal, ct.CPU.UsageCoreNanoSeconds)
		}
		if ct.Memory != nil {
			if p.Memory == nil {
				p.Memory = &MemoryStats{Time: ct.Memory.Time}
			}
			addTo(&p.Memory.WorkingSetBytes, ct.Memory.WorkingSetBytes)
			addTo(&p.Memory.UsageBytes, ct.Memory.UsageBytes)
			addTo(&p.Memory.RSSBytes, ct.Memory.RSSBytes)
			addTo(&nodeMem, ct.Memory.WorkingSetBytes)
			addTo(&nodeRSS, ct.Memory.RSSBytes)
			addTo(&nodeUsage, ct.Memory.UsageBytes)
		}
	}
	sum := &Summary{Node: NodeStats{NodeName: s.cfg.NodeName, StartTime: metav1.NewTime(s.started),
		CPU:    &CPUStats{Time: now, UsageNanoCores: nodeCPU, UsageCoreNanoSeconds: nodeCPUTotal},
		Memory: &MemoryStats{Time: now, WorkingSetBytes: nodeMem, RSSBytes: nodeRSS, UsageBytes: nodeUsage}}, Pods: []PodStats{}}
	if s.cfg.NodeStats != nil {
		if n, err := s.cfg.NodeStats(ctx); err == nil && n != nil {
			n.NodeName, n.StartTime = s.cfg.NodeName, metav1.NewTime(s.started)
			sum.Node = *n
		}
	}
	if s.cfg.Images != nil {
		if fs, err := s.cfg.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{}); err == nil && len(fs.GetImageFilesystems()) > 0 {
			f := fs.GetImageFilesystems()[0]
			img := &FsStats{Time: metav1.NewTime(time.Unix(0, f.Timestamp)), UsedBytes: uv(f.UsedBytes), InodesUsed: uv(f.InodesUsed)}
			sum.Node.Runtime = &RuntimeStats{ImageFs: img, ContainerFs: img}
		}
	}
	for _, p := range pods {
		sort.Slice(p.Containers, func(i, j int) bool { return p.Containers[i].Name < p.Containers[j].Name })
		sum.Pods = append(sum.Pods, *p)
	}
	sort.Slice(sum.Pods, func(i, j int) bool {
		a, b := sum.Pods[i].PodRef, sum.Pods[j].PodRef
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	return sum, nil
}

// serveSummary is /stats/summary (?only_cpu_and_memory=true drops the
// filesystems, as upstream's).
func (s *Server) serveSummary(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeText(w, http.StatusMethodNotAllowed, "405: Method Not Allowed")
		return
	}
	sum, err := s.summary(r.Context())
	if err != nil {
		writeText(w, http.StatusInternalServerError, "Internal Error: "+err.Error())
		return
	}
	if r.URL.Query().Get("only_cpu_and_memory") == "true" {
		sum.Node.Fs, sum.Node.Runtime = nil, nil
		for i := range sum.Pods {
			sum.Pods[i].EphemeralStorage = nil
			for j := range sum.Pods[i].Containers {
				sum.Pods[i].Containers[j].Rootfs, sum.Pods[i].Containers[j].Logs = nil, nil
			}
		}
	}
	writeJSON(w, sum)
}
