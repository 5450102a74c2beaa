package kubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultCapacity is a node's capacity when Config.Capacity is empty.
func DefaultCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
}

// capacity is Config.Capacity, else what a machine that knows its own
// reports (measured once, at the first call), else DefaultCapacity.
func (k *Kubelet) capacity() corev1.ResourceList {
	if len(k.cfg.Capacity) > 0 {
		return k.cfg.Capacity.DeepCopy()
	}
	k.hostOnce.Do(func() {
		if m, ok := k.cfg.Machine.(capacityOf); ok {
			c, err := m.Capacity(context.Background())
			if err != nil {
				k.log.Warn("measuring the machine's capacity; the node reports the default", "err", err)
				return
			}
			k.hostCapacity = c
		}
		if m, ok := k.cfg.Machine.(systemInfoOf); ok {
			info := m.SystemInfo()
			k.hostInfo = &info
		}
	})
	if k.hostCapacity != nil {
		return k.hostCapacity.DeepCopy()
	}
	return DefaultCapacity()
}

func (k *Kubelet) initialNode() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname: k.cfg.NodeName, corev1.LabelOSStable: "linux", corev1.LabelArchStable: goruntime.GOARCH,
		"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": goruntime.GOARCH,
	}
	for key, v := range k.cfg.NodeLabels {
		labels[key] = v
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.cfg.NodeName, Labels: labels,
		Annotations: map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}}}
}

// registerNode creates the Node, or takes over an existing one (its
// labels brought up to date), and posts its first status.
func (k *Kubelet) registerNode(ctx context.Context) error {
	node, err := k.nodes.Create(ctx, k.initialNode(), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = k.nodes.Get(ctx, k.cfg.NodeName, metav1.GetOptions{})
		if err == nil {
			changed := false
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			for key, v := range k.initialNode().Labels {
				if node.Labels[key] != v {
					node.Labels[key], changed = v, true
				}
			}
			if changed {
				node, err = k.nodes.Update(ctx, node, metav1.UpdateOptions{})
			}
		}
	}
	if err != nil {
		return fmt.Errorf("kubelet: registering node %s: %w", k.cfg.NodeName, err)
	}
	k.mu.Lock()
	k.node = keptNode(node)
	k.mu.Unlock()
	k.updatePodCIDR(ctx, node)
	return k.postNodeStatus(ctx, true)
}

func idFor(kind, name string) string {
	h := sha256.Sum256([]byte(kind + "/" + name))
	return hex.EncodeToString(h[:16])
}

// nodeStatus computes the node's status at now from old (transition times
// kept for unchanged conditions).
func (k *Kubelet) nodeStatus(ctx context.Context, old *corev1.Node, now time.Time) corev1.NodeStatus {
	capacity := k.capacity()
	s := corev1.NodeStatus{Capacity: capacity, Allocatable: k.allocatable(capacity), Phase: "",
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: k.cfg.NodeIP}, {Type: corev1.NodeHostName, Address: k.cfg.NodeName}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: k.cfg.KubeletPort}},
		NodeInfo: corev1.NodeSystemInfo{MachineID: idFor("machine", k.cfg.NodeName), SystemUUID: idFor("system", k.cfg.NodeName),
			BootID: idFor("boot", k.cfg.NodeName), KernelVersion: "", OSImage: "skiff " + k.runtimeID, OperatingSystem: "linux",
			Architecture: goruntime.GOARCH, ContainerRuntimeVersion: k.runtimeID + "://" + k.runtimeVersion, KubeletVersion: Version},
	}
	if h := k.hostInfo; h != nil {
		for _, f := range []struct {
			dst *string
			v   string
		}{{&s.NodeInfo.MachineID, h.MachineID}, {&s.NodeInfo.SystemUUID, h.SystemUUID},
			{&s.NodeInfo.BootID, h.BootID}, {&s.NodeInfo.KernelVersion, h.KernelVersion}, {&s.NodeInfo.OSImage, h.OSImage}} {
			if f.v != "" {
				*f.dst = f.v
			}
		}
	}
	if imgs, err := k.cfg.Images.ListImages(ctx, &runtimeapi.ListImagesRequest{}); err == nil {
		for i, img := range imgs.Images {
			if i == 50 { // upstream's --node-status-max-images default
				break
			}
			names := append([]string{}, img.RepoDigests...)
			names = append(names, img.RepoTags...)
			if len(names) == 0 {
				names = []string{img.Id}
			}
			s.Images = append(s.Images, corev1.ContainerImage{Names: names, SizeBytes: int64(img.Size)})
		}
	}
	heartbeat := metav1.NewTime(now.Truncate(time.Second))
	cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg, LastHeartbeatTime: heartbeat, LastTransitionTime: heartbeat}
		if old != nil {
			for _, o := range old.Status.Conditions {
				if o.Type == t && o.Status == st {
					c.LastTransitionTime = o.LastTransitionTime
				}
			}
		}
		return c
	}
	pressure := func(t corev1.NodeConditionType) corev1.NodeCondition {
		st, reason, msg := k.pressureCondition(t)
		return cond(t, st, reason, msg)
	}
	s.Conditions = []corev1.NodeCondition{
		pressure(corev1.NodeMemoryPressure),
		pressure(corev1.NodeDiskPressure),
		pressure(corev1.NodePIDPressure),
		k.readyCondition(ctx, cond),
	}
	return s
}

func (k *Kubelet) readyCondition(ctx context.Context, cond func(corev1.NodeConditionType, corev1.ConditionStatus, string, string) corev1.NodeCondition) corev1.NodeCondition {
	st, err := k.cfg.Runtime.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return cond(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", "container runtime status check may not have completed yet: "+err.Error())
	}
	for _, c := range st.GetStatus().GetConditions() {
		if !c.Status {
			switch c.Type {
			case runtimeapi.RuntimeReady:
				return cond(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", "container runtime is down")
			case runtimeapi.NetworkReady:
				return cond(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady",
					"container runtime network not ready: NetworkReady=false reason:"+c.Reason+" message:"+c.Message)
			}
		}
	}
	return cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")
}

// sameStatus compares node statuses ignoring heartbeat times.
func sameStatus(a, b corev1.NodeStatus) bool {
	strip := func(s corev1.NodeStatus) corev1.NodeStatus {
		s = *s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastHeartbeatTime = metav1.Time{}
		}
		return s
	}
	return apiequality.Semantic.DeepEqual(strip(a), strip(b))
}

// keptNode is what the kubelet keeps of its Node (k.node): its name and
// UID (the lease's owner), pod CIDRs and status; not its labels,
// annotations and managedFields (a hollow agent keeps one per node).
func keptNode(n *corev1.Node) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion},
		Spec: corev1.NodeSpec{PodCIDR: n.Spec.PodCIDR, PodCIDRs: n.Spec.PodCIDRs}, Status: n.Status}
}

// postNodeStatus posts the node's status when it changed, or when force.
func (k *Kubelet) postNodeStatus(ctx context.Context, force bool) error {
	k.mu.Lock()
	node := k.node
	k.mu.Unlock()
	now := k.clock.Now()
	status := k.nodeStatus(ctx, node, now)
	if !force && sameStatus(node.Status, status) {
		return nil
	}
	for attempt := 0; ; attempt++ {
		// A merge patch of the status alone, as upstream's kubelet patches
		// it: an update would carry the node's spec as the kubelet last
		// saw it, and NodeRestriction refuses a kubelet's write whose
		// taints differ from the stored ones (the node lifecycle
		// controller changes them).
		body, err := json.Marshal(map[string]any{"status": status})
		if err != nil {
			return err
		}
		updated, err := k.nodes.Patch(ctx, k.cfg.NodeName, types.MergePatchType, body, metav1.PatchOptions{}, "status")
		if err == nil {
			k.mu.Lock()
			k.node, k.lastReport = keptNode(updated), now
			k.mu.Unlock()
			if k.updatePodCIDR(ctx, updated) {
				return k.postNodeStatus(ctx, false) // the network may be ready now
			}
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == 4 {
			return fmt.Errorf("kubelet: updating node status: %w", err)
		}
		if node, err = k.nodes.Get(ctx, k.cfg.NodeName, metav1.GetOptions{}); err != nil {
			return err
		}
		status = k.nodeStatus(ctx, node, now)
	}
}

// nodeStatusTask computes status every NodeStatusUpdateFrequency and
// posts it on change or every NodeStatusReportFrequency.
func (k *Kubelet) nodeStatusTask() task {
	return task{period: k.cfg.NodeStatusUpdateFrequency, run: func(ctx context.Context) {
		if k.notReadyWithoutCIDR() {
			k.readNode(ctx)
		}
		k.mu.Lock()
		due := k.clock.Since(k.lastReport) >= k.cfg.NodeStatusReportFrequency
		k.mu.Unlock()
		if err := k.postNodeStatus(ctx, due); err != nil && ctx.Err() == nil {
			k.log.Warn("posting node status", "err", err)
		}
	}}
}

// leaseTask renews kube-node-lease/<node> every leaseDuration/4, as
// upstream's node lease controller, and at once (its ticker armed
// before: once the lease exists its next renewal is scheduled, and tests
// step the clock as soon as they see the lease).
func (k *Kubelet) leaseTask() task {
	var lease *coordinationv1.Lease
	return task{period: time.Duration(k.cfg.NodeLeaseDurationSeconds) * time.Second / 4, now: true, run: func(ctx context.Context) {
		var err error
		lease, err = k.renewLease(ctx, lease)
		if err != nil && ctx.Err() == nil {
			k.log.Warn("renewing node lease", "err", err)
		}
	}}
}

func (k *Kubelet) renewLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	now := metav1.NewMicroTime(k.clock.Now())
	k.mu.Lock()
	node := k.node
	k.mu.Unlock()
	want := func(l *coordinationv1.Lease) {
		holder, d := k.cfg.NodeName, k.cfg.NodeLeaseDurationSeconds
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &holder, &d, &now
		if len(l.OwnerReferences) == 0 && node != nil && node.UID != "" {
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
		}
	}
	if lease != nil {
		l := lease.DeepCopy()
		want(l)
		if updated, err := k.leases.Update(ctx, l, metav1.UpdateOptions{}); err == nil {
			return updated, nil
		}
	}
	l, err := k.leases.Get(ctx, k.cfg.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: k.cfg.NodeName, Namespace: corev1.NamespaceNodeLease}}
		want(l)
		return k.leases.Create(ctx, l, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, err
	}
	want(l)
	return k.leases.Update(ctx, l, metav1.UpdateOptions{})
}
