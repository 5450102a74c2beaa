package framework

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// NodeToStatusReader reads why nodes were rejected.
type NodeToStatusReader interface {
	// Get is the node's status; nodes never filtered (excluded by a
	// PreFilter result) have the absent-nodes status.
	Get(nodeName string) *Status
	// NodesForStatusCode lists the nodes of lister whose status has code.
	NodesForStatusCode(lister NodeInfoLister, code Code) ([]*NodeInfo, error)
}

// NodeToStatus maps nodes to the status that rejected them.
type NodeToStatus struct {
	nodeToStatus      map[string]*Status
	absentNodesStatus *Status
}

// NewDefaultNodeToStatus is empty; absent nodes are
// UnschedulableAndUnresolvable (a PreFilter plugin excluded them).
func NewDefaultNodeToStatus() *NodeToStatus {
	return &NodeToStatus{nodeToStatus: map[string]*Status{}, absentNodesStatus: NewStatus(UnschedulableAndUnresolvable)}
}

// NewNodeToStatus wraps m with the absent-nodes status.
func NewNodeToStatus(m map[string]*Status, absent *Status) *NodeToStatus {
	return &NodeToStatus{nodeToStatus: m, absentNodesStatus: absent}
}

func (m *NodeToStatus) Get(nodeName string) *Status {
	if s, ok := m.nodeToStatus[nodeName]; ok {
		return s
	}
	return m.absentNodesStatus
}

// Set records a node's status.
func (m *NodeToStatus) Set(nodeName string, s *Status) { m.nodeToStatus[nodeName] = s }

// Len counts the explicit entries.
func (m *NodeToStatus) Len() int { return len(m.nodeToStatus) }

// AbsentNodesStatus is the status of nodes without an entry.
func (m *NodeToStatus) AbsentNodesStatus() *Status { return m.absentNodesStatus }

// SetAbsentNodesStatus sets it.
func (m *NodeToStatus) SetAbsentNodesStatus(s *Status) { m.absentNodesStatus = s }

// ForEachExplicitNode calls fn for each entry.
func (m *NodeToStatus) ForEachExplicitNode(fn func(nodeName string, s *Status)) {
	for n, s := range m.nodeToStatus {
		fn(n, s)
	}
}

func (m *NodeToStatus) NodesForStatusCode(lister NodeInfoLister, code Code) ([]*NodeInfo, error) {
	all, err := lister.List()
	if err != nil {
		return nil, err
	}
	var out []*NodeInfo
	for _, ni := range all {
		if m.Get(ni.NodeName()).Code() == code {
			out = append(out, ni)
		}
	}
	return out, nil
}

// Diagnosis is why a pod fits no node.
type Diagnosis struct {
	NodeToStatus *NodeToStatus
	// UnschedulablePlugins / PendingPlugins rejected the pod somewhere.
	UnschedulablePlugins sets.Set[string]
	PendingPlugins       sets.Set[string]
	// PreFilterMsg is the message of a PreFilter rejection.
	PreFilterMsg string
	// PostFilterMsg is preemption's outcome ("preemption: ...").
	PostFilterMsg string
}

// FitError is the error of a pod that fits no node; its message is
// upstream's "0/5 nodes are available: ..." shape.
type FitError struct {
	Pod         *corev1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis
}

// NoNodeAvailableMsg starts every FitError message.
const NoNodeAvailableMsg = "0/%v nodes are available"

// Error renders upstream's message exactly: "0/N nodes are available:"
// then the PreFilter message or the reasons counted over nodes and
// sorted by text ("3 Insufficient cpu, 2 node(s) had untolerated taint
// {...}"), each part ended by ".", then the PostFilter plugins' messages
// as they are ("no new claims to deallocate, preemption: ... for
// scheduling.", checked against kube-scheduler v1.34.4 by test/compat).
func (f *FitError) Error() string {
	msg := fmt.Sprintf(NoNodeAvailableMsg+":", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		msg += " " + f.Diagnosis.PreFilterMsg + "."
	} else if f.Diagnosis.NodeToStatus != nil {
		counts := map[string]int{}
		f.Diagnosis.NodeToStatus.ForEachExplicitNode(func(_ string, s *Status) {
			for _, r := range s.Reasons() {
				counts[r]++
			}
		})
		if absent := f.NumAllNodes - f.Diagnosis.NodeToStatus.Len(); absent > 0 {
			for _, r := range f.Diagnosis.NodeToStatus.AbsentNodesStatus().Reasons() {
				counts[r] += absent
			}
		}
		parts := make([]string, 0, len(counts))
		for r, n := range counts {
			parts = append(parts, fmt.Sprintf("%v %v", n, r))
		}
		sort.Strings(parts)
		if len(parts) > 0 {
			msg += " " + strings.Join(parts, ", ") + "."
		}
	}
	if f.Diagnosis.PostFilterMsg != "" {
		// As is: preemption's message ends with its own "." and an
		// Error's ("not found") has none (kube-scheduler v1.34.4).
		msg += " " + f.Diagnosis.PostFilterMsg
	}
	return msg
}

// AddPluginStatus records the plugin of a rejection in the diagnosis
// (Pending → PendingPlugins, other rejections → UnschedulablePlugins).
func (d *Diagnosis) AddPluginStatus(s *Status) {
	if s.Plugin() == "" {
		return
	}
	if s.Code() == Pending {
		if d.PendingPlugins == nil {
			d.PendingPlugins = sets.New[string]()
		}
		d.PendingPlugins.Insert(s.Plugin())
		return
	}
	if s.IsRejected() {
		if d.UnschedulablePlugins == nil {
			d.UnschedulablePlugins = sets.New[string]()
		}
		d.UnschedulablePlugins.Insert(s.Plugin())
	}
}
