package endpointslice

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/controller/internal/endpointutil"
)

// ControllerName is the managed-by label value of the slices this
// controller owns.
const ControllerName = "endpointslice-controller.k8s.io"

// ErrNodeNotFound: a selected pod names a node that does not exist.
var ErrNodeNotFound = errors.New("node not found")

// Plan is what a sync writes.
type Plan struct {
	Create, Update, Delete []*discoveryv1.EndpointSlice
}

// Empty reports whether the plan writes nothing.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// NodeGetter looks nodes up (a lister).
type NodeGetter func(name string) (*corev1.Node, error)

// Reconcile plans the writes that bring a Service's slices (existing:
// those labelled with its name and managed by this controller) to the
// state its pods call for. The error lists pods left out because their
// node is missing; the plan is valid regardless.
func Reconcile(svc *corev1.Service, pods []*corev1.Pod, existing []*discoveryv1.EndpointSlice, nodes NodeGetter, maxPerSlice int) (Plan, error) {
	var plan Plan
	var errs []error
	families := addressTypes(svc)
	byType := map[discoveryv1.AddressType][]*discoveryv1.EndpointSlice{}
	var wrongType []*discoveryv1.EndpointSlice
	for _, s := range existing {
		if !slices.Contains(families, s.AddressType) {
			wrongType = append(wrongType, s)
			continue
		}
		byType[s.AddressType] = append(byType[s.AddressType], s)
	}
	for _, at := range families {
		p, err := reconcileAddressType(svc, pods, byType[at], at, nodes, maxPerSlice)
		if err != nil {
			errs = append(errs, err)
		}
		plan.Create = append(plan.Create, p.Create...)
		plan.Update = append(plan.Update, p.Update...)
		plan.Delete = append(plan.Delete, p.Delete...)
	}
	plan.Delete = append(plan.Delete, wrongType...)
	return plan, errors.Join(errs...)
}

// addressTypes are the slice address types of a Service: its IP
// families; without them the cluster IP's, or both for a headless one.
func addressTypes(svc *corev1.Service) []discoveryv1.AddressType {
	var out []discoveryv1.AddressType
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case corev1.IPv4Protocol:
			out = append(out, discoveryv1.AddressTypeIPv4)
		case corev1.IPv6Protocol:
			out = append(out, discoveryv1.AddressTypeIPv6)
		}
	}
	if len(out) > 0 {
		return out
	}
	if endpointutil.IsServiceIPSet(svc) {
		if endpointutil.IsIPv6(svc.Spec.ClusterIP) {
			return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv6}
		}
		return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4}
	}
	return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}
}

func ownedBy(s *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	for _, o := range s.OwnerReferences {
		if o.UID == svc.UID && o.Kind == "Service" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}

type portGroup struct {
	ports     []discoveryv1.EndpointPort
	endpoints endpointutil.EndpointSet
}

func reconcileAddressType(svc *corev1.Service, pods []*corev1.Pod, existing []*discoveryv1.EndpointSlice,
	at discoveryv1.AddressType, nodes NodeGetter, maxPerSlice int) (Plan, error) {
	var errs []error
	var toCreate, toUpdate, toDelete []*discoveryv1.EndpointSlice
	existingByPorts := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		if ownedBy(s, svc) {
			k := endpointutil.PortMapKey(s.Ports)
			existingByPorts[k] = append(existingByPorts[k], s)
		} else {
			toDelete = append(toDelete, s)
		}
	}
	desired := map[string]*portGroup{}
	for _, p := range pods {
		if !endpointutil.ShouldPodBeInEndpoints(p, true) {
			continue
		}
		ports := endpointPorts(svc, p)
		k := endpointutil.PortMapKey(ports)
		g, ok := desired[k]
		if !ok {
			g = &portGroup{ports: ports, endpoints: endpointutil.EndpointSet{}}
			desired[k] = g
		}
		var node *corev1.Node
		if p.Spec.NodeName != "" {
			n, err := nodes(p.Spec.NodeName)
			if err != nil {
				if !svc.Spec.PublishNotReadyAddresses {
					errs = append(errs, fmt.Errorf("skipping Pod %s for Service %s/%s: %w", p.Name, svc.Namespace, svc.Name, ErrNodeNotFound))
					continue
				}
			} else {
				node = n
			}
		}
		ep := podToEndpoint(p, node, svc, at)
		if len(ep.Addresses) > 0 {
			g.endpoints.Insert(ep)
		}
	}
	keys := make([]string, 0, len(desired))
	for k := range desired {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := desired[k]
		c, u, d := reconcilePortGroup(svc, existingByPorts[k], g.endpoints, g.ports, at, maxPerSlice)
		toCreate, toUpdate, toDelete = append(toCreate, c...), append(toUpdate, u...), append(toDelete, d...)
	}
	existingKeys := make([]string, 0, len(existingByPorts))
	for k := range existingByPorts {
		existingKeys = append(existingKeys, k)
	}
	sort.Strings(existingKeys)
	for _, k := range existingKeys {
		if _, ok := desired[k]; !ok {
			toDelete = append(toDelete, existingByPorts[k]...)
		}
	}
	// A Service without endpoints keeps one empty placeholder slice.
	if len(existing) == len(toDelete) && len(toCreate) == 0 {
		placeholder := newSlice(svc, nil, at)
		if len(toDelete) == 1 && isPlaceholder(toDelete[0], placeholder) {
			toDelete = toDelete[:0]
		} else {
			toCreate = append(toCreate, placeholder)
		}
	}
	return finalizePlan(svc, toCreate, toUpdate, toDelete), errors.Join(errs...)
}

// isPlaceholder compares what makes a placeholder: namespace, labels,
// address type, no endpoints and no ports.
func isPlaceholder(s, placeholder *discoveryv1.EndpointSlice) bool {
	return s.Namespace == placeholder.Namespace && s.AddressType == placeholder.AddressType &&
		len(s.Endpoints) == 0 && len(s.Ports) == 0 && mapsEqual(s.Labels, placeholder.Labels)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// reconcilePortGroup is upstream's reconcileByPortMapping.
func reconcilePortGroup(svc *corev1.Service, existing []*discoveryv1.EndpointSlice, desired endpointutil.EndpointSet,
	ports []discoveryv1.EndpointPort, at discoveryv1.AddressType, maxPerSlice int) (create, update, del []*discoveryv1.EndpointSlice) {
	byName := map[string]*discoveryv1.EndpointSlice{}
	var unchanged, toUpdate, toDelete []string
	// 1. Keep the endpoints still desired where they are, refreshed.
	for _, s := range existing {
		byName[s.Name] = s
		var kept []discoveryv1.Endpoint
		changed := false
		for i := range s.Endpoints {
			got := desired.Get(&s.Endpoints[i])
			if got == nil {
				continue
			}
			kept = append(kept, *got)
			if !endpointutil.EndpointsEqualBeyondKey(got, &s.Endpoints[i]) {
				changed = true
			}
			desired.Delete(&s.Endpoints[i])
		}
		labels, labelsChanged := sliceLabels(s, svc)
		switch {
		case changed || len(kept) != len(s.Endpoints):
			if len(kept) == 0 {
				toDelete = append(toDelete, s.Name)
				continue
			}
			cp := s.DeepCopy()
			cp.Endpoints, cp.Labels = kept, labels
			byName[s.Name] = cp
			toUpdate = append(toUpdate, s.Name)
		case labelsChanged:
			cp := s.DeepCopy()
			cp.Labels = labels
			byName[s.Name] = cp
			toUpdate = append(toUpdate, s.Name)
		default:
			unchanged = append(unchanged, s.Name)
		}
	}
	// 2. Fill the slices being updated anyway, fullest first.
	if len(desired) > 0 && len(toUpdate) > 0 {
		upd := make([]*discoveryv1.EndpointSlice, 0, len(toUpdate))
		for _, n := range toUpdate {
			upd = append(upd, byName[n])
		}
		slices.SortStableFunc(upd, func(a, b *discoveryv1.EndpointSlice) int { return len(b.Endpoints) - len(a.Endpoints) })
		for _, s := range upd {
			for len(desired) > 0 && len(s.Endpoints) < maxPerSlice {
				s.Endpoints = append(s.Endpoints, *desired.PopAny())
			}
		}
	}
	// 3. The rest: into an unchanged slice they fit in whole, else new
	// slices.
	for len(desired) > 0 {
		var fill *discoveryv1.EndpointSlice
		if len(desired) < maxPerSlice && len(unchanged) > 0 {
			cands := make([]*discoveryv1.EndpointSlice, 0, len(unchanged))
			for _, n := range unchanged {
				cands = append(cands, byName[n])
			}
			fill = sliceToFill(cands, len(desired), maxPerSlice)
		}
		if fill == nil {
			fill = newSlice(svc, ports, at)
		} else {
			fill = fill.DeepCopy()
			byName[fill.Name] = fill
		}
		for len(desired) > 0 && len(fill.Endpoints) < maxPerSlice {
			fill.Endpoints = append(fill.Endpoints, *desired.PopAny())
		}
		if fill.Name != "" {
			toUpdate = append(toUpdate, fill.Name)
			unchanged = slices.DeleteFunc(unchanged, func(n string) bool { return n == fill.Name })
		} else {
			create = append(create, fill)
		}
	}
	for _, n := range toUpdate {
		update = append(update, byName[n])
	}
	for _, n := range toDelete {
		del = append(del, byName[n])
	}
	return create, update, del
}

// sliceToFill is the slice whose free room best fits n more endpoints.
func sliceToFill(candidates []*discoveryv1.EndpointSlice, n, maxPerSlice int) *discoveryv1.EndpointSlice {
	best := maxPerSlice
	var out *discoveryv1.EndpointSlice
	for _, s := range candidates {
		diff := maxPerSlice - (n + len(s.Endpoints))
		if diff >= 0 && diff < best {
			best, out = diff, s
			if diff == 0 {
				break
			}
		}
	}
	return out
}

// finalizePlan turns creations into updates of slices about to be
// deleted (same address type, owned by the Service), as upstream does to
// save a create and a delete.
func finalizePlan(svc *corev1.Service, create, update, del []*discoveryv1.EndpointSlice) Plan {
	for i := 0; i < len(del) && len(create) > 0; {
		d := del[i]
		s := create[len(create)-1]
		if d.AddressType == s.AddressType && ownedBy(d, svc) {
			s.Name = d.Name
			s.ResourceVersion = d.ResourceVersion
			s.UID = d.UID
			s.Generation = d.Generation
			create = create[:len(create)-1]
			update = append(update, s)
			del = append(del[:i], del[i+1:]...)
			continue
		}
		i++
	}
	return Plan{Create: create, Update: update, Delete: del}
}

// newSlice is an empty slice of the Service.
func newSlice(svc *corev1.Service, ports []discoveryv1.EndpointPort, at discoveryv1.AddressType) *discoveryv1.EndpointSlice {
	t := true
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: endpointutil.SlicePrefix(svc.Name),
			Namespace:    svc.Namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
				Controller: &t, BlockOwnerDeletion: &t}},
		},
		AddressType: at,
		Ports:       ports,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	if s.Ports == nil {
		s.Ports = []discoveryv1.EndpointPort{}
	}
	s.Labels, _ = sliceLabels(s, svc)
	return s
}

func isReservedLabel(k string) bool {
	return k == discoveryv1.LabelServiceName || k == discoveryv1.LabelManagedBy || k == corev1.IsHeadlessService
}

// sliceLabels are the labels a slice of the Service should carry (the
// Service's, the headless label, service-name and managed-by) and whether
// the slice's non-reserved labels differ from the Service's.
func sliceLabels(s *discoveryv1.EndpointSlice, svc *corev1.Service) (map[string]string, bool) {
	cur, want := map[string]string{}, map[string]string{}
	for k, v := range s.Labels {
		if !isReservedLabel(k) {
			cur[k] = v
		}
	}
	for k, v := range svc.Labels {
		if !isReservedLabel(k) {
			want[k] = v
		}
	}
	changed := !mapsEqual(cur, want)
	if !endpointutil.IsServiceIPSet(svc) {
		want[corev1.IsHeadlessService] = ""
	}
	want[discoveryv1.LabelServiceName] = svc.Name
	want[discoveryv1.LabelManagedBy] = ControllerName
	return want, changed
}

// endpointPorts are the Service's ports resolved on the pod (ports a pod
// cannot resolve are left out).
func endpointPorts(svc *corev1.Service, p *corev1.Pod) []discoveryv1.EndpointPort {
	out := []discoveryv1.EndpointPort{}
	if len(svc.Spec.Ports) == 0 && svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return out
	}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		num, err := endpointutil.FindPort(p, sp)
		if err != nil {
			continue
		}
		name, proto := sp.Name, sp.Protocol
		out = append(out, discoveryv1.EndpointPort{Name: &name, Port: &num, Protocol: &proto, AppProtocol: sp.AppProtocol})
	}
	return out
}

// podToEndpoint is upstream's: addresses of the family, conditions,
// targetRef, nodeName, zone and hostname.
func podToEndpoint(p *corev1.Pod, node *corev1.Node, svc *corev1.Service, at discoveryv1.AddressType) *discoveryv1.Endpoint {
	serving := endpointutil.IsPodReady(p)
	terminating := p.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := &discoveryv1.Endpoint{
		Addresses:  []string{},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
	}
	for _, ip := range endpointutil.PodIPs(p) {
		if endpointutil.IsIPv6(ip) == (at == discoveryv1.AddressTypeIPv6) {
			ep.Addresses = append(ep.Addresses, ip)
		}
	}
	if p.Spec.NodeName != "" {
		n := p.Spec.NodeName
		ep.NodeName = &n
	}
	if node != nil && node.Labels[corev1.LabelTopologyZone] != "" {
		z := node.Labels[corev1.LabelTopologyZone]
		ep.Zone = &z
		if preferClose(svc) {
			// Upstream's trafficDistribution heuristic: each endpoint
			// hints its own zone.
			ep.Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: z}}}
		}
	}
	if endpointutil.ShouldSetHostname(p, svc) {
		h := p.Spec.Hostname
		ep.Hostname = &h
	}
	return ep
}

// preferClose reports whether the Service asks for same-zone routing
// (trafficDistribution PreferClose, or PreferSameZone, its newer name).
func preferClose(svc *corev1.Service) bool {
	td := svc.Spec.TrafficDistribution
	return td != nil && (*td == corev1.ServiceTrafficDistributionPreferClose || *td == "PreferSameZone")
}
