package core

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/networking"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// Service allocation, as upstream's API server does it since 1.33:
//
//   - each cluster IP is an IPAddress object (networking.k8s.io/v1) named
//     by the address, with the Service as its parentRef. Creating it is the
//     allocation: storage refuses a second object with the same name, so
//     two API servers on one etcd can never hand out one address twice, and
//     nothing needs rebuilding at start;
//   - node ports are a bitmap in a RangeAllocation stored at
//     /registry/ranges/servicenodeports, changed by compare-and-swap.
//
// Allocation happens in the Service store's hooks, so every path that
// removes a Service (delete, deletecollection, the namespace controller,
// the garbage collector, the last finalizer) releases what it held. A crash
// between an allocation and the Service write leaves a leak; Repair finds
// leaks and missing records and fixes them.

var (
	grServices    = schema.GroupResource{Resource: "services"}
	grIPAddresses = schema.GroupResource{Group: "networking.k8s.io", Resource: "ipaddresses"}
)

// NodePortRangeKey is where the node port bitmap is stored.
const NodePortRangeKey = "/registry/ranges/servicenodeports"

// leakRepairs is how many consecutive repairs must see an allocation
// unused before it is released (an allocation made for a create that has
// not been written yet is never seen that many times).
const leakRepairs = 3

// FirstServiceIP is the first usable address of a service range: the
// "kubernetes" Service's cluster IP.
func FirstServiceIP(cidr string) (string, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", fmt.Errorf("service cluster IP range %q: %w", cidr, err)
	}
	return p.Masked().Addr().Next().String(), nil
}

// serviceAllocator makes and releases a Service's cluster IPs and node
// ports in storage.
type serviceAllocator struct {
	prefix  netip.Prefix
	size    uint64 // addresses in the range (capped)
	ips     *registry.Store
	svcs    *registry.Store
	ports   storage.Interface
	portLow int
	portHi  int
	rand    *rand.Rand

	mu         sync.Mutex
	leakedIPs  map[string]int
	leakedPort map[int]int
}

// ServiceHooks builds the Service store's hooks.
func ServiceHooks(env *registry.HookEnv) (*registry.Hooks, error) {
	a, err := newServiceAllocator(env)
	if err != nil {
		return nil, err
	}
	return &registry.Hooks{
		BeforeCreate: func(ctx context.Context, obj runtime.Object, dryRun bool) (func(), error) {
			return a.allocateCreate(ctx, obj.(*corev1.Service), dryRun)
		},
		BeforeUpdate: func(ctx context.Context, obj, old runtime.Object, dryRun bool) (func(), error) {
			return a.allocateUpdate(ctx, obj.(*corev1.Service), old.(*corev1.Service), dryRun)
		},
		AfterUpdate: func(ctx context.Context, obj, old runtime.Object) {
			a.releaseDropped(ctx, obj.(*corev1.Service), old.(*corev1.Service))
		},
		AfterDelete: func(ctx context.Context, obj runtime.Object) {
			a.releaseDropped(ctx, &corev1.Service{ObjectMeta: obj.(*corev1.Service).ObjectMeta}, obj.(*corev1.Service))
		},
		Repair: a.repair,
	}, nil
}

func newServiceAllocator(env *registry.HookEnv) (*serviceAllocator, error) {
	p, err := netip.ParsePrefix(env.ServiceClusterIPRange)
	if err != nil {
		return nil, fmt.Errorf("service cluster IP range %q: %w", env.ServiceClusterIPRange, err)
	}
	p = p.Masked()
	bits := p.Addr().BitLen() - p.Bits()
	size := uint64(1) << min(bits, 20)
	low, high, err := parsePortRange(env.ServiceNodePortRange)
	if err != nil {
		return nil, err
	}
	a := &serviceAllocator{
		prefix: p, size: size, svcs: env.Store(grServices), ips: env.Store(grIPAddresses),
		ports:   env.RawStorage("/registry/ranges/", func() runtime.Object { return &corev1.RangeAllocation{} }),
		portLow: low, portHi: high, rand: env.Rand,
		leakedIPs: map[string]int{}, leakedPort: map[int]int{},
	}
	if a.ips == nil {
		return nil, errors.New("service allocator: networking.k8s.io/v1 ipaddresses are not served")
	}
	return a, nil
}

func parsePortRange(s string) (int, int, error) {
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("service node port range %q: want low-high", s)
	}
	l, err1 := strconv.Atoi(lo)
	h, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || l < 1 || h > 65535 || l > h {
		return 0, 0, fmt.Errorf("service node port range %q is invalid", s)
	}
	return l, h, nil
}

// invalid is the 422 an allocation failure answers with.
func invalid(svc *corev1.Service, path *field.Path, value any, msg string) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, svc.Name, field.ErrorList{field.Invalid(path, value, msg)})
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

func needsNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// allocateCreate fills in a new Service's cluster IP and node ports.
func (a *serviceAllocator) allocateCreate(ctx context.Context, svc *corev1.Service, dryRun bool) (func(), error) {
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName {
		if svc.Spec.IPFamilyPolicy == nil {
			single := corev1.IPFamilyPolicySingleStack
			svc.Spec.IPFamilyPolicy = &single
		}
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{a.family()}
		}
		if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			svc.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
		} else {
			f, err := a.allocateIP(ctx, svc, svc.Spec.ClusterIP, dryRun)
			if err != nil {
				return nil, err
			}
			undo = append(undo, f)
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		f, err := a.allocatePorts(ctx, svc, nil, dryRun)
		if err != nil {
			undoAll()
			return nil, err
		}
		undo = append(undo, f)
	}
	return undoAll, nil
}

// allocateUpdate carries a Service's allocations over an update as
// upstream does (a PUT that omits the cluster IP or node ports keeps the
// allocated ones) and allocates what the update newly needs: a cluster IP
// when it stops being ExternalName, node ports for a new type or port.
// What it drops is released once the update is stored (releaseDropped).
func (a *serviceAllocator) allocateUpdate(ctx context.Context, svc, old *corev1.Service, dryRun bool) (func(), error) {
	if svc.Spec.Type != corev1.ServiceTypeExternalName && old.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP == "" {
		svc.Spec.ClusterIP = old.Spec.ClusterIP
		svc.Spec.ClusterIPs = old.Spec.ClusterIPs
		if svc.Spec.IPFamilyPolicy == nil {
			svc.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
		}
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = old.Spec.IPFamilies
		}
	}
	if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	// Leaving ExternalName: the Service now needs an address.
	if old.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.Type != corev1.ServiceTypeExternalName &&
		svc.Spec.ClusterIP != corev1.ClusterIPNone {
		if svc.Spec.IPFamilyPolicy == nil {
			single := corev1.IPFamilyPolicySingleStack
			svc.Spec.IPFamilyPolicy = &single
		}
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{a.family()}
		}
		f, err := a.allocateIP(ctx, svc, svc.Spec.ClusterIP, dryRun)
		if err != nil {
			return nil, err
		}
		undo = append(undo, f)
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.NodePort != 0 {
			continue
		}
		for _, op := range old.Spec.Ports {
			if op.NodePort != 0 && op.Port == p.Port && op.Protocol == p.Protocol {
				p.NodePort = op.NodePort
			}
		}
	}
	if needsNodePorts(svc) || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		f, err := a.allocatePorts(ctx, svc, old, dryRun)
		if err != nil {
			undoAll()
			return nil, err
		}
		undo = append(undo, f)
	} else if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	return undoAll, nil
}

// releaseDropped frees what old held and svc does not.
func (a *serviceAllocator) releaseDropped(ctx context.Context, svc, old *corev1.Service) {
	// Node ports first, cluster IPs last: the IPAddress objects are what
	// clients can see, so once a dropped address is gone its Service's
	// node ports are free too (a client that waits for the address, then
	// reuses the port, must not find it still taken).
	keepPort := map[int]bool{}
	for _, p := range svc.Spec.Ports {
		keepPort[int(p.NodePort)] = true
	}
	var drop []int
	for _, p := range old.Spec.Ports {
		if p.NodePort != 0 && !keepPort[int(p.NodePort)] {
			drop = append(drop, int(p.NodePort))
		}
	}
	a.releasePorts(ctx, drop)
	keepIP := map[string]bool{}
	for _, ip := range svc.Spec.ClusterIPs {
		keepIP[ip] = true
	}
	for _, ip := range old.Spec.ClusterIPs {
		if ip != corev1.ClusterIPNone && !keepIP[ip] {
			a.releaseIP(ctx, ip, old)
		}
	}
}

// --- cluster IPs -----------------------------------------------------------

func (a *serviceAllocator) family() corev1.IPFamily {
	if a.prefix.Addr().Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// addrAt returns the i-th address of the range.
func (a *serviceAllocator) addrAt(i uint64) netip.Addr {
	b := a.prefix.Addr().As16()
	v := new(big.Int).SetBytes(b[:])
	v.Add(v, new(big.Int).SetUint64(i))
	out := v.FillBytes(make([]byte, 16))
	addr := netip.AddrFrom16([16]byte(out))
	if a.prefix.Addr().Is4() {
		addr = addr.Unmap()
	}
	return addr
}

// usable is the first and one-past-last usable offsets: the network
// address is never handed out, nor (IPv4) the broadcast address.
func (a *serviceAllocator) usable() (uint64, uint64) {
	end := a.size
	if a.prefix.Addr().Is4() && a.size > 2 {
		end--
	}
	return 1, end
}

// allocateIP allocates want (or a free address if want is empty) for svc
// and records it in svc's spec.
func (a *serviceAllocator) allocateIP(ctx context.Context, svc *corev1.Service, want string, dryRun bool) (func(), error) {
	path := field.NewPath("spec", "clusterIPs").Index(0)
	if want != "" {
		addr, err := netip.ParseAddr(want)
		if err != nil || !a.prefix.Contains(addr) {
			return nil, invalid(svc, path, want,
				fmt.Sprintf("failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", want, want, a.prefix))
		}
		created, err := a.claim(ctx, svc, addr, dryRun)
		if err != nil {
			return nil, err
		}
		if !created {
			return nil, invalid(svc, path, want, fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", want))
		}
		svc.Spec.ClusterIPs = []string{addr.String()}
		svc.Spec.ClusterIP = addr.String()
		return a.undoIP(addr, svc, dryRun), nil
	}
	addr, err := a.allocateNext(ctx, svc, dryRun)
	if err != nil {
		return nil, err
	}
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = addr.String(), []string{addr.String()}
	return a.undoIP(addr, svc, dryRun), nil
}

func (a *serviceAllocator) undoIP(addr netip.Addr, svc *corev1.Service, dryRun bool) func() {
	if dryRun {
		return func() {}
	}
	ref := svc.DeepCopy()
	return func() { a.releaseIP(context.WithoutCancel(context.Background()), addr.String(), ref) }
}

// staticBand is how many addresses at the start of the range dynamic
// allocation leaves for Services that ask for a specific IP (upstream's
// reserved range, KEP-3070): min(max(16, size/16), 256).
func (a *serviceAllocator) staticBand() uint64 {
	return min(max(16, a.size/16), 256)
}

// allocateNext claims a free address, dynamic allocation preferring the
// range above the static band and falling back to it.
func (a *serviceAllocator) allocateNext(ctx context.Context, svc *corev1.Service, dryRun bool) (netip.Addr, error) {
	first, end := a.usable()
	band := a.staticBand()
	if band >= end {
		band = first
	}
	for _, r := range [][2]uint64{{band, end}, {first, band}} {
		n := r[1] - r[0]
		if n == 0 {
			continue
		}
		start := a.rand.Uint64N(n)
		for i := uint64(0); i < n; i++ {
			addr := a.addrAt(r[0] + (start+i)%n)
			// The watch cache says which addresses are taken; the
			// create below is what decides.
			if _, err := a.ips.Get(ctx, "", addr.String(), metav1.GetOptions{ResourceVersion: "0"}); err == nil {
				continue
			}
			ok, err := a.claim(ctx, svc, addr, dryRun)
			if err != nil {
				return netip.Addr{}, err
			}
			if ok {
				return addr, nil
			}
		}
	}
	return netip.Addr{}, apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
}

// claim creates addr's IPAddress for svc; false if the address is taken.
func (a *serviceAllocator) claim(ctx context.Context, svc *corev1.Service, addr netip.Addr, dryRun bool) (bool, error) {
	if dryRun {
		_, err := a.ips.Get(ctx, "", addr.String(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
	family := "IPv4"
	if addr.Is6() {
		family = "IPv6"
	}
	ip := &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: addr.String(), Labels: map[string]string{
			networking.LabelIPFamily: family, networking.LabelManagedBy: networking.ManagedByAllocator,
		}},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{
			Group: "", Resource: "services", Namespace: svc.Namespace, Name: svc.Name,
		}},
	}
	if _, err := a.ips.Create(ctx, "", ip, nil, false); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// releaseIP deletes addr's IPAddress if it belongs to svc.
func (a *serviceAllocator) releaseIP(ctx context.Context, addr string, svc *corev1.Service) {
	obj, err := a.ips.Get(ctx, "", addr, metav1.GetOptions{})
	if err != nil {
		return
	}
	ip := storage.Unwrap(obj).(*networkingv1.IPAddress)
	if !ownedBy(ip, svc.Namespace, svc.Name) {
		return
	}
	uid := ip.UID
	a.ips.Delete(ctx, "", addr, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, nil)
}

func ownedBy(ip *networkingv1.IPAddress, ns, name string) bool {
	r := ip.Spec.ParentRef
	return r != nil && r.Group == "" && r.Resource == "services" && r.Namespace == ns && r.Name == name
}

// --- node ports --------------------------------------------------------------

// updateRange changes the stored node port bitmap with fn (compare-and-swap).
func (a *serviceAllocator) updateRange(ctx context.Context, fn func(bits *big.Int) error) error {
	out := &corev1.RangeAllocation{}
	return a.ports.GuaranteedUpdate(ctx, NodePortRangeKey, out, true, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, error) {
		r := in.(*corev1.RangeAllocation).DeepCopy()
		bits := new(big.Int).SetBytes(r.Data)
		if err := fn(bits); err != nil {
			return nil, err
		}
		r.Name = "servicenodeports"
		r.Range = fmt.Sprintf("%d-%d", a.portLow, a.portHi)
		r.Data = bits.Bytes()
		return r, nil
	}, nil)
}

func (a *serviceAllocator) readRange(ctx context.Context) (*big.Int, *corev1.RangeAllocation, error) {
	r := &corev1.RangeAllocation{}
	if err := a.ports.Get(ctx, NodePortRangeKey, storage.GetOptions{IgnoreNotFound: true}, r); err != nil {
		return nil, nil, err
	}
	return new(big.Int).SetBytes(r.Data), r, nil
}

// allocatePorts gives every port of svc that needs one a node port: the
// one asked for (checked against the range and the bitmap) or a free one.
// Ports old already held stay allocated.
func (a *serviceAllocator) allocatePorts(ctx context.Context, svc, old *corev1.Service, dryRun bool) (func(), error) {
	held := map[int]bool{}
	if old != nil {
		for _, p := range old.Spec.Ports {
			if p.NodePort != 0 {
				held[int(p.NodePort)] = true
			}
		}
	}
	auto := needsNodePorts(svc)
	var got []int
	apply := func(bits *big.Int) error {
		got = got[:0]
		taken := func(n int) bool { return bits.Bit(n-a.portLow) == 1 }
		claim := func(n int) {
			bits.SetBit(bits, n-a.portLow, 1)
			got = append(got, n)
		}
		mine := map[int]bool{}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
			n := int(p.NodePort)
			switch {
			case n != 0 && (held[n] || mine[n]):
				// Already this Service's (one port may serve TCP and UDP).
			case n != 0:
				if n < a.portLow || n > a.portHi {
					return invalid(svc, path, p.NodePort,
						fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", a.portLow, a.portHi))
				}
				if taken(n) {
					return invalid(svc, path, p.NodePort, "provided port is already allocated")
				}
				claim(n)
			case auto:
				free, ok := a.freePort(bits)
				if !ok {
					return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full"))
				}
				claim(free)
				p.NodePort = int32(free)
			}
			if p.NodePort != 0 {
				mine[int(p.NodePort)] = true
			}
		}
		return nil
	}
	if dryRun {
		bits, _, err := a.readRange(ctx)
		if err != nil {
			return nil, err
		}
		if err := apply(bits); err != nil {
			return nil, err
		}
		return func() {}, nil
	}
	// The spec's node ports are set inside apply: a retried attempt starts
	// from the ports as they were.
	orig := make([]int32, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		orig[i] = p.NodePort
	}
	err := a.updateRange(ctx, func(bits *big.Int) error {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = orig[i]
		}
		return apply(bits)
	})
	if err != nil {
		var se *apierrors.StatusError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, apierrors.NewInternalError(err)
	}
	mine := append([]int(nil), got...)
	return func() { a.releasePorts(context.WithoutCancel(context.Background()), mine) }, nil
}

func (a *serviceAllocator) freePort(bits *big.Int) (int, bool) {
	n := a.portHi - a.portLow + 1
	start := a.rand.IntN(n)
	for i := 0; i < n; i++ {
		off := (start + i) % n
		if bits.Bit(off) == 0 {
			return a.portLow + off, true
		}
	}
	return 0, false
}

func (a *serviceAllocator) releasePorts(ctx context.Context, ports []int) {
	if len(ports) == 0 {
		return
	}
	a.updateRange(ctx, func(bits *big.Int) error {
		for _, n := range ports {
			if n >= a.portLow && n <= a.portHi {
				bits.SetBit(bits, n-a.portLow, 0)
			}
		}
		return nil
	})
}

// --- repair ------------------------------------------------------------------

// repair brings the allocation records in line with the stored Services:
// a Service's address or port without a record gets one; a record no
// Service uses is released once leakRepairs passes in a row have seen it
// unused. It runs at start (before the server takes writes) and
// periodically.
func (a *serviceAllocator) repair(ctx context.Context) error {
	// Read the records before the Services: an allocation made in between
	// belongs to a Service the list may not show yet, which the leak count
	// tolerates; the reverse order could release a live allocation.
	ipObjs, _, err := a.ips.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	_, rangeObj, err := a.readRange(ctx)
	if err != nil {
		return err
	}
	svcObjs, _, err := a.svcs.List(ctx, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	usedIP := map[string]*corev1.Service{}
	usedPort := map[int]bool{}
	for _, o := range svcObjs {
		svc := storage.Unwrap(o).(*corev1.Service)
		for _, ip := range svc.Spec.ClusterIPs {
			if addr, err := netip.ParseAddr(ip); err == nil && a.prefix.Contains(addr) {
				usedIP[addr.String()] = svc
			}
		}
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				usedPort[int(p.NodePort)] = true
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// Cluster IPs.
	recorded := map[string]bool{}
	leakedIPs := map[string]int{}
	for _, o := range ipObjs {
		ip := storage.Unwrap(o).(*networkingv1.IPAddress)
		if ip.Labels[networking.LabelManagedBy] != networking.ManagedByAllocator {
			continue
		}
		recorded[ip.Name] = true
		svc := usedIP[ip.Name]
		if svc != nil && ownedBy(ip, svc.Namespace, svc.Name) {
			continue
		}
		if n := a.leakedIPs[ip.Name] + 1; n < leakRepairs {
			leakedIPs[ip.Name] = n
			continue
		}
		uid := ip.UID
		a.ips.Delete(ctx, "", ip.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, nil)
	}
	a.leakedIPs = leakedIPs
	for ip, svc := range usedIP {
		if !recorded[ip] {
			addr, _ := netip.ParseAddr(ip)
			if _, err := a.claim(ctx, svc, addr, false); err != nil {
				return err
			}
		}
	}
	// Node ports: one compare-and-swap against the bitmap read above.
	leakedPort := map[int]int{}
	var rv *string
	if rangeObj.ResourceVersion != "" {
		rv = &rangeObj.ResourceVersion
	}
	out := &corev1.RangeAllocation{}
	err = a.ports.GuaranteedUpdate(ctx, NodePortRangeKey, out, true, &storage.Preconditions{ResourceVersion: rv},
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, error) {
			r := in.(*corev1.RangeAllocation).DeepCopy()
			bits := new(big.Int).SetBytes(r.Data)
			for n := range usedPort {
				if n >= a.portLow && n <= a.portHi {
					bits.SetBit(bits, n-a.portLow, 1)
				}
			}
			for off := 0; off < bits.BitLen(); off++ {
				n := a.portLow + off
				if bits.Bit(off) == 0 || usedPort[n] {
					continue
				}
				if c := a.leakedPort[n] + 1; c < leakRepairs {
					leakedPort[n] = c
					continue
				}
				bits.SetBit(bits, off, 0)
			}
			r.Name = "servicenodeports"
			r.Range = fmt.Sprintf("%d-%d", a.portLow, a.portHi)
			r.Data = bits.Bytes()
			return r, nil
		}, nil)
	if err != nil {
		// Someone allocated meanwhile: the next pass repairs.
		if storage.IsConflict(err) {
			return nil
		}
		return err
	}
	a.leakedPort = leakedPort
	return nil
}
