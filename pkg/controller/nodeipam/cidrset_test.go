package nodeipam

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCIDRSetAllocate(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		mask    int
		want    []string // in order; then ErrCIDRRangeNoCIDRsRemaining when exhaust
		exhaust bool
	}{
		{name: "k3s default", cluster: "10.42.0.0/16", mask: 24, want: []string{"10.42.0.0/24", "10.42.1.0/24", "10.42.2.0/24"}},
		{name: "unmasked cluster cidr", cluster: "10.42.7.9/16", mask: 24, want: []string{"10.42.0.0/24"}},
		{name: "small range exhausts", cluster: "192.168.0.0/23", mask: 24, want: []string{"192.168.0.0/24", "192.168.1.0/24"}, exhaust: true},
		{name: "node cidr is the cluster cidr", cluster: "10.0.0.0/24", mask: 24, want: []string{"10.0.0.0/24"}, exhaust: true},
		{name: "ipv6 /64 of a /56", cluster: "fd00:10:244::/56", mask: 64, want: []string{"fd00:10:244::/64", "fd00:10:244:1::/64", "fd00:10:244:2::/64"}},
		{name: "ipv6 /120 of a /112", cluster: "fd00::/112", mask: 120, want: []string{"fd00::/120", "fd00::100/120"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewCIDRSet(netip.MustParsePrefix(tt.cluster), tt.mask)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				got, err := s.AllocateNext()
				if err != nil || got.String() != w {
					t.Fatalf("AllocateNext = %v, %v; want %s", got, err, w)
				}
			}
			if tt.exhaust {
				if _, err := s.AllocateNext(); !errors.Is(err, ErrCIDRRangeNoCIDRsRemaining) {
					t.Fatalf("after exhaustion: %v", err)
				}
			}
		})
	}
}

func TestCIDRSetOccupyRelease(t *testing.T) {
	s, err := NewCIDRSet(netip.MustParsePrefix("10.42.0.0/16"), 24)
	if err != nil {
		t.Fatal(err)
	}
	// A node's CIDR taken at start is skipped.
	if err := s.Occupy(netip.MustParsePrefix("10.42.0.0/24")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.AllocateNext(); got.String() != "10.42.1.0/24" {
		t.Fatalf("after occupying .0: %s", got)
	}
	// A /20 covers 16 node CIDRs; occupying twice counts once.
	for range 2 {
		if err := s.Occupy(netip.MustParsePrefix("10.42.16.0/20")); err != nil {
			t.Fatal(err)
		}
	}
	if s.Allocated() != 18 {
		t.Fatalf("allocated %d, want 18", s.Allocated())
	}
	// A range smaller than a node CIDR marks its node CIDR.
	if err := s.Occupy(netip.MustParsePrefix("10.42.2.128/25")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.AllocateNext(); got.String() != "10.42.3.0/24" {
		t.Fatalf("after occupying 2.128/25: %s", got)
	}
	// Released CIDRs come back only once the round robin reaches them.
	if err := s.Release(netip.MustParsePrefix("10.42.1.0/24")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.AllocateNext(); got.String() != "10.42.4.0/24" {
		t.Fatalf("after release: %s", got)
	}
	for _, bad := range []string{"10.43.0.0/24", "fd00::/64"} {
		if err := s.Occupy(netip.MustParsePrefix(bad)); err == nil || !strings.Contains(err.Error(), "is out the range of cluster cidr") {
			t.Errorf("Occupy(%s) = %v", bad, err)
		}
	}
	// A range holding the whole cluster CIDR takes all of it.
	if err := s.Occupy(netip.MustParsePrefix("10.0.0.0/8")); err != nil || s.Allocated() != 256 {
		t.Fatalf("Occupy(10/8) = %v, allocated %d", err, s.Allocated())
	}
	if _, err := s.AllocateNext(); !errors.Is(err, ErrCIDRRangeNoCIDRsRemaining) {
		t.Fatalf("full set: %v", err)
	}
}

func TestNewCIDRSetLimits(t *testing.T) {
	if _, err := NewCIDRSet(netip.MustParsePrefix("fd00::/32"), 64); !errors.Is(err, ErrCIDRSetSubNetTooBig) {
		t.Errorf("ipv6 /32 into /64: %v", err)
	}
	if _, err := NewCIDRSet(netip.MustParsePrefix("fd00::/48"), 64); err != nil {
		t.Errorf("ipv6 /48 into /64: %v", err)
	}
	if _, err := NewCIDRSet(netip.MustParsePrefix("10.0.0.0/24"), 16); err == nil {
		t.Errorf("node mask shorter than the cluster's accepted")
	}
}

func TestParseClusterCIDRs(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "10.42.0.0/16", want: "10.42.0.0/16"},
		{in: "10.42.0.0/16,fd00:42::/56", want: "10.42.0.0/16,fd00:42::/56"},
		{in: "10.42.0.0/16,10.43.0.0/16", err: "not configured as dual stack"},
		{in: "10.42.0.0/16,fd00::/56,fd01::/56", err: "more than max allowed of 2"},
		{in: "10.42.0.0", err: "failed to parse cidr value"},
	}
	for _, tt := range tests {
		got, err := ParseClusterCIDRs(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if err != nil || strings.Join(s, ",") != tt.want {
			t.Errorf("%s: %v %v", tt.in, s, err)
		}
	}
}

func TestNodeCIDRMaskSizes(t *testing.T) {
	v4 := []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")}
	v6 := []netip.Prefix{netip.MustParsePrefix("fd00::/48")}
	dual := append(append([]netip.Prefix{}, v4...), v6...)
	tests := []struct {
		name         string
		cidrs        []netip.Prefix
		size, s4, s6 int
		want         []int
		err          string
	}{
		{name: "v4 default", cidrs: v4, want: []int{24}},
		{name: "v6 default", cidrs: v6, want: []int{64}},
		{name: "v4 size", cidrs: v4, size: 26, want: []int{26}},
		{name: "v4 -ipv4", cidrs: v4, s4: 25, want: []int{25}},
		{name: "v4 -ipv6", cidrs: v4, s6: 80, err: "not allowed for a single-stack IPv4 cluster"},
		{name: "v6 -ipv4", cidrs: v6, s4: 25, err: "not allowed for a single-stack IPv6 cluster"},
		{name: "size with family flag", cidrs: v4, size: 24, s4: 24, err: "not allowed if --node-cidr-mask-size is set"},
		{name: "dual defaults", cidrs: dual, want: []int{24, 64}},
		{name: "dual family flags", cidrs: dual, s4: 26, s6: 120, want: []int{26, 120}},
		{name: "dual size", cidrs: dual, size: 24, err: "not allowed with dual-stack clusters"},
	}
	for _, tt := range tests {
		got, err := NodeCIDRMaskSizes(tt.cidrs, tt.size, tt.s4, tt.s6)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) || (len(got) > 1 && got[1] != tt.want[1]) {
			t.Errorf("%s: %v %v, want %v", tt.name, got, err, tt.want)
		}
	}
}
