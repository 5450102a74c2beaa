package endpointslicemirroring

import (
	"net"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/controller/internal/endpointutil"
)

// ControllerName is the managed-by label value of mirrored slices.
const ControllerName = "endpointslicemirroring-controller.k8s.io"

// DefaultMaxEndpointsPerSubset is upstream's
// --mirroring-max-endpoints-per-subset.
const DefaultMaxEndpointsPerSubset = 1000

// Plan is what a sync writes, and what it skipped.
type Plan struct {
	Create, Update, Delete []*discoveryv1.EndpointSlice
	// InvalidAddresses and SkippedAddresses count addresses not mirrored:
	// invalid IPs, and those plus the ones past the per-subset limit.
	InvalidAddresses, SkippedAddresses int
}

// Empty reports whether the plan writes nothing.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

type groupKey struct {
	ports string
	at    discoveryv1.AddressType
}

type group struct {
	ports     []discoveryv1.EndpointPort
	endpoints endpointutil.EndpointSet
}

// Reconcile plans the writes that mirror ep into its slices (existing:
// those labelled with its name and managed by this controller).
func Reconcile(ep *corev1.Endpoints, existing []*discoveryv1.EndpointSlice, maxPerSubset int) Plan {
	var plan Plan
	desired := map[groupKey]*group{}
	for _, sub := range endpointutil.RepackSubsets(slices.Clone(ep.Subsets)) {
		ports := slicePorts(sub.Ports)
		pk := endpointutil.PortMapKey(ports)
		for _, at := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
			if _, ok := desired[groupKey{pk, at}]; !ok {
				desired[groupKey{pk, at}] = &group{ports: ports, endpoints: endpointutil.EndpointSet{}}
			}
		}
		total, added := len(sub.Addresses)+len(sub.NotReadyAddresses), 0
		add := func(addrs []corev1.EndpointAddress, ready bool) {
			for _, a := range addrs {
				if added >= maxPerSubset {
					return
				}
				at, ok := addressType(a.IP)
				if !ok {
					plan.InvalidAddresses++
					continue
				}
				desired[groupKey{pk, at}].endpoints.Insert(addressToEndpoint(a, ready))
				added++
			}
		}
		add(sub.Addresses, true)
		add(sub.NotReadyAddresses, false)
		plan.SkippedAddresses += total - added
	}
	existingBy := map[groupKey][]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		k := groupKey{endpointutil.PortMapKey(s.Ports), s.AddressType}
		existingBy[k] = append(existingBy[k], s)
	}
	keys := make([]groupKey, 0, len(desired))
	for k := range desired {
		keys = append(keys, k)
	}
	sortKeys(keys)
	for _, k := range keys {
		g := desired[k]
		reconcileGroup(ep, existingBy[k], g.endpoints, g.ports, k.at, maxPerSubset, &plan)
	}
	var gone []groupKey
	for k := range existingBy {
		if _, ok := desired[k]; !ok {
			gone = append(gone, k)
		}
	}
	sortKeys(gone)
	for _, k := range gone {
		plan.Delete = append(plan.Delete, existingBy[k]...)
	}
	recycle(&plan)
	return plan
}

func sortKeys(keys []groupKey) {
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].ports != keys[j].ports {
			return keys[i].ports < keys[j].ports
		}
		return keys[i].at < keys[j].at
	})
}

func addressType(ip string) (discoveryv1.AddressType, bool) {
	p := net.ParseIP(ip)
	switch {
	case p == nil:
		return "", false
	case p.To4() != nil:
		return discoveryv1.AddressTypeIPv4, true
	default:
		return discoveryv1.AddressTypeIPv6, true
	}
}

func slicePorts(ports []corev1.EndpointPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(ports))
	for _, p := range ports {
		name, port, proto := p.Name, p.Port, p.Protocol
		out = append(out, discoveryv1.EndpointPort{Name: &name, Port: &port, Protocol: &proto, AppProtocol: p.AppProtocol})
	}
	return out
}

func addressToEndpoint(a corev1.EndpointAddress, ready bool) *discoveryv1.Endpoint {
	e := &discoveryv1.Endpoint{Addresses: []string{a.IP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}
	if a.TargetRef != nil {
		e.TargetRef = a.TargetRef.DeepCopy()
	}
	if a.NodeName != nil {
		n := *a.NodeName
		e.NodeName = &n
	}
	if a.Hostname != "" {
		h := a.Hostname
		e.Hostname = &h
	}
	return e
}

func reconcileGroup(ep *corev1.Endpoints, existing []*discoveryv1.EndpointSlice, desired endpointutil.EndpointSet,
	ports []discoveryv1.EndpointPort, at discoveryv1.AddressType, maxPerSubset int, plan *Plan) {
	for _, s := range existing {
		var kept []discoveryv1.Endpoint
		changed := false
		for i := range s.Endpoints {
			got := desired.Get(&s.Endpoints[i])
			if got == nil {
				continue
			}
			if !endpointutil.EndpointsEqualBeyondKey(got, &s.Endpoints[i]) {
				changed = true
			}
			kept = append(kept, *got)
			desired.Delete(&s.Endpoints[i])
			if len(kept) >= maxPerSubset {
				break
			}
		}
		want := newSlice(ep, ports, at)
		if !equality.Semantic.DeepEqual(s.Labels, want.Labels) || !equality.Semantic.DeepEqual(s.Annotations, want.Annotations) {
			changed = true
		}
		if !changed && len(kept) == len(s.Endpoints) {
			continue
		}
		if len(kept) == 0 {
			plan.Delete = append(plan.Delete, s)
			continue
		}
		cp := s.DeepCopy()
		cp.Labels, cp.Annotations, cp.Endpoints = want.Labels, want.Annotations, kept
		plan.Update = append(plan.Update, cp)
	}
	for len(desired) > 0 {
		s := newSlice(ep, ports, at)
		for len(desired) > 0 && len(s.Endpoints) < maxPerSubset {
			s.Endpoints = append(s.Endpoints, *desired.PopAny())
		}
		plan.Create = append(plan.Create, s)
	}
}

// recycle turns pairs of a creation and a deletion of the same address
// type into an update of the slice to delete.
func recycle(plan *Plan) {
	for i := 0; i < len(plan.Create); {
		c := plan.Create[i]
		j := slices.IndexFunc(plan.Delete, func(d *discoveryv1.EndpointSlice) bool { return d.AddressType == c.AddressType })
		if j < 0 {
			i++
			continue
		}
		d := plan.Delete[j]
		c.Name, c.ResourceVersion, c.UID = d.Name, d.ResourceVersion, d.UID
		plan.Update = append(plan.Update, c)
		plan.Create = append(plan.Create[:i], plan.Create[i+1:]...)
		plan.Delete = append(plan.Delete[:j], plan.Delete[j+1:]...)
	}
}

// newSlice is an empty mirrored slice of ep.
func newSlice(ep *corev1.Endpoints, ports []discoveryv1.EndpointPort, at discoveryv1.AddressType) *discoveryv1.EndpointSlice {
	t := true
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: endpointutil.SlicePrefix(ep.Name),
			Namespace:    ep.Namespace,
			Labels:       map[string]string{},
			Annotations:  map[string]string{},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Endpoints", Name: ep.Name, UID: ep.UID,
				Controller: &t, BlockOwnerDeletion: &t}},
		},
		AddressType: at,
		Ports:       ports,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	for k, v := range ep.Labels {
		s.Labels[k] = v
	}
	s.Labels[discoveryv1.LabelServiceName] = ep.Name
	s.Labels[discoveryv1.LabelManagedBy] = ControllerName
	for k, v := range ep.Annotations {
		if k == corev1.EndpointsLastChangeTriggerTime || k == corev1.LastAppliedConfigAnnotation {
			continue
		}
		s.Annotations[k] = v
	}
	return s
}
