package apiserver

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// serviceAllocator hands out service cluster IPs and node ports. Its state
// is rebuilt from the stored services at start-up; an allocation is
// released if the create that needed it fails.
type serviceAllocator struct {
	mu       sync.Mutex
	cidr     *net.IPNet
	base     *big.Int
	size     int64
	ips      map[string]bool
	portLow  int
	portHigh int
	ports    map[int]bool
	rand     *rand.Rand
}

func newServiceAllocator(cidr, portRange string, r *rand.Rand) (*serviceAllocator, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("service cluster IP range: %w", err)
	}
	ones, bits := n.Mask.Size()
	size := int64(1) << uint(bits-ones)
	if bits-ones > 20 {
		size = 1 << 20
	}
	lo, hi, ok := strings.Cut(portRange, "-")
	if !ok {
		return nil, fmt.Errorf("service node port range %q: want low-high", portRange)
	}
	l, err1 := strconv.Atoi(lo)
	h, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || l > h {
		return nil, fmt.Errorf("service node port range %q is invalid", portRange)
	}
	return &serviceAllocator{
		cidr: n, base: new(big.Int).SetBytes(n.IP.To16()), size: size, ips: map[string]bool{},
		portLow: l, portHigh: h, ports: map[int]bool{}, rand: r,
	}, nil
}

// ipAt returns the i-th address of the range.
func (a *serviceAllocator) ipAt(i int64) string {
	v := new(big.Int).Add(a.base, big.NewInt(i))
	b := v.Bytes()
	ip := make(net.IP, 16)
	copy(ip[16-len(b):], b)
	if a.cidr.IP.To4() != nil {
		return ip.To4().String()
	}
	return ip.String()
}

// FirstIP is the range's first usable address (the "kubernetes" service).
func (a *serviceAllocator) FirstIP() string { return a.ipAt(1) }

func rangeError(path *field.Path, value any, msg string) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "", field.ErrorList{field.Invalid(path, value, msg)})
}

// allocate fills in a new service's cluster IP and node ports. The returned
// release undoes it.
func (a *serviceAllocator) allocate(svc *corev1.Service) (func(), error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var gotIP string
	var gotPorts []int
	release := func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if gotIP != "" {
			delete(a.ips, gotIP)
		}
		for _, p := range gotPorts {
			delete(a.ports, p)
		}
	}
	fail := func(err error) (func(), error) {
		a.mu.Unlock()
		release()
		a.mu.Lock()
		return func() {}, err
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName {
		if svc.Spec.IPFamilyPolicy == nil {
			single := corev1.IPFamilyPolicySingleStack
			svc.Spec.IPFamilyPolicy = &single
		}
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
		switch ip := svc.Spec.ClusterIP; {
		case ip == corev1.ClusterIPNone:
			svc.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
		case ip != "":
			parsed := net.ParseIP(ip)
			if parsed == nil || !a.cidr.Contains(parsed) {
				return fail(rangeError(field.NewPath("spec", "clusterIPs"), []string{ip},
					fmt.Sprintf("failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ip, ip, a.cidr)))
			}
			if a.ips[ip] {
				return fail(rangeError(field.NewPath("spec", "clusterIPs"), []string{ip},
					fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", ip)))
			}
			a.ips[ip], gotIP = true, ip
			svc.Spec.ClusterIPs = []string{ip}
		default:
			ip, ok := a.randomIP()
			if !ok {
				return fail(apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full")))
			}
			a.ips[ip], gotIP = true, ip
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort != 0 {
				n := int(p.NodePort)
				if n < a.portLow || n > a.portHigh {
					return fail(rangeError(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort,
						fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", a.portLow, a.portHigh)))
				}
				if a.ports[n] && !samePortOtherProtocol(svc, i) {
					return fail(rangeError(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, "provided port is already allocated"))
				}
				if !a.ports[n] {
					a.ports[n] = true
					gotPorts = append(gotPorts, n)
				}
				continue
			}
			n, ok := a.randomPort()
			if !ok {
				return fail(apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full")))
			}
			a.ports[n] = true
			gotPorts = append(gotPorts, n)
			p.NodePort = int32(n)
		}
	}
	return release, nil
}

// samePortOtherProtocol: a service may use one node port for TCP and UDP.
func samePortOtherProtocol(svc *corev1.Service, i int) bool {
	for j := 0; j < i; j++ {
		if svc.Spec.Ports[j].NodePort == svc.Spec.Ports[i].NodePort && svc.Spec.Ports[j].Protocol != svc.Spec.Ports[i].Protocol {
			return true
		}
	}
	return false
}

func (a *serviceAllocator) randomIP() (string, bool) {
	// Skip the network address and (for IPv4) the broadcast address.
	usable := a.size - 2
	if usable <= 0 {
		return "", false
	}
	start := a.rand.Int64N(usable)
	for i := int64(0); i < usable; i++ {
		ip := a.ipAt(1 + (start+i)%usable)
		if !a.ips[ip] {
			return ip, true
		}
	}
	return "", false
}

func (a *serviceAllocator) randomPort() (int, bool) {
	n := a.portHigh - a.portLow + 1
	start := a.rand.IntN(n)
	for i := 0; i < n; i++ {
		p := a.portLow + (start+i)%n
		if !a.ports[p] {
			return p, true
		}
	}
	return 0, false
}

// release frees what a deleted service held.
func (a *serviceAllocator) release(svc *corev1.Service) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ip := range svc.Spec.ClusterIPs {
		delete(a.ips, ip)
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			delete(a.ports, int(p.NodePort))
		}
	}
}

// mark records an existing service's allocations.
func (a *serviceAllocator) mark(svc *corev1.Service) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ip := range svc.Spec.ClusterIPs {
		if ip != corev1.ClusterIPNone {
			a.ips[ip] = true
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			a.ports[int(p.NodePort)] = true
		}
	}
}

// update carries a service's allocations over an update, as upstream does:
// a PUT that omits the cluster IP or node ports keeps the allocated ones;
// node ports follow type changes.
func (a *serviceAllocator) update(svc, old *corev1.Service) error {
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
	return a.updateNodePorts(svc, old)
}

// updateNodePorts allocates node ports a service gains on update (type
// changed to NodePort/LoadBalancer or a port added) and releases those it
// drops.
func (a *serviceAllocator) updateNodePorts(svc, old *corev1.Service) error {
	needs := svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	oldPorts := map[int]bool{}
	for _, p := range old.Spec.Ports {
		if p.NodePort != 0 {
			oldPorts[int(p.NodePort)] = true
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	keep := map[int]bool{}
	if needs {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 {
				n, ok := a.randomPort()
				if !ok {
					return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full"))
				}
				p.NodePort = int32(n)
				a.ports[n] = true
			} else if !oldPorts[int(p.NodePort)] {
				if a.ports[int(p.NodePort)] {
					return rangeError(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, "provided port is already allocated")
				}
				a.ports[int(p.NodePort)] = true
			}
			keep[int(p.NodePort)] = true
		}
	} else {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	for p := range oldPorts {
		if !keep[p] {
			delete(a.ports, p)
		}
	}
	return nil
}

// syncServices marks every stored service's allocations.
func (s *Server) syncServices(ctx context.Context) error {
	st := s.stores[grServices]
	if st == nil {
		return nil
	}
	objs, _, err := st.List(ctx, "", registryListAll())
	if err != nil {
		return err
	}
	for _, o := range objs {
		s.services.mark(storage.Unwrap(o).(*corev1.Service))
	}
	return nil
}

// beforeCreate does the work a create needs outside the object: service IP
// and port allocation. release undoes it when the create fails.
func (s *Server) beforeCreate(ctx context.Context, e *endpoint, obj runtime.Object, dryRun bool) (func(), error) {
	if e.qualified == grServices {
		svc := obj.(*corev1.Service)
		release, err := s.services.allocate(svc)
		if err != nil {
			if se, ok := err.(*apierrors.StatusError); ok && se.ErrStatus.Details != nil {
				se.ErrStatus.Details.Name = svc.Name
				se.ErrStatus.Message = strings.Replace(se.ErrStatus.Message, `Service "" is invalid`, fmt.Sprintf("Service %q is invalid", svc.Name), 1)
			}
			return func() {}, err
		}
		if dryRun {
			release()
			return func() {}, nil
		}
		return release, nil
	}
	return func() {}, nil
}

// afterDelete releases what a deleted object held.
func (s *Server) afterDelete(ctx context.Context, e *endpoint, obj runtime.Object) {
	if e.qualified == grServices {
		if svc, ok := storage.Unwrap(obj).(*corev1.Service); ok {
			s.services.release(svc)
		}
	}
}
