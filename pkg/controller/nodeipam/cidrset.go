package nodeipam

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"sync"
)

// Upstream's cidrset errors (their messages show in logs and events).
var (
	// ErrCIDRRangeNoCIDRsRemaining: every node CIDR of the cluster CIDR
	// is taken.
	ErrCIDRRangeNoCIDRsRemaining = errors.New("CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range")
	// ErrCIDRSetSubNetTooBig: an IPv6 cluster CIDR split into more than
	// 2^16 node CIDRs.
	ErrCIDRSetSubNetTooBig = errors.New("New CIDR set failed; the node CIDR size is too big")
)

// clusterSubnetMaxDiff bounds an IPv6 cluster's node CIDR count (2^16),
// as upstream's.
const clusterSubnetMaxDiff = 16

// CIDRSet hands out the node-sized subnets (/NodeMaskSize) of one cluster
// CIDR, as upstream's cidrset: AllocateNext takes the next free one after
// the last allocated (round robin), Occupy and Release mark every node
// CIDR a given prefix overlaps.
type CIDRSet struct {
	mu            sync.Mutex
	cluster       netip.Prefix
	nodeMaskSize  int
	maxCIDRs      int
	allocated     int
	nextCandidate int
	used          big.Int
	// m, when set, counts allocations and releases (the controller's
	// upstream metrics).
	m *setMetrics
}

// NewCIDRSet splits cluster into /nodeMaskSize subnets.
func NewCIDRSet(cluster netip.Prefix, nodeMaskSize int) (*CIDRSet, error) {
	cluster = cluster.Masked()
	if nodeMaskSize < cluster.Bits() || nodeMaskSize > cluster.Addr().BitLen() {
		return nil, fmt.Errorf("node CIDR mask size %d does not fit cluster CIDR %s", nodeMaskSize, cluster)
	}
	diff := nodeMaskSize - cluster.Bits()
	if cluster.Addr().Is6() && diff > clusterSubnetMaxDiff {
		return nil, ErrCIDRSetSubNetTooBig
	}
	if diff > 30 { // an IPv4 /0 split into /31s: more than a bitmap should hold
		return nil, ErrCIDRSetSubNetTooBig
	}
	return &CIDRSet{cluster: cluster, nodeMaskSize: nodeMaskSize, maxCIDRs: 1 << diff}, nil
}

// Cluster is the set's cluster CIDR.
func (s *CIDRSet) Cluster() netip.Prefix { return s.cluster }

// MaxCIDRs is how many node CIDRs the set has.
func (s *CIDRSet) MaxCIDRs() int { return s.maxCIDRs }

// Allocated is how many are taken.
func (s *CIDRSet) Allocated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocated
}

// toInt is an address as an unsigned integer.
func toInt(a netip.Addr) *big.Int {
	b := a.AsSlice()
	return new(big.Int).SetBytes(b)
}

// fromInt is the address of family like with value v.
func fromInt(v *big.Int, like netip.Addr) netip.Addr {
	n := like.BitLen() / 8
	buf := make([]byte, n)
	v.FillBytes(buf)
	a, _ := netip.AddrFromSlice(buf)
	return a
}

// block is the node CIDR of index i.
func (s *CIDRSet) block(i int) netip.Prefix {
	shift := uint(s.cluster.Addr().BitLen() - s.nodeMaskSize)
	v := new(big.Int).Lsh(big.NewInt(int64(i)), shift)
	v.Or(v, toInt(s.cluster.Addr()))
	return netip.PrefixFrom(fromInt(v, s.cluster.Addr()), s.nodeMaskSize)
}

// index is the index of the node CIDR holding a.
func (s *CIDRSet) index(a netip.Addr) int {
	v := new(big.Int).Sub(toInt(a), toInt(s.cluster.Addr()))
	v.Rsh(v, uint(s.cluster.Addr().BitLen()-s.nodeMaskSize))
	return int(v.Int64())
}

// AllocateNext takes the first free node CIDR at or after the one after
// the last allocated.
func (s *CIDRSet) AllocateNext() (netip.Prefix, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.allocated == s.maxCIDRs {
		return netip.Prefix{}, ErrCIDRRangeNoCIDRsRemaining
	}
	c := s.nextCandidate
	for i := 0; i < s.maxCIDRs && s.used.Bit(c) != 0; i++ {
		c = (c + 1) % s.maxCIDRs
	}
	s.nextCandidate = (c + 1) % s.maxCIDRs
	s.used.SetBit(&s.used, c, 1)
	s.allocated++
	s.m.changed(1, 0, s.allocated, s.maxCIDRs)
	return s.block(c), nil
}

// indices are the first and last node CIDR indices p overlaps.
func (s *CIDRSet) indices(p netip.Prefix) (int, int, error) {
	if !p.IsValid() || p.Addr().Is4() != s.cluster.Addr().Is4() || !p.Overlaps(s.cluster) {
		return -1, -1, fmt.Errorf("cidr %s is out the range of cluster cidr %s", p, s.cluster)
	}
	p = p.Masked()
	if p.Bits() <= s.cluster.Bits() { // p holds the whole cluster CIDR
		return 0, s.maxCIDRs - 1, nil
	}
	first := s.index(p.Addr())
	// The last address of p.
	hostBits := uint(p.Addr().BitLen() - p.Bits())
	last := new(big.Int).Lsh(big.NewInt(1), hostBits)
	last.Sub(last, big.NewInt(1))
	last.Or(last, toInt(p.Addr()))
	return first, s.index(fromInt(last, p.Addr())), nil
}

// Occupy marks every node CIDR p overlaps as taken.
func (s *CIDRSet) Occupy(p netip.Prefix) error {
	begin, end, err := s.indices(p)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := begin; i <= end; i++ {
		if s.used.Bit(i) == 0 {
			s.used.SetBit(&s.used, i, 1)
			s.allocated++
			n++
		}
	}
	s.m.changed(n, 0, s.allocated, s.maxCIDRs)
	return nil
}

// Release marks every node CIDR p overlaps as free.
func (s *CIDRSet) Release(p netip.Prefix) error {
	begin, end, err := s.indices(p)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := begin; i <= end; i++ {
		if s.used.Bit(i) != 0 {
			s.used.SetBit(&s.used, i, 0)
			s.allocated--
			n++
		}
	}
	s.m.changed(0, n, s.allocated, s.maxCIDRs)
	return nil
}
