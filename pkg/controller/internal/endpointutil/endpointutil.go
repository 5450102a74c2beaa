package endpointutil

import (
	"fmt"
	"net"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(p *corev1.Pod) bool {
	c := PodCondition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// PodCondition returns the pod's condition of type t, or nil.
func PodCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// IsPodTerminal: Succeeded or Failed.
func IsPodTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// PodIPs are the pod's IPs: status.podIPs, else status.podIP.
func PodIPs(p *corev1.Pod) []string {
	if len(p.Status.PodIPs) > 0 {
		out := make([]string, 0, len(p.Status.PodIPs))
		for _, ip := range p.Status.PodIPs {
			out = append(out, ip.IP)
		}
		return out
	}
	if p.Status.PodIP != "" {
		return []string{p.Status.PodIP}
	}
	return nil
}

// ShouldPodBeInEndpoints is upstream's: terminal pods and pods without an
// IP never are; terminating ones only with includeTerminating.
func ShouldPodBeInEndpoints(p *corev1.Pod, includeTerminating bool) bool {
	if IsPodTerminal(p) || len(PodIPs(p)) == 0 {
		return false
	}
	return includeTerminating || p.DeletionTimestamp == nil
}

// ShouldSetHostname: the pod names a hostname and its subdomain is the
// Service (in the same namespace).
func ShouldSetHostname(p *corev1.Pod, svc *corev1.Service) bool {
	return p.Spec.Hostname != "" && p.Spec.Subdomain == svc.Name && svc.Namespace == p.Namespace
}

// IsServiceIPSet: the Service has a cluster IP (it is not headless).
func IsServiceIPSet(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

// IsIPv6 reports whether ip is an IPv6 address.
func IsIPv6(ip string) bool {
	p := net.ParseIP(ip)
	return p != nil && p.To4() == nil
}

// FindPort resolves a Service port's targetPort on a pod: a number as is, a
// name through the ports of the pod's containers (then of its restartable
// init containers) with the Service port's protocol.
func FindPort(p *corev1.Pod, sp *corev1.ServicePort) (int32, error) {
	switch sp.TargetPort.Type {
	case intstr.Int:
		return int32(sp.TargetPort.IntValue()), nil
	case intstr.String:
		name := sp.TargetPort.StrVal
		for _, c := range p.Spec.Containers {
			for _, port := range c.Ports {
				if port.Name == name && port.Protocol == sp.Protocol {
					return port.ContainerPort, nil
				}
			}
		}
		for _, c := range p.Spec.InitContainers {
			if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				continue
			}
			for _, port := range c.Ports {
				if port.Name == name && port.Protocol == sp.Protocol {
					return port.ContainerPort, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no suitable port for manifest: %s", p.UID)
}

// Key is "namespace/name".
func Key(ns, name string) string { return ns + "/" + name }

// ServicesForPod are the keys of the Services (of the pod's namespace,
// given) whose selector matches the pod. Services without a selector
// select nothing.
func ServicesForPod(services []*corev1.Service, p *corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, s := range services {
		if s.Spec.Selector == nil || s.Namespace != p.Namespace {
			continue
		}
		if labels.SelectorFromValidatedSet(s.Spec.Selector).Matches(labels.Set(p.Labels)) {
			out[Key(s.Namespace, s.Name)] = true
		}
	}
	return out
}

// PodEndpointsChanged is upstream's podEndpointsChanged: whether the pod's
// endpoint changed (deletion, readiness, IPs, phase) and whether its
// service membership may have (labels, hostname, subdomain).
func PodEndpointsChanged(old, cur *corev1.Pod) (podChanged, labelsChanged bool) {
	labelsChanged = !reflect.DeepEqual(old.Labels, cur.Labels) ||
		old.Spec.Hostname != cur.Spec.Hostname || old.Spec.Subdomain != cur.Spec.Subdomain
	switch {
	case (old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil):
		return true, labelsChanged
	case IsPodReady(old) != IsPodReady(cur):
		return true, labelsChanged
	case IsPodTerminal(old) != IsPodTerminal(cur):
		return true, labelsChanged
	case !slices.Equal(PodIPs(old), PodIPs(cur)):
		return true, labelsChanged
	case old.Spec.NodeName != cur.Spec.NodeName:
		return true, labelsChanged
	}
	return false, labelsChanged
}

// ServicesToUpdateOnPodChange is upstream's GetServicesToUpdateOnPodChange:
// the Services to resync after a pod update.
func ServicesToUpdateOnPodChange(services []*corev1.Service, old, cur *corev1.Pod) map[string]bool {
	if old.ResourceVersion == cur.ResourceVersion {
		return nil // a resync
	}
	podChanged, labelsChanged := PodEndpointsChanged(old, cur)
	if !podChanged && !labelsChanged {
		return nil
	}
	now := ServicesForPod(services, cur)
	if !labelsChanged {
		return now
	}
	before := ServicesForPod(services, old)
	out := map[string]bool{}
	for k := range now {
		if podChanged || !before[k] {
			out[k] = true
		}
	}
	for k := range before {
		if podChanged || !now[k] {
			out[k] = true
		}
	}
	return out
}

// TriggerTimeTracker computes the endpoints.kubernetes.io/last-change-trigger-time
// of a Service's endpoints, as upstream's: for a Service seen for the first
// time its creation time, afterwards the earliest trigger time (a pod's
// Ready transition, the Service's creation) that changed since the previous
// sync, zero when none did.
type TriggerTimeTracker struct {
	mu     sync.Mutex
	states map[string]triggerState
}

type triggerState struct {
	pods    map[string]time.Time
	service time.Time
}

// NewTriggerTimeTracker returns an empty tracker.
func NewTriggerTimeTracker() *TriggerTimeTracker {
	return &TriggerTimeTracker{states: map[string]triggerState{}}
}

// Compute returns the trigger time for this sync and records the state.
func (t *TriggerTimeTracker) Compute(svc *corev1.Service, pods []*corev1.Pod) time.Time {
	key := Key(svc.Namespace, svc.Name)
	t.mu.Lock()
	state, known := t.states[key]
	t.mu.Unlock()
	var minChanged time.Time
	earlier := func(ts time.Time) {
		if minChanged.IsZero() || ts.Before(minChanged) {
			minChanged = ts
		}
	}
	podTimes := map[string]time.Time{}
	for _, p := range pods {
		c := PodCondition(p, corev1.PodReady)
		if c == nil || c.LastTransitionTime.IsZero() {
			continue
		}
		ts := c.LastTransitionTime.Time
		podTimes[p.Name] = ts
		if ts.After(state.pods[p.Name]) {
			earlier(ts)
		}
	}
	svcTime := svc.CreationTimestamp.Time
	if svcTime.After(state.service) {
		earlier(svcTime)
	}
	t.mu.Lock()
	t.states[key] = triggerState{pods: podTimes, service: svcTime}
	t.mu.Unlock()
	if !known {
		return svc.CreationTimestamp.Time
	}
	return minChanged
}

// DeleteService forgets a Service.
func (t *TriggerTimeTracker) DeleteService(ns, name string) {
	t.mu.Lock()
	delete(t.states, Key(ns, name))
	t.mu.Unlock()
}

// --- Endpoints subsets ---------------------------------------------------------

type addrKey struct {
	ip  string
	uid types.UID
}

func addressKey(a *corev1.EndpointAddress) addrKey {
	k := addrKey{ip: a.IP}
	if a.TargetRef != nil {
		k.uid = a.TargetRef.UID
	}
	return k
}

// RepackSubsets is upstream's canonical form of Endpoints subsets: one
// subset per distinct set of addresses, carrying every port those
// addresses offer; an address ready in one subset is ready everywhere;
// addresses sorted by IP then target UID, ports and subsets sorted.
func RepackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	addrs := map[addrKey]*corev1.EndpointAddress{}
	// port (sentinel Port -1 for port-less subsets) -> address -> ready
	byPort := map[corev1.EndpointPort]map[addrKey]bool{}
	var portOrder []corev1.EndpointPort
	add := func(s *corev1.EndpointSubset, port corev1.EndpointPort) {
		m, ok := byPort[port]
		if !ok {
			m = map[addrKey]bool{}
			byPort[port] = m
			portOrder = append(portOrder, port)
		}
		for i := range s.Addresses {
			k := addressKey(&s.Addresses[i])
			if _, ok := addrs[k]; !ok {
				addrs[k] = &s.Addresses[i]
			}
			m[k] = true
		}
		for i := range s.NotReadyAddresses {
			k := addressKey(&s.NotReadyAddresses[i])
			if _, ok := addrs[k]; !ok {
				addrs[k] = &s.NotReadyAddresses[i]
			}
			if _, ok := m[k]; !ok {
				m[k] = false
			}
		}
	}
	for i := range subsets {
		if len(subsets[i].Ports) == 0 {
			add(&subsets[i], corev1.EndpointPort{Port: -1})
			continue
		}
		for _, p := range subsets[i].Ports {
			add(&subsets[i], p)
		}
	}
	// Group ports by their address set.
	setKey := func(m map[addrKey]bool) string {
		keys := make([]string, 0, len(m))
		for k, r := range m {
			keys = append(keys, k.ip+"|"+string(k.uid)+"|"+strconv.FormatBool(r))
		}
		sort.Strings(keys)
		return strings.Join(keys, ",")
	}
	type group struct {
		set   map[addrKey]bool
		ports []corev1.EndpointPort
	}
	groups := map[string]*group{}
	var order []string
	for _, port := range portOrder {
		m := byPort[port]
		k := setKey(m)
		g, ok := groups[k]
		if !ok {
			g = &group{set: m}
			groups[k] = g
			order = append(order, k)
		}
		if port.Port > 0 {
			g.ports = append(g.ports, port)
		}
	}
	out := []corev1.EndpointSubset{}
	for _, k := range order {
		g := groups[k]
		var ready, notReady []corev1.EndpointAddress
		for ak, r := range g.set {
			if r {
				ready = append(ready, *addrs[ak])
			} else {
				notReady = append(notReady, *addrs[ak])
			}
		}
		out = append(out, corev1.EndpointSubset{Addresses: ready, NotReadyAddresses: notReady, Ports: g.ports})
	}
	return SortSubsets(out)
}

// SortSubsets sorts addresses (IP, then target UID), ports (name, port,
// protocol) and subsets (by their first address, then first port).
func SortSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	byAddr := func(a, b corev1.EndpointAddress) int {
		if c := strings.Compare(a.IP, b.IP); c != 0 {
			return c
		}
		ka, kb := addressKey(&a), addressKey(&b)
		return strings.Compare(string(ka.uid), string(kb.uid))
	}
	for i := range subsets {
		slices.SortFunc(subsets[i].Addresses, byAddr)
		slices.SortFunc(subsets[i].NotReadyAddresses, byAddr)
		slices.SortFunc(subsets[i].Ports, func(a, b corev1.EndpointPort) int {
			return strings.Compare(portString(a), portString(b))
		})
	}
	first := func(s corev1.EndpointSubset) string {
		var b strings.Builder
		if len(s.Addresses) > 0 {
			b.WriteString(s.Addresses[0].IP)
		} else if len(s.NotReadyAddresses) > 0 {
			b.WriteString(s.NotReadyAddresses[0].IP)
		}
		b.WriteString("#")
		if len(s.Ports) > 0 {
			b.WriteString(portString(s.Ports[0]))
		}
		return b.String()
	}
	slices.SortStableFunc(subsets, func(a, b corev1.EndpointSubset) int { return strings.Compare(first(a), first(b)) })
	return subsets
}

func portString(p corev1.EndpointPort) string {
	ap := ""
	if p.AppProtocol != nil {
		ap = *p.AppProtocol
	}
	return fmt.Sprintf("%s/%s/%d/%s", p.Name, p.Protocol, p.Port, ap)
}

// SubsetsEqualIgnoringResourceVersion compares subsets ignoring the
// resourceVersion of target references (a pod's unrelated update).
func SubsetsEqualIgnoringResourceVersion(a, b []corev1.EndpointSubset) bool {
	return semanticIgnoreRV.DeepEqual(a, b)
}

var semanticIgnoreRV = conversion.EqualitiesOrDie(func(a, b corev1.ObjectReference) bool {
	a.ResourceVersion, b.ResourceVersion = "", ""
	return a == b
})

// --- EndpointSlices ------------------------------------------------------------

// SlicePrefix is the generateName of a Service's slices.
func SlicePrefix(name string) string { return name + "-" }

// EndpointKey identifies an endpoint as upstream's hash does: its sorted
// addresses, hostname and target object.
func EndpointKey(e *discoveryv1.Endpoint) string {
	addrs := slices.Clone(e.Addresses)
	sort.Strings(addrs)
	var b strings.Builder
	b.WriteString(strings.Join(addrs, ","))
	b.WriteString("|")
	if e.Hostname != nil {
		b.WriteString(*e.Hostname)
	}
	b.WriteString("|")
	if e.TargetRef != nil {
		b.WriteString(e.TargetRef.Namespace + "/" + e.TargetRef.Name)
	}
	return b.String()
}

// EndpointSet is a set of endpoints keyed by EndpointKey.
type EndpointSet map[string]*discoveryv1.Endpoint

// Insert adds (or replaces) e.
func (s EndpointSet) Insert(e *discoveryv1.Endpoint) { s[EndpointKey(e)] = e }

// Get returns the member with e's key, or nil.
func (s EndpointSet) Get(e *discoveryv1.Endpoint) *discoveryv1.Endpoint { return s[EndpointKey(e)] }

// Delete removes the member with e's key.
func (s EndpointSet) Delete(e *discoveryv1.Endpoint) { delete(s, EndpointKey(e)) }

// PopAny removes and returns a member: the one with the smallest key, so
// that fills are deterministic.
func (s EndpointSet) PopAny() *discoveryv1.Endpoint {
	var min string
	first := true
	for k := range s {
		if first || k < min {
			min, first = k, false
		}
	}
	if first {
		return nil
	}
	e := s[min]
	delete(s, min)
	return e
}

// EndpointsEqualBeyondKey compares what EndpointKey leaves out: conditions,
// node, zone, hints and the target reference (ignoring its resourceVersion).
func EndpointsEqualBeyondKey(a, b *discoveryv1.Endpoint) bool {
	bp := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	sp := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return bp(a.Conditions.Ready, b.Conditions.Ready) && bp(a.Conditions.Serving, b.Conditions.Serving) &&
		bp(a.Conditions.Terminating, b.Conditions.Terminating) &&
		sp(a.NodeName, b.NodeName) && sp(a.Zone, b.Zone) &&
		semanticIgnoreRV.DeepEqual(a.TargetRef, b.TargetRef) && equality.Semantic.DeepEqual(a.Hints, b.Hints)
}

// PortMapKey identifies a set of EndpointSlice ports (order-independent).
func PortMapKey(ports []discoveryv1.EndpointPort) string {
	ss := make([]string, 0, len(ports))
	for _, p := range ports {
		s := func(x *string) string {
			if x == nil {
				return "<nil>"
			}
			return *x
		}
		var proto, num string
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		if p.Port != nil {
			num = strconv.Itoa(int(*p.Port))
		}
		ss = append(ss, s(p.Name)+"/"+proto+"/"+num+"/"+s(p.AppProtocol))
	}
	sort.Strings(ss)
	return strings.Join(ss, ",")
}

// SortPorts sorts slice ports by name, then port.
func SortPorts(ports []discoveryv1.EndpointPort) {
	slices.SortStableFunc(ports, func(a, b discoveryv1.EndpointPort) int {
		var an, bn string
		if a.Name != nil {
			an = *a.Name
		}
		if b.Name != nil {
			bn = *b.Name
		}
		return strings.Compare(an, bn)
	})
}

// deletionExpected marks a slice this controller deleted.
const deletionExpected = -1

// SliceTracker remembers the generation of every EndpointSlice a
// controller wrote, per Service, so that a sync can tell its informer has
// not caught up yet (StaleSlices), as upstream's EndpointSliceTracker.
type SliceTracker struct {
	mu   sync.Mutex
	gens map[string]map[types.UID]int64
}

// NewSliceTracker returns an empty tracker.
func NewSliceTracker() *SliceTracker { return &SliceTracker{gens: map[string]map[types.UID]int64{}} }

func sliceService(s *discoveryv1.EndpointSlice) string {
	return Key(s.Namespace, s.Labels[discoveryv1.LabelServiceName])
}

// Update records a slice as written (its generation).
func (t *SliceTracker) Update(s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := sliceService(s)
	if t.gens[k] == nil {
		t.gens[k] = map[types.UID]int64{}
	}
	t.gens[k][s.UID] = s.Generation
}

// ExpectDeletion records a slice as deleted by us.
func (t *SliceTracker) ExpectDeletion(s *discoveryv1.EndpointSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := sliceService(s)
	if t.gens[k] == nil {
		t.gens[k] = map[types.UID]int64{}
	}
	t.gens[k][s.UID] = deletionExpected
}

// ShouldSync reports whether an informer event about s is news: a slice
// not written by us, or newer than what we wrote.
func (t *SliceTracker) ShouldSync(s *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.gens[sliceService(s)][s.UID]
	return !ok || s.Generation > g
}

// HandleDeletion forgets a deleted slice and reports whether the deletion
// was unexpected (not ours): then the Service needs a sync.
func (t *SliceTracker) HandleDeletion(s *discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.gens[sliceService(s)]
	g, ok := m[s.UID]
	if ok {
		delete(m, s.UID)
	}
	return !ok || g != deletionExpected
}

// StaleSlices reports whether the listed slices of a Service lag behind
// our writes: a slice we deleted is still listed, one we wrote is missing
// or older.
func (t *SliceTracker) StaleSlices(ns, name string, listed []*discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.gens[Key(ns, name)]
	if !ok {
		return false
	}
	seen := map[types.UID]bool{}
	for _, s := range listed {
		seen[s.UID] = true
		if g, ok := m[s.UID]; ok && (g == deletionExpected || g > s.Generation) {
			return true
		}
	}
	for uid, g := range m {
		if g != deletionExpected && !seen[uid] {
			return true
		}
	}
	return false
}

// DeleteService forgets a Service's slices.
func (t *SliceTracker) DeleteService(ns, name string) {
	t.mu.Lock()
	delete(t.gens, Key(ns, name))
	t.mu.Unlock()
}
