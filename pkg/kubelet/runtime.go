package kubelet

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

var runtimeVersionRequest = runtimeapi.VersionRequest{Version: "v1"}

// containerStatus is one container as the runtime reports it.
type containerStatus struct {
	ID, Name   string
	SandboxID  string
	Attempt    uint32 // the restart count
	State      runtimeapi.ContainerState
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int32
	Reason     string
	Message    string
	Image      string
	ImageRef   string
	// Unhealthy, for a running container whose liveness or startup probe
	// failed, is why it must be restarted (filled from the prober).
	Unhealthy string
}

// podRuntimeStatus is what the runtime holds for one pod.
type podRuntimeStatus struct {
	// SandboxID is the newest sandbox ("" when none).
	SandboxID      string
	SandboxReady   bool
	SandboxAttempt uint32
	IPs            []string
	// OtherSandboxes are older sandboxes of the pod.
	OtherSandboxes []string
	// Containers of every sandbox, newest first.
	Containers []*containerStatus
}

// latest is the newest container named name, nil when none.
func (s *podRuntimeStatus) latest(name string) *containerStatus {
	if s == nil {
		return nil
	}
	for _, c := range s.Containers {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// previous is the container named name before the newest, nil when none.
func (s *podRuntimeStatus) previous(name string) *containerStatus {
	seen := false
	for _, c := range s.Containers {
		if c.Name == name {
			if seen {
				return c
			}
			seen = true
		}
	}
	return nil
}

// inSandbox is the view of s limited to the containers of the newest sandbox.
func (s *podRuntimeStatus) inSandbox() *podRuntimeStatus {
	v := *s
	v.Containers = nil
	for _, c := range s.Containers {
		if c.SandboxID == s.SandboxID {
			v.Containers = append(v.Containers, c)
		}
	}
	return &v
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// podStatusFromRuntime reads one pod's sandboxes and containers.
func (k *Kubelet) podStatusFromRuntime(ctx context.Context, uid types.UID) (*podRuntimeStatus, error) {
	sel := map[string]string{cri.LabelPodUID: string(uid)}
	sbs, err := k.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
	if err != nil {
		return nil, err
	}
	st := &podRuntimeStatus{}
	items := sbs.Items
	sort.Slice(items, func(i, j int) bool { return items[i].CreatedAt > items[j].CreatedAt })
	for i, sb := range items {
		if i > 0 {
			st.OtherSandboxes = append(st.OtherSandboxes, sb.Id)
			continue
		}
		st.SandboxID, st.SandboxAttempt = sb.Id, sb.GetMetadata().GetAttempt()
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			s, err := k.cfg.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.Id})
			if err != nil && !cri.IsNotFound(err) {
				return nil, err
			}
			if s != nil && s.Status.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
				st.SandboxReady = true
				if ip := s.Status.GetNetwork().GetIp(); ip != "" {
					st.IPs = append(st.IPs, ip)
				}
				for _, a := range s.Status.GetNetwork().GetAdditionalIps() {
					st.IPs = append(st.IPs, a.GetIp())
				}
			}
		}
	}
	cs, err := k.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	if err != nil {
		return nil, err
	}
	for _, c := range cs.Containers {
		s, err := k.cfg.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
		if cri.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		x := s.Status
		st.Containers = append(st.Containers, &containerStatus{ID: x.Id, Name: x.GetMetadata().GetName(), SandboxID: c.PodSandboxId,
			Attempt: x.GetMetadata().GetAttempt(), State: x.State, CreatedAt: fromNanos(x.CreatedAt), StartedAt: fromNanos(x.StartedAt),
			FinishedAt: fromNanos(x.FinishedAt), ExitCode: x.ExitCode, Reason: x.Reason, Message: withTerminationMessage(x),
			Image: x.GetImage().GetImage(), ImageRef: x.ImageRef})
	}
	sort.SliceStable(st.Containers, func(i, j int) bool {
		a, b := st.Containers[i], st.Containers[j]
		if a.Attempt != b.Attempt {
			return a.Attempt > b.Attempt
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
	return st, nil
}

func restartPolicy(pod *corev1.Pod) corev1.RestartPolicy {
	if pod.Spec.RestartPolicy == "" {
		return corev1.RestartPolicyAlways
	}
	return pod.Spec.RestartPolicy
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
