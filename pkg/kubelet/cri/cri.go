package cri

import (
	"context"
	"errors"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RuntimeService manages pod sandboxes and containers (the CRI
// RuntimeService, the subset the kubelet uses).
type RuntimeService interface {
	Version(ctx context.Context, req *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error)
	Status(ctx context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error)

	RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error)
	StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error)
	RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error)
	PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error)
	ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error)

	CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error)
	StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error)
	StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error)
	RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error)
	ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error)
	ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error)
	UpdateContainerResources(ctx context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error)
	ReopenContainerLog(ctx context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error)

	// ExecSync runs a command in a container and returns its output
	// (exec probes, preStop exec hooks).
	ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error)
	// Exec, Attach and PortForward return the URL of the runtime's
	// streaming server that serves the session (the kubelet proxies the
	// API server's upgraded connection there).
	Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error)
	Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error)
	PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error)

	ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error)
	ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error)
	PodSandboxStats(ctx context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error)
	ListPodSandboxStats(ctx context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error)

	// UpdateRuntimeConfig tells the runtime the node's pod CIDR.
	UpdateRuntimeConfig(ctx context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error)
}

// ImageService manages images (the CRI ImageService).
type ImageService interface {
	PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error)
	ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error)
	ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error)
	RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error)
	// ImageFsInfo reports the image filesystem's usage (image garbage
	// collection, disk-pressure eviction, stats).
	ImageFsInfo(ctx context.Context, req *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error)
}

// ErrUnsupported is what an implementation wraps for a call it cannot
// serve (the simulated runtime's exec, attach and port-forward); gRPC
// code Unimplemented on the wire.
var ErrUnsupported = errors.New("not supported by this runtime")

// ErrNotFound is what an implementation wraps when a sandbox, container
// or image does not exist.
var ErrNotFound = errors.New("not found")

// IsNotFound reports whether err says the object does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Labels and annotations the kubelet puts on sandboxes and containers (the
// io.kubernetes.* names are upstream's, so that crictl output and a later
// containerd runtime read alike).
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"

	AnnotationRestartCount = "io.kubernetes.container.restartCount"
	// AnnotationContainerType is skiff's: "init", "sidecar" (an init
	// container with restartPolicy Always) or "regular".
	AnnotationContainerType = "skiff.sh/container-type"
	// AnnotationPodRestartPolicy is skiff's: the pod's restartPolicy, on
	// sandboxes and containers (the sim decides from it whether a
	// container runs to completion).
	AnnotationPodRestartPolicy = "skiff.sh/pod-restart-policy"
)
