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
}

// ImageService manages images (the CRI ImageService).
type ImageService interface {
	PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error)
	ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error)
	ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error)
	RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error)
}

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
