package framework

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// AffinityTerm is a parsed PodAffinityTerm: which pods (selector) in
// which namespaces (names or a namespace selector) it matches, and over
// which topology key.
type AffinityTerm struct {
	Namespaces        sets.Set[string]
	Selector          labels.Selector
	TopologyKey       string
	NamespaceSelector labels.Selector
}

// Matches reports whether pod (whose namespace carries nsLabels) is
// selected by the term.
func (t *AffinityTerm) Matches(pod *corev1.Pod, nsLabels labels.Set) bool {
	if t.Namespaces.Has(pod.Namespace) || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a preferred term with its weight.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// PodInfo is a pod with what the scheduler derives from it once: parsed
// affinity terms and its requests.
type PodInfo struct {
	Pod                        *corev1.Pod
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// Requests and NonZeroRequests are PodRequests(Pod, false) and
	// NodeNonZeroRequests(Pod).
	Requests        *Resource
	NonZeroRequests *Resource
	// ParseError is set when an affinity term's selector does not parse;
	// the affinity plugins reject the pod with it.
	ParseError error
}

// NewPodInfo derives a PodInfo. Selector errors do not fail it: they are
// kept in ParseError (the API server validates selectors, so this is
// rare), and the term matches nothing.
func NewPodInfo(pod *corev1.Pod) *PodInfo {
	pi := &PodInfo{}
	pi.Update(pod)
	return pi
}

// Update re-derives the PodInfo for a new version of the pod.
func (pi *PodInfo) Update(pod *corev1.Pod) {
	*pi = PodInfo{Pod: pod}
	if a := pod.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			pi.RequiredAffinityTerms = pi.terms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
			pi.PreferredAffinityTerms = pi.weightedTerms(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			pi.RequiredAntiAffinityTerms = pi.terms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
			pi.PreferredAntiAffinityTerms = pi.weightedTerms(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	pi.Requests = PodRequests(pod, false)
	pi.NonZeroRequests = NodeNonZeroRequests(pod)
}

func (pi *PodInfo) terms(pod *corev1.Pod, in []corev1.PodAffinityTerm) []AffinityTerm {
	if len(in) == 0 {
		return nil
	}
	out := make([]AffinityTerm, 0, len(in))
	for i := range in {
		t, err := NewAffinityTerm(pod, &in[i])
		if err != nil {
			pi.ParseError = err
			continue
		}
		out = append(out, *t)
	}
	return out
}

func (pi *PodInfo) weightedTerms(pod *corev1.Pod, in []corev1.WeightedPodAffinityTerm) []WeightedAffinityTerm {
	if len(in) == 0 {
		return nil
	}
	out := make([]WeightedAffinityTerm, 0, len(in))
	for i := range in {
		t, err := NewAffinityTerm(pod, &in[i].PodAffinityTerm)
		if err != nil {
			pi.ParseError = err
			continue
		}
		out = append(out, WeightedAffinityTerm{AffinityTerm: *t, Weight: in[i].Weight})
	}
	return out
}

// NewAffinityTerm parses a PodAffinityTerm of pod: no namespaces and no
// namespace selector mean the pod's own namespace; a nil namespace
// selector matches no namespace, an empty one every namespace.
func NewAffinityTerm(pod *corev1.Pod, term *corev1.PodAffinityTerm) (*AffinityTerm, error) {
	sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("invalid label selector: %w", err)
	}
	nsSel, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("invalid namespace selector: %w", err)
	}
	ns := sets.New(term.Namespaces...)
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		ns.Insert(pod.Namespace)
	}
	return &AffinityTerm{Namespaces: ns, Selector: sel, TopologyKey: term.TopologyKey, NamespaceSelector: nsSel}, nil
}

// QueuedPodInfo is a pod in the scheduling queue with its queue history.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod was (last) added to the queue.
	Timestamp time.Time
	// Attempts counts scheduling attempts (back-off grows with it).
	Attempts int
	// InitialAttemptTimestamp is the first time the pod was popped.
	InitialAttemptTimestamp *time.Time
	// UnschedulablePlugins are the plugins that rejected the pod in its
	// last attempt: only events those plugins registered requeue it.
	UnschedulablePlugins sets.Set[string]
	// PendingPlugins returned Pending in the last attempt.
	PendingPlugins sets.Set[string]
	// GatingPlugin is the PreEnqueue plugin keeping the pod out of
	// activeQ ("" when not gated).
	GatingPlugin string
	// ConsecutiveErrorsCount counts attempts that ended in an Error.
	ConsecutiveErrorsCount int
	// UnschedulableCount counts attempts rejected by a plugin
	// (Unschedulable or Pending); with ConsecutiveErrorsCount it sets the
	// back-off, as upstream's.
	UnschedulableCount int
	// BackoffExpiration caches when the current back-off ends (zero: not
	// computed yet); the queue resets it when the pod comes back.
	BackoffExpiration time.Time
}

// Gated reports whether a PreEnqueue plugin keeps the pod out of activeQ.
func (q *QueuedPodInfo) Gated() bool { return q.GatingPlugin != "" }

// DeepCopy copies the queue bookkeeping (the PodInfo is shared).
func (q *QueuedPodInfo) DeepCopy() *QueuedPodInfo {
	out := *q
	out.UnschedulablePlugins = q.UnschedulablePlugins.Clone()
	out.PendingPlugins = q.PendingPlugins.Clone()
	return &out
}

// ImageStateSummary is what a node knows about one image: its size and
// how many nodes hold it.
type ImageStateSummary struct {
	Size     int64
	NumNodes int
}

// ProtocolPort is one host port use.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// DefaultBindAllHostIP is the host IP meaning "every address".
const DefaultBindAllHostIP = "0.0.0.0"

// HostPortInfo maps host IP → the protocol/ports used on it.
type HostPortInfo map[string]sets.Set[ProtocolPort]

// Add records ip/protocol/port (an empty ip is 0.0.0.0, an empty
// protocol TCP).
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if h[ip] == nil {
		h[ip] = sets.New[ProtocolPort]()
	}
	h[ip].Insert(ProtocolPort{protocol, port})
}

// Remove forgets ip/protocol/port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if m, ok := h[ip]; ok {
		m.Delete(ProtocolPort{protocol, port})
		if m.Len() == 0 {
			delete(h, ip)
		}
	}
}

// Len counts the recorded ports.
func (h HostPortInfo) Len() int {
	n := 0
	for _, m := range h {
		n += m.Len()
	}
	return n
}

// CheckConflict reports whether ip/protocol/port collides with a
// recorded use: 0.0.0.0 collides with every address and every address
// with 0.0.0.0.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == DefaultBindAllHostIP {
		for _, m := range h {
			if m.Has(pp) {
				return true
			}
		}
		return false
	}
	for _, key := range []string{DefaultBindAllHostIP, ip} {
		if m, ok := h[key]; ok && m.Has(pp) {
			return true
		}
	}
	return false
}

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = DefaultBindAllHostIP
	}
	if protocol == "" {
		protocol = string(corev1.ProtocolTCP)
	}
	return ip, protocol
}

// NodeInfo is the scheduler's view of one node: the Node, the pods on it
// (assumed ones included) and aggregates over them. Its methods never
// touch Generation: the cache that owns a NodeInfo sets it from its own
// counter after every change, so that a snapshot copies only the nodes
// that changed since the last one.
type NodeInfo struct {
	node *corev1.Node

	Pods                         []*PodInfo
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	UsedPorts                    HostPortInfo
	// Requested is the sum of the pods' requests; NonZeroRequested the
	// same with the non-zero defaults (for scoring).
	Requested        *Resource
	NonZeroRequested *Resource
	Allocatable      *Resource
	// ImageStates: image name → size and spread, for the node's images.
	ImageStates map[string]*ImageStateSummary
	// PVCRefCounts: "namespace/claim" → pods on the node using it.
	PVCRefCounts map[string]int

	Generation int64
}

// NewNodeInfo returns a NodeInfo holding pods (no Node yet).
func NewNodeInfo(pods ...*corev1.Pod) *NodeInfo {
	ni := &NodeInfo{
		Requested: &Resource{}, NonZeroRequested: &Resource{}, Allocatable: &Resource{},
		UsedPorts: HostPortInfo{}, ImageStates: map[string]*ImageStateSummary{}, PVCRefCounts: map[string]int{},
	}
	for _, p := range pods {
		ni.AddPod(p)
	}
	return ni
}

// Node is the node (nil while only pods are known).
func (n *NodeInfo) Node() *corev1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// NodeName is the node's name ("" without a node).
func (n *NodeInfo) NodeName() string {
	if n == nil || n.node == nil {
		return ""
	}
	return n.node.Name
}

// SetNode sets the node and its allocatable.
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.node = node
	n.Allocatable = NewResource(node.Status.Allocatable)
}

// RemoveNode forgets the node (pods stay until they are removed).
func (n *NodeInfo) RemoveNode() {
	n.node = nil
}

// AddPod adds a pod.
func (n *NodeInfo) AddPod(pod *corev1.Pod) { n.AddPodInfo(NewPodInfo(pod)) }

// AddPodInfo adds a pod already derived.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if podWithAffinity(pi.Pod) {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if podWithRequiredAntiAffinity(pi.Pod) {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// RemovePod removes the pod with pod's UID; an error when it is not on
// the node.
func (n *NodeInfo) RemovePod(pod *corev1.Pod) error {
	n.PodsWithAffinity = removeFrom(n.PodsWithAffinity, pod.UID)
	n.PodsWithRequiredAntiAffinity = removeFrom(n.PodsWithRequiredAntiAffinity, pod.UID)
	for i, pi := range n.Pods {
		if pi.Pod.UID == pod.UID {
			last := len(n.Pods) - 1
			n.Pods[i] = n.Pods[last]
			n.Pods[last] = nil
			n.Pods = n.Pods[:last]
			n.update(pi, -1)
			return nil
		}
	}
	return fmt.Errorf("no corresponding pod %s/%s in pods of node %s", pod.Namespace, pod.Name, n.NodeName())
}

func removeFrom(s []*PodInfo, uid types.UID) []*PodInfo {
	for i, pi := range s {
		if pi.Pod.UID == uid {
			last := len(s) - 1
			s[i] = s[last]
			s[last] = nil
			return s[:last]
		}
	}
	return s
}

func (n *NodeInfo) update(pi *PodInfo, sign int64) {
	if sign > 0 {
		n.Requested.AddResource(pi.Requests)
		n.NonZeroRequested.AddResource(pi.NonZeroRequests)
	} else {
		n.Requested.SubResource(pi.Requests)
		n.NonZeroRequested.SubResource(pi.NonZeroRequests)
	}
	pod := pi.Pod
	// Host ports of the containers and of the init containers that run
	// for the pod's whole life (sidecars), as upstream's GetHostPorts: a
	// plain init container has exited before the containers start.
	for k, cs := range [2][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if k == 0 && (cs[i].RestartPolicy == nil || *cs[i].RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
			for _, p := range cs[i].Ports {
				if sign > 0 {
					n.UsedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
				} else {
					n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
				}
			}
		}
	}
	// Claims named in the pod's volumes only, as upstream: a generic
	// ephemeral volume's claim belongs to this one pod and is not counted.
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		key := pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName
		n.PVCRefCounts[key] += int(sign)
		if n.PVCRefCounts[key] <= 0 {
			delete(n.PVCRefCounts, key)
		}
	}
}

func podWithAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

func podWithRequiredAntiAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// Snapshot copies the NodeInfo for a scheduling cycle: the slices and
// maps are new, the PodInfos and the Node shared (never mutated).
func (n *NodeInfo) Snapshot() *NodeInfo {
	out := &NodeInfo{
		node:             n.node,
		Requested:        n.Requested.Clone(),
		NonZeroRequested: n.NonZeroRequested.Clone(),
		Allocatable:      n.Allocatable.Clone(),
		UsedPorts:        make(HostPortInfo, len(n.UsedPorts)),
		ImageStates:      n.ImageStates,
		PVCRefCounts:     make(map[string]int, len(n.PVCRefCounts)),
		Generation:       n.Generation,
	}
	if len(n.Pods) > 0 {
		out.Pods = append([]*PodInfo(nil), n.Pods...)
	}
	if len(n.PodsWithAffinity) > 0 {
		out.PodsWithAffinity = append([]*PodInfo(nil), n.PodsWithAffinity...)
	}
	if len(n.PodsWithRequiredAntiAffinity) > 0 {
		out.PodsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...)
	}
	for ip, ports := range n.UsedPorts {
		out.UsedPorts[ip] = ports.Clone()
	}
	for k, v := range n.PVCRefCounts {
		out.PVCRefCounts[k] = v
	}
	return out
}

// Clone is Snapshot (upstream's name in preemption).
func (n *NodeInfo) Clone() *NodeInfo { return n.Snapshot() }

// String is for logs.
func (n *NodeInfo) String() string {
	return fmt.Sprintf("&NodeInfo{Node:%s, Pods:%d, Requested:%+v, Allocatable:%+v}", n.NodeName(), len(n.Pods), *n.Requested, *n.Allocatable)
}
