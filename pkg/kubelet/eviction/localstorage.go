package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Upstream's local storage eviction messages.
const (
	containerEphemeralStorageMessageFmt = "Container %s exceeded its local ephemeral storage limit %q. "
	podEphemeralStorageMessageFmt       = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	emptyDirMessageFmt                  = "Usage of EmptyDir volume %q exceeds the limit %q. "
)

// LocalStorageEviction is a pod over one of its local storage limits.
type LocalStorageEviction struct {
	Pod     *corev1.Pod
	Message string
}

// LocalStorageEvictions are upstream's localStorageEviction checks, in
// its order, for each pod with stats: an emptyDir over its sizeLimit; the
// pod's ephemeral storage (writable layers, logs, local volumes) over the
// sum of its containers' ephemeral-storage limits; a container's
// writable layer (unless the images have a filesystem of their own) and
// logs over its limit. Critical pods are skipped; such evictions use
// ImmediateGracePeriodSeconds.
func LocalStorageEvictions(pods []*corev1.Pod, stats StatsFunc, dedicatedImageFs bool) []LocalStorageEviction {
	var out []LocalStorageEviction
	for _, p := range pods {
		s, ok := stats(p)
		if !ok || IsCriticalPod(p) {
			continue
		}
		if msg := localStorageMessage(p, s, dedicatedImageFs); msg != "" {
			out = append(out, LocalStorageEviction{Pod: p, Message: msg})
		}
	}
	return out
}

func localStorageMessage(p *corev1.Pod, s PodStats, dedicatedImageFs bool) string {
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() != 1 {
			continue
		}
		if used, ok := s.VolumeUsage[v.Name]; ok && used != nil && used.Cmp(*v.EmptyDir.SizeLimit) > 0 {
			return fmt.Sprintf(emptyDirMessageFmt, v.Name, v.EmptyDir.SizeLimit.String())
		}
	}
	if limit, ok := podLimit(p, corev1.ResourceEphemeralStorage); ok {
		total := diskUsage(s, false, true)
		if total.Cmp(limit) > 0 {
			return fmt.Sprintf(podEphemeralStorageMessageFmt, limit.String())
		}
	}
	limits := map[string]resource.Quantity{}
	for _, c := range p.Spec.Containers {
		if l, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]; ok && !l.IsZero() {
			limits[c.Name] = l
		}
	}
	for _, cs := range s.Containers {
		l, ok := limits[cs.Name]
		if !ok {
			continue
		}
		used := qty(cs.Logs)
		if !dedicatedImageFs {
			used.Add(qty(cs.Rootfs))
		}
		if used.Cmp(l) > 0 {
			return fmt.Sprintf(containerEphemeralStorageMessageFmt, cs.Name, l.String())
		}
	}
	return ""
}

// podLimit is upstream's PodLimits for one resource: the limits of the
// containers that set one summed (sidecars included), or the largest init
// container's when larger; false when no container sets one.
func podLimit(p *corev1.Pod, name corev1.ResourceName) (resource.Quantity, bool) {
	var sum, maxInit resource.Quantity
	found := false
	for _, c := range p.Spec.Containers {
		if l, ok := c.Resources.Limits[name]; ok {
			sum.Add(l)
			found = true
		}
	}
	for _, c := range p.Spec.InitContainers {
		l, ok := c.Resources.Limits[name]
		if !ok {
			continue
		}
		found = true
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum.Add(l)
		} else if l.Cmp(maxInit) > 0 {
			maxInit = l
		}
	}
	if maxInit.Cmp(sum) > 0 {
		sum = maxInit
	}
	return sum, found
}
