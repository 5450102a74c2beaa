package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// Pod annotations the simulated runtime reads (see the package doc).
const (
	AnnotationRunDuration = "sim.skiff.sh/run-duration"
	AnnotationExitCode    = "sim.skiff.sh/exit-code"
)

// RuntimeName is what Version reports; container IDs in the API read
// "skiff-sim://<id>".
const RuntimeName = "skiff-sim"

// Config tunes a Runtime.
type Config struct {
	Clock clock.Clock
	// StartLatency is how long a started container stays CREATED.
	StartLatency time.Duration
	// StopLatency is how long a stopped container takes to exit.
	StopLatency time.Duration
	// RunDuration is how long a run-to-completion container of a pod
	// without the run-duration annotation runs.
	RunDuration time.Duration
	// InitRunDuration is how long an init container runs.
	InitRunDuration time.Duration
	// PodSubnet is where pod IPs come from (default 10.88.0.0/16);
	// UpdateRuntimeConfig replaces it with the node's pod CIDR.
	PodSubnet netip.Prefix
	// WaitForPodCIDR keeps the network not ready (NetworkReady=false,
	// NetworkPluginNotReady) until UpdateRuntimeConfig gives a pod CIDR, as
	// a CNI runtime whose network config is written from the node's
	// spec.podCIDR.
	WaitForPodCIDR bool
	// Annotations holds the sandboxes' and containers' annotations by
	// content; runtimes given the same table (the hollow agent's nodes)
	// share equal ones. Nil: a table of the runtime's own.
	Annotations *AnnotationTable
}

// Runtime is the simulated runtime.
type Runtime struct {
	cfg Config

	mu         sync.Mutex
	seq        uint64
	sandboxes  map[string]*sandbox
	containers map[string]*container
	images     map[string]*runtimeapi.Image // by ref (id)
	imageNames map[string]string            // tag → id
	usedIPs    map[netip.Addr]bool
	podCIDR    bool // UpdateRuntimeConfig gave a pod CIDR
}

// AnnotationTable holds the annotations of sandboxes and containers by
// content: the pods of one template, on all the simulated nodes given the
// table, share one copy (refcounted).
type AnnotationTable struct {
	mu sync.Mutex
	m  map[string]*sharedMap
}

// NewAnnotationTable returns an empty table.
func NewAnnotationTable() *AnnotationTable {
	return &AnnotationTable{m: map[string]*sharedMap{}}
}

// sharedMap is a map of annotations held by refs sandboxes or containers.
type sharedMap struct {
	key  string
	m    map[string]string
	refs int
}

// share returns a copy of m shared with what has equal annotations (nil
// for nil), and the handle release takes.
func (t *AnnotationTable) share(m map[string]string) (map[string]string, *sharedMap) {
	if m == nil {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = strconv.AppendInt(b, int64(len(k)), 10)
		b = append(append(append(b, ':'), k...), '=')
		b = strconv.AppendInt(b, int64(len(m[k])), 10)
		b = append(append(append(b, ':'), m[k]...), ';')
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.m[string(b)]; s != nil {
		s.refs++
		return s.m, s
	}
	s := &sharedMap{key: string(b), m: copyMap(m), refs: 1}
	t.m[s.key] = s
	return s.m, s
}

// release drops a holder of s.
func (t *AnnotationTable) release(s *sharedMap) {
	if s == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.refs--; s.refs == 0 {
		delete(t.m, s.key)
	}
}

type sandbox struct {
	id          string
	meta        *runtimeapi.PodSandboxMetadata
	labels      map[string]string
	annotations map[string]string // shared (share)
	annotRef    *sharedMap
	createdAt   time.Time
	ready       bool
	ip          netip.Addr
}

type container struct {
	id, sandboxID string
	meta          *runtimeapi.ContainerMetadata
	image         *runtimeapi.ImageSpec
	imageRef      string
	labels        map[string]string
	annotations   map[string]string // shared (share)
	annotRef      *sharedMap
	createdAt     time.Time

	startAt  time.Time // zero until started: when it becomes RUNNING
	runFor   time.Duration
	finishes bool // runs to completion after runFor
	exitCode int32

	stopAt   time.Time // zero unless stopped: when it exits
	stopExit int32
}

// New returns an empty runtime.
func New(cfg Config) *Runtime {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if !cfg.PodSubnet.IsValid() {
		cfg.PodSubnet = netip.MustParsePrefix("10.88.0.0/16")
	}
	if cfg.Annotations == nil {
		cfg.Annotations = NewAnnotationTable()
	}
	return &Runtime{cfg: cfg, sandboxes: map[string]*sandbox{}, containers: map[string]*container{},
		images: map[string]*runtimeapi.Image{}, imageNames: map[string]string{}, usedIPs: map[netip.Addr]bool{}}
}

func (r *Runtime) newID() string {
	r.seq++
	h := sha256.Sum256([]byte(fmt.Sprintf("%p/%d", r, r.seq)))
	return hex.EncodeToString(h[:])
}

func notFound(what, id string) error {
	return fmt.Errorf("%s %q: %w", what, id, cri.ErrNotFound)
}

// state computes a container's CRI state at now.
func (c *container) state(now time.Time) (st runtimeapi.ContainerState, startedAt, finishedAt time.Time, exit int32, reason string) {
	var fin time.Time
	if c.finishes && !c.startAt.IsZero() {
		fin, exit = c.startAt.Add(c.runFor), c.exitCode
	}
	if !c.stopAt.IsZero() && (fin.IsZero() || c.stopAt.Before(fin)) {
		fin, exit = c.stopAt, c.stopExit
	}
	startedAt = c.startAt
	if !fin.IsZero() && !now.Before(fin) {
		if startedAt.IsZero() || startedAt.After(fin) {
			startedAt = fin
		}
		reason = "Completed"
		if exit != 0 {
			reason = "Error"
		}
		return runtimeapi.ContainerState_CONTAINER_EXITED, startedAt, fin, exit, reason
	}
	if c.startAt.IsZero() || now.Before(c.startAt) {
		return runtimeapi.ContainerState_CONTAINER_CREATED, time.Time{}, time.Time{}, 0, ""
	}
	return runtimeapi.ContainerState_CONTAINER_RUNNING, startedAt, time.Time{}, 0, ""
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// Version implements cri.RuntimeService.
func (r *Runtime) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: RuntimeName, RuntimeVersion: "0.1.0", RuntimeApiVersion: "v1"}, nil
}

// Status implements cri.RuntimeService: always ready, the network too
// unless it waits for a pod CIDR (Config.WaitForPodCIDR).
func (r *Runtime) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	r.mu.Lock()
	netReady := !r.cfg.WaitForPodCIDR || r.podCIDR
	r.mu.Unlock()
	network := &runtimeapi.RuntimeCondition{Type: runtimeapi.NetworkReady, Status: true}
	if !netReady {
		network.Status, network.Reason, network.Message = false, "NetworkPluginNotReady", "Network plugin returns error: no pod CIDR assigned to the node yet"
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true}, network}}}, nil
}

func (r *Runtime) allocateIP() (netip.Addr, error) {
	a := r.cfg.PodSubnet.Masked().Addr().Next() // skip the network address
	for ; r.cfg.PodSubnet.Contains(a); a = a.Next() {
		if a == r.cfg.PodSubnet.Masked().Addr().Next() {
			continue // .1 is the gateway
		}
		if !r.usedIPs[a] {
			r.usedIPs[a] = true
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("no pod IP left in %s", r.cfg.PodSubnet)
}

// RunPodSandbox implements cri.RuntimeService.
func (r *Runtime) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	if cfg.GetMetadata() == nil {
		return nil, fmt.Errorf("sandbox config: metadata is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ip, err := r.allocateIP()
	if err != nil {
		return nil, err
	}
	s := &sandbox{id: r.newID(), meta: cfg.GetMetadata(), labels: copyMap(cfg.GetLabels()),
		createdAt: r.cfg.Clock.Now(), ready: true, ip: ip}
	s.annotations, s.annotRef = r.cfg.Annotations.share(cfg.GetAnnotations())
	r.sandboxes[s.id] = s
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: s.id}, nil
}

// StopPodSandbox implements cri.RuntimeService: its containers are
// killed (exit 137 now) and it becomes NOTREADY.
func (r *Runtime) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	now := r.cfg.Clock.Now()
	for _, c := range r.containers {
		if c.sandboxID == s.id {
			if st, _, _, _, _ := c.state(now); st != runtimeapi.ContainerState_CONTAINER_EXITED {
				c.stopAt, c.stopExit = now, 137
			}
		}
	}
	if s.ready {
		s.ready = false
		delete(r.usedIPs, s.ip)
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox implements cri.RuntimeService; removing an unknown
// sandbox succeeds (CRI: idempotent).
func (r *Runtime) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	}
	for id, c := range r.containers {
		if c.sandboxID == s.id {
			r.cfg.Annotations.release(c.annotRef)
			delete(r.containers, id)
		}
	}
	if s.ready {
		delete(r.usedIPs, s.ip)
	}
	r.cfg.Annotations.release(s.annotRef)
	delete(r.sandboxes, s.id)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (s *sandbox) state() runtimeapi.PodSandboxState {
	if s.ready {
		return runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return runtimeapi.PodSandboxState_SANDBOX_NOTREADY
}

// sandboxStatus is s's CRI status; its metadata, labels and annotations
// are the runtime's own (read-only, see the package doc).
func (r *Runtime) sandboxStatus(s *sandbox) *runtimeapi.PodSandboxStatus {
	var net *runtimeapi.PodSandboxNetworkStatus
	if s.ready {
		net = &runtimeapi.PodSandboxNetworkStatus{Ip: s.ip.String()}
	}
	return &runtimeapi.PodSandboxStatus{Id: s.id, Metadata: s.meta, State: s.state(), CreatedAt: nanos(s.createdAt), Network: net,
		Labels: s.labels, Annotations: s.annotations}
}

// PodSandboxStatus implements cri.RuntimeService.
func (r *Runtime) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: r.sandboxStatus(s)}, nil
}

// ListPodSandbox implements cri.RuntimeService, oldest first.
func (r *Runtime) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.PodSandbox
	for _, s := range r.sandboxes {
		st := s.state()
		if f != nil && (f.Id != "" && f.Id != s.id || f.State != nil && f.State.State != st || !matches(s.labels, f.LabelSelector)) {
			continue
		}
		out = append(out, &runtimeapi.PodSandbox{Id: s.id, Metadata: s.meta, State: st, CreatedAt: nanos(s.createdAt),
			Labels: s.labels, Annotations: s.annotations})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].CreatedAt < out[j].CreatedAt || out[i].CreatedAt == out[j].CreatedAt && out[i].Id < out[j].Id
	})
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

// CreateContainer implements cri.RuntimeService.
func (r *Runtime) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	if cfg.GetMetadata() == nil || cfg.GetImage() == nil {
		return nil, fmt.Errorf("container config: metadata and image are required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	if !s.ready {
		return nil, fmt.Errorf("sandbox %q is not ready", s.id)
	}
	imageRef := r.imageNames[cfg.GetImage().GetImage()]
	if _, ok := r.images[cfg.GetImage().GetImage()]; ok && imageRef == "" {
		imageRef = cfg.GetImage().GetImage() // the kubelet names the image by its ID, as upstream's
	}
	if imageRef == "" {
		imageRef = imageID(cfg.GetImage().GetImage())
	}
	c := &container{id: r.newID(), sandboxID: s.id, meta: cfg.GetMetadata(), image: cfg.GetImage(), imageRef: imageRef,
		labels: copyMap(cfg.GetLabels()), createdAt: r.cfg.Clock.Now()}
	c.annotations, c.annotRef = r.cfg.Annotations.share(cfg.GetAnnotations())
	r.decideRun(c, s)
	r.containers[c.id] = c
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// decideRun applies the package doc's conventions.
func (r *Runtime) decideRun(c *container, s *sandbox) {
	switch c.annotations[cri.AnnotationContainerType] {
	case "init":
		c.finishes, c.runFor = true, r.cfg.InitRunDuration
		return
	case "sidecar":
		return
	case "ephemeral":
		// A debug container runs to completion, exit 0, as a Job's.
		c.finishes, c.runFor = true, r.cfg.RunDuration
		if d, err := time.ParseDuration(s.annotations[AnnotationRunDuration]); err == nil {
			c.runFor = d
		}
		return
	}
	if v, ok := s.annotations[AnnotationRunDuration]; ok {
		if d, err := time.ParseDuration(v); err == nil {
			c.finishes, c.runFor = true, d
		}
	} else if p := s.annotations[cri.AnnotationPodRestartPolicy]; p == "OnFailure" || p == "Never" {
		c.finishes, c.runFor = true, r.cfg.RunDuration
	}
	if v, ok := s.annotations[AnnotationExitCode]; ok {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			c.exitCode = int32(n)
		}
	}
}

// StartContainer implements cri.RuntimeService.
func (r *Runtime) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	if !c.startAt.IsZero() || !c.stopAt.IsZero() {
		return nil, fmt.Errorf("container %q is not in created state", c.id)
	}
	c.startAt = r.cfg.Clock.Now().Add(r.cfg.StartLatency)
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer implements cri.RuntimeService. It returns at once; the
// container exits StopLatency (at most Timeout seconds) later.
func (r *Runtime) StopContainer(_ context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	now := r.cfg.Clock.Now()
	if st, _, _, _, _ := c.state(now); st == runtimeapi.ContainerState_CONTAINER_EXITED {
		return &runtimeapi.StopContainerResponse{}, nil
	}
	d, exit := r.cfg.StopLatency, int32(143)
	if timeout := time.Duration(req.GetTimeout()) * time.Second; d > timeout {
		d, exit = timeout, 137
	}
	at := now.Add(d)
	if c.stopAt.IsZero() || at.Before(c.stopAt) {
		c.stopAt, c.stopExit = at, exit
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer implements cri.RuntimeService (idempotent).
func (r *Runtime) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.containers[req.GetContainerId()]; ok {
		r.cfg.Annotations.release(c.annotRef)
		delete(r.containers, c.id)
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// containerStatus is c's CRI status at now; its metadata, image, labels
// and annotations are the runtime's own (read-only, see the package doc).
func (r *Runtime) containerStatus(c *container, now time.Time) *runtimeapi.ContainerStatus {
	st, started, finished, exit, reason := c.state(now)
	return &runtimeapi.ContainerStatus{Id: c.id, Metadata: c.meta, State: st, CreatedAt: nanos(c.createdAt),
		StartedAt: nanos(started), FinishedAt: nanos(finished), ExitCode: exit, Reason: reason, Image: c.image,
		ImageRef: c.imageRef, ImageId: c.imageRef, Labels: c.labels, Annotations: c.annotations}
}

// ListContainers implements cri.RuntimeService, oldest first.
func (r *Runtime) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Clock.Now()
	var out []*runtimeapi.Container
	for _, c := range r.containers {
		st, _, _, _, _ := c.state(now)
		if f != nil && (f.Id != "" && f.Id != c.id || f.PodSandboxId != "" && f.PodSandboxId != c.sandboxID ||
			f.State != nil && f.State.State != st || !matches(c.labels, f.LabelSelector)) {
			continue
		}
		out = append(out, &runtimeapi.Container{Id: c.id, PodSandboxId: c.sandboxID, Metadata: c.meta, Image: c.image,
			ImageRef: c.imageRef, ImageId: c.imageRef, State: st, CreatedAt: nanos(c.createdAt), Labels: c.labels, Annotations: c.annotations})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].CreatedAt < out[j].CreatedAt || out[i].CreatedAt == out[j].CreatedAt && out[i].Id < out[j].Id
	})
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

// ContainerStatus implements cri.RuntimeService.
func (r *Runtime) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	return &runtimeapi.ContainerStatusResponse{Status: r.containerStatus(c, r.cfg.Clock.Now())}, nil
}

// ListContainerStatuses is the statuses of every container of the sandbox
// (all sandboxes for ""), oldest first: one lock for what a relist needs.
func (r *Runtime) ListContainerStatuses(sandboxID string) []*runtimeapi.ContainerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Clock.Now()
	var out []*runtimeapi.ContainerStatus
	for _, c := range r.containers {
		if sandboxID == "" || c.sandboxID == sandboxID {
			out = append(out, r.containerStatus(c, now))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].CreatedAt < out[j].CreatedAt || out[i].CreatedAt == out[j].CreatedAt && out[i].Id < out[j].Id
	})
	return out
}

func imageID(name string) string {
	h := sha256.Sum256([]byte(name))
	return "sha256:" + hex.EncodeToString(h[:])
}

// PullImage implements cri.ImageService: every image exists.
func (r *Runtime) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := req.GetImage().GetImage()
	if name == "" {
		return nil, fmt.Errorf("image name is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id := imageID(name)
	img, ok := r.images[id]
	if !ok {
		img = &runtimeapi.Image{Id: id, Size: 5 << 20}
		r.images[id] = img
	}
	if r.imageNames[name] == "" {
		img.RepoTags = append(img.RepoTags, name)
		r.imageNames[name] = id
	}
	return &runtimeapi.PullImageResponse{ImageRef: id}, nil
}

// ListImages implements cri.ImageService.
func (r *Runtime) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.Image
	for id, img := range r.images {
		if want := req.GetFilter().GetImage().GetImage(); want != "" && r.imageNames[want] != id && want != id {
			continue
		}
		out = append(out, cloneImage(img))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return &runtimeapi.ListImagesResponse{Images: out}, nil
}

// ImageStatus implements cri.ImageService: a nil image when absent (CRI).
func (r *Runtime) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := req.GetImage().GetImage()
	id := r.imageNames[name]
	if id == "" {
		id = name
	}
	if img, ok := r.images[id]; ok {
		return &runtimeapi.ImageStatusResponse{Image: cloneImage(img)}, nil
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

// RemoveImage implements cri.ImageService (idempotent).
func (r *Runtime) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := req.GetImage().GetImage()
	id := r.imageNames[name]
	if id == "" {
		id = name
	}
	if img, ok := r.images[id]; ok {
		for _, t := range img.RepoTags {
			delete(r.imageNames, t)
		}
		delete(r.images, id)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

func cloneImage(img *runtimeapi.Image) *runtimeapi.Image {
	return &runtimeapi.Image{Id: img.Id, Size: img.Size, RepoTags: append([]string(nil), img.RepoTags...)}
}

func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

var (
	_ cri.RuntimeService = (*Runtime)(nil)
	_ cri.ImageService   = (*Runtime)(nil)
)
