package kubelet

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Image errors: the container's waiting reason is the error's text.
var (
	errImagePull        = errors.New("ErrImagePull")
	errImagePullBackOff = errors.New("ImagePullBackOff")
	errImageNeverPull   = errors.New("ErrImageNeverPull")
)

// ensureImage makes c's image present as its pull policy says; it returns
// the image reference, or a message and an image error.
func (k *Kubelet) ensureImage(ctx context.Context, pod *corev1.Pod, c *corev1.Container, sandboxCfg *runtimeapi.PodSandboxConfig) (string, string, error) {
	img, err := k.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: c.Image}})
	present := err == nil && img.Image != nil
	switch {
	case c.ImagePullPolicy == corev1.PullNever && !present:
		msg := "Container image \"" + c.Image + "\" is not present with pull policy of Never"
		k.event(pod, c.Name, corev1.EventTypeWarning, "ErrImageNeverPull", msg)
		return "", msg, errImageNeverPull
	case !present || c.ImagePullPolicy == corev1.PullAlways:
		k.event(pod, c.Name, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.Image))
		began := k.clock.Now()
		resp, err := k.cfg.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: c.Image}, SandboxConfig: sandboxCfg})
		if err != nil {
			k.event(pod, c.Name, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", c.Image, err))
			return "", err.Error(), errImagePull
		}
		var size uint64
		if st, err := k.cfg.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: c.Image}}); err == nil && st.Image != nil {
			size = st.Image.Size
		}
		took := k.clock.Since(began)
		k.event(pod, c.Name, corev1.EventTypeNormal, "Pulled",
			fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.", c.Image, took, took, size))
		return resp.ImageRef, "", nil
	default:
		k.event(pod, c.Name, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", c.Image))
		return img.Image.Id, "", nil
	}
}
