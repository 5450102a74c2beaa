package kubelet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/prober"
)

// Upstream's event reasons for lifecycle hooks.
const (
	reasonFailedPostStartHook = "FailedPostStartHook"
	reasonFailedPreStopHook   = "FailedPreStopHook"
)

// minGracePeriod is what is left of a grace period after a preStop hook
// used it up (upstream's minimumGracePeriodInSeconds).
const minGracePeriod = 2

// runHook runs a postStart or preStop handler of container c (runtime ID
// id, pod IP podIP) and returns upstream's failure message, "" on
// success. timeout bounds it (0: none).
func (k *Kubelet) runHook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id, podIP string, h *corev1.LifecycleHandler, timeout time.Duration) string {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	switch {
	case h.Exec != nil:
		resp, err := k.cfg.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: h.Exec.Command, Timeout: int64(timeout.Seconds())})
		if err == nil && resp.ExitCode != 0 {
			err = fmt.Errorf("command '%s' exited with %d: %s", strings.Join(h.Exec.Command, " "), resp.ExitCode, resp.Stderr)
		}
		if err != nil {
			out := ""
			if resp != nil {
				out = string(resp.Stdout)
			}
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
				h.Exec.Command, c.Name, podDesc(pod), err, out)
		}
	case h.HTTPGet != nil:
		if pod.Spec.HostNetwork {
			podIP = k.cfg.NodeIP
		}
		out := prober.HTTPGet(ctx, h.HTTPGet, prober.Target{Pod: pod, Container: c, ContainerID: id, PodIP: podIP})
		// Upstream's HTTP hook fails only when the request does; the
		// status code does not matter.
		if out.Err != nil || out.Result == prober.Failure && !strings.HasPrefix(out.Output, "HTTP probe failed with statuscode") {
			msg := out.Output
			if out.Err != nil {
				msg = out.Err.Error()
			}
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %s", h.HTTPGet.Path, c.Name, podDesc(pod), msg)
		}
	case h.Sleep != nil:
		select {
		case <-ctx.Done():
		case <-k.clock.After(time.Duration(h.Sleep.Seconds) * time.Second):
		}
	default:
		return fmt.Sprintf("Lifecycle hook for Container %q in Pod %q has no handler", c.Name, podDesc(pod))
	}
	return ""
}

func podDesc(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// stopContainer is upstream's killContainer: the Killing event, the
// preStop hook (unless handlers are simulated) within the grace period,
// then StopContainer with what is left of it (at least 2 s after a hook).
// c may be nil (a container no longer in the spec).
func (k *Kubelet) stopContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id, message string, grace int64, podIPs []string) error {
	name := ""
	if c != nil {
		name = c.Name
	}
	if name != "" {
		k.event(pod, name, corev1.EventTypeNormal, "Killing", message)
	}
	if c != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil && !k.cfg.SimulateHandlers && grace > 0 {
		began := k.clock.Now()
		ip := ""
		if len(podIPs) > 0 {
			ip = podIPs[0]
		}
		if msg := k.runHook(ctx, pod, c, id, ip, c.Lifecycle.PreStop, time.Duration(grace)*time.Second); msg != "" {
			k.event(pod, name, corev1.EventTypeWarning, reasonFailedPreStopHook, msg)
		}
		grace -= int64(k.clock.Since(began).Seconds())
		if grace < minGracePeriod {
			grace = minGracePeriod
		}
	}
	if _, err := k.cfg.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: grace}); err != nil && !errors.Is(err, context.Canceled) {
		k.log.Warn("stopping container", "pod", klogPod(pod), "container", id, "err", err)
		return err
	}
	return nil
}

// sandboxIP is the IP the runtime gave sandbox ("" when it cannot say).
func (k *Kubelet) sandboxIP(ctx context.Context, sandboxID string) string {
	s, err := k.cfg.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sandboxID})
	if err != nil {
		return ""
	}
	return s.GetStatus().GetNetwork().GetIp()
}
