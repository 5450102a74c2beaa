package queue

import (
	"log/slog"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// nominator keeps the pods nominated to nodes (status.nominatedNodeName,
// or preemption's AddNominatedPod before that reaches the API), so that
// the Filter of lower-priority pods counts them in. Guarded by the
// PriorityQueue's lock.
type nominator struct {
	// podLister, when set, is asked for the pod's current version: a pod
	// gone or already bound is not nominated.
	podLister func(namespace, name string) (*corev1.Pod, error)
	byNode    map[string][]podRef
	byUID     map[types.UID]string
	// count is len(byUID), readable without the queue's lock: filtering
	// a node asks for its nominated pods, and usually there are none.
	count atomic.Int64
}

type podRef struct {
	namespace, name string
	uid             types.UID
}

func (r podRef) key() string { return r.namespace + "/" + r.name }

func (r podRef) toPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: r.namespace, Name: r.name, UID: r.uid}}
}

func newNominator(lister func(namespace, name string) (*corev1.Pod, error)) *nominator {
	return &nominator{podLister: lister, byNode: map[string][]podRef{}, byUID: map[types.UID]string{}}
}

// add nominates pi's pod: to info's node when info overrides (preemption),
// else to the pod's status.nominatedNodeName (nothing when empty).
func (n *nominator) add(logger *slog.Logger, pi *framework.PodInfo, info *framework.NominatingInfo) {
	pod := pi.Pod
	n.delete(pod)
	var node string
	if info.Mode() == framework.ModeOverride {
		node = info.NominatedNodeName
	} else {
		if pod.Status.NominatedNodeName == "" {
			return
		}
		node = pod.Status.NominatedNodeName
	}
	if n.podLister != nil {
		cur, err := n.podLister(pod.Namespace, pod.Name)
		if err != nil || cur == nil {
			logger.Debug("Pod doesn't exist in podLister, aborted adding it to the nominator", "pod", pod.Namespace+"/"+pod.Name)
			return
		}
		if cur.Spec.NodeName != "" {
			logger.Debug("Pod is already scheduled to a node, aborted adding it to the nominator", "pod", pod.Namespace+"/"+pod.Name, "node", cur.Spec.NodeName)
			return
		}
	}
	n.byUID[pod.UID] = node
	n.count.Store(int64(len(n.byUID)))
	for _, r := range n.byNode[node] {
		if r.uid == pod.UID {
			return
		}
	}
	n.byNode[node] = append(n.byNode[node], podRef{namespace: pod.Namespace, name: pod.Name, uid: pod.UID})
}

// update re-nominates a changed pod. A pod that had no nominatedNodeName
// before nor after keeps the node preemption gave it (the update may be
// the scheduler's own status write racing with the nomination).
func (n *nominator) update(logger *slog.Logger, oldPod *corev1.Pod, newPI *framework.PodInfo) {
	var info *framework.NominatingInfo
	if oldPod.Status.NominatedNodeName == "" && newPI.Pod.Status.NominatedNodeName == "" {
		if node, ok := n.byUID[oldPod.UID]; ok {
			info = &framework.NominatingInfo{NominatingMode: framework.ModeOverride, NominatedNodeName: node}
		}
	}
	n.delete(oldPod)
	n.add(logger, newPI, info)
}

func (n *nominator) delete(pod *corev1.Pod) {
	node, ok := n.byUID[pod.UID]
	if !ok {
		return
	}
	refs := n.byNode[node]
	for i, r := range refs {
		if r.uid == pod.UID {
			refs = slices.Delete(refs, i, i+1)
			break
		}
	}
	if len(refs) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = refs
	}
	delete(n.byUID, pod.UID)
	n.count.Store(int64(len(n.byUID)))
}

func (n *nominator) forNode(node string) []podRef { return slices.Clone(n.byNode[node]) }
