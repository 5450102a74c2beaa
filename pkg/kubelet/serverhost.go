package kubelet

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet as its HTTPS API's host (pkg/kubelet/server.Host).

// GetPodByName is the pod the kubelet runs under namespace/name, with the
// status it last wrote (the API server's until it wrote one).
func (k *Kubelet) GetPodByName(namespace, name string) (*corev1.Pod, bool) {
	for _, p := range k.runningPods() {
		if p.Namespace == namespace && p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// GetPods are the pods the kubelet runs, by namespace and name.
func (k *Kubelet) GetPods() []*corev1.Pod {
	pods := k.runningPods()
	sort.Slice(pods, func(i, j int) bool {
		return pods[i].Namespace < pods[j].Namespace || pods[i].Namespace == pods[j].Namespace && pods[i].Name < pods[j].Name
	})
	return pods
}

func (k *Kubelet) runningPods() []*corev1.Pod {
	k.mu.Lock()
	ws := make([]*podWorker, 0, len(k.workers))
	for _, w := range k.workers {
		ws = append(ws, w)
	}
	k.mu.Unlock()
	var out []*corev1.Pod
	for _, w := range ws {
		w.mu.Lock()
		p, removed := w.pod, w.removed
		w.mu.Unlock()
		if p == nil || removed {
			continue
		}
		p = p.DeepCopy()
		if st, ok := k.status.cached(p.UID); ok {
			p.Status = st
		}
		out = append(out, p)
	}
	return out
}
