package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// MountsFunc returns the CRI mounts of container c of pod (its volumes'
// host directories; pkg/kubelet/volume provides them). An error keeps the
// container from being created (CreateContainerConfigError).
type MountsFunc func(ctx context.Context, pod *corev1.Pod, c *corev1.Container) ([]*runtimeapi.Mount, error)

// podConfig builds the CRI sandbox and container configurations of a
// node's pods, as upstream's kuberuntime does: pure functions of the pod,
// what the node knows about itself and the cluster objects read through
// Lookups.
type podConfig struct {
	NodeName string
	// HostIPs of the node (status.hostIP(s), the downward API).
	HostIPs []string
	// Allocatable of the node (resourceFieldRef defaults).
	Allocatable corev1.ResourceList
	Lookups     Lookups
	// PodLogDir is the root of the pods' log directories
	// (<PodLogDir>/<ns>_<pod>_<uid>/<container>/<restart>.log); "" sets
	// no log directory or path (the simulated runtime).
	PodLogDir string
	// Mounts are the container's volume mounts (nil: none).
	Mounts MountsFunc
}

// podLogDir is the log directory of pod's sandbox ("" without PodLogDir).
func (b *podConfig) podLogDir(pod *corev1.Pod) string {
	if b.PodLogDir == "" {
		return ""
	}
	return filepath.Join(b.PodLogDir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}

// containerRun is what building a container's configuration knows of the
// container and its sandbox.
type containerRun struct {
	// Type is "init", "sidecar" or "regular".
	Type    string
	Attempt uint32
	// PodIPs of the sandbox, first the primary.
	PodIPs []string
	// ImageRef is the image the runtime resolved ("" : c.Image).
	ImageRef string
}

// containerConfig is the CRI configuration of container c of pod; an
// error is a CreateContainerConfigError.
func (b *podConfig) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, run containerRun) (*runtimeapi.ContainerConfig, error) {
	env, err := makeEnvironment(ctx, pod, c, envInput{Lookups: b.Lookups, PodIPs: run.PodIPs, HostIPs: b.HostIPs, Allocatable: b.Allocatable})
	if err != nil {
		return nil, err
	}
	command, args := expandCommand(c, env)
	image := run.ImageRef
	if image == "" {
		image = c.Image
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: run.Attempt},
		Image:      &runtimeapi.ImageSpec{Image: image, UserSpecifiedImage: c.Image},
		Command:    command,
		Args:       args,
		WorkingDir: c.WorkingDir,
		Labels: map[string]string{cri.LabelPodName: pod.Name, cri.LabelPodNamespace: pod.Namespace,
			cri.LabelPodUID: string(pod.UID), cri.LabelContainerName: c.Name},
		Annotations: map[string]string{cri.AnnotationRestartCount: strconv.Itoa(int(run.Attempt)),
			cri.AnnotationContainerType: run.Type, cri.AnnotationPodRestartPolicy: string(restartPolicy(pod)),
			"io.kubernetes.container.terminationMessagePath":   c.TerminationMessagePath,
			"io.kubernetes.container.terminationMessagePolicy": string(c.TerminationMessagePolicy),
			"io.kubernetes.pod.terminationGracePeriod":         strconv.FormatInt(podTerminationGrace(pod), 10)},
		Tty: c.TTY, Stdin: c.Stdin, StdinOnce: c.StdinOnce,
	}
	for _, e := range env {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
	}
	if dir := b.podLogDir(pod); dir != "" {
		// As upstream's kubelet: the container's log directory exists
		// before the runtime opens <name>/<restart>.log in it.
		if err := os.MkdirAll(filepath.Join(dir, c.Name), 0o755); err != nil {
			return nil, fmt.Errorf("create container log directory for container %s failed: %v", c.Name, err)
		}
		cfg.LogPath = filepath.Join(c.Name, strconv.Itoa(int(run.Attempt))+".log")
	}
	if b.Mounts != nil {
		mounts, err := b.Mounts(ctx, pod, c)
		if err != nil {
			return nil, err
		}
		cfg.Mounts = mounts
	}
	return cfg, nil
}

func podTerminationGrace(pod *corev1.Pod) int64 {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// sandboxConfig is the CRI sandbox configuration of pod.
func (b *podConfig) sandboxConfig(pod *corev1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, error) {
	labels := map[string]string{}
	for k, v := range pod.Labels {
		labels[k] = v
	}
	labels[cri.LabelPodName], labels[cri.LabelPodNamespace], labels[cri.LabelPodUID] = pod.Name, pod.Namespace, string(pod.UID)
	annotations := map[string]string{}
	for k, v := range pod.Annotations {
		annotations[k] = v
	}
	annotations[cri.AnnotationPodRestartPolicy] = string(restartPolicy(pod))
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		Hostname: hostname, Labels: labels, Annotations: annotations, LogDirectory: b.podLogDir(pod),
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: networkMode(pod)}}},
	}, nil
}
