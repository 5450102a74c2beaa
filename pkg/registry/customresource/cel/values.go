package cel

import (
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The value types of upstream's ip, cidr, url and quantity libraries.
var (
	ipType       = cel.OpaqueType("net.IP")
	cidrType     = cel.OpaqueType("net.CIDR")
	urlType      = cel.OpaqueType("kubernetes.URL")
	quantityType = cel.OpaqueType("kubernetes.Quantity")
)

// opaque is a Go value of one of those types.
type opaque struct {
	t *types.Type
	v any // netip.Addr, netip.Prefix, *url.URL, resource.Quantity
}

func (o opaque) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(o.v).AssignableTo(t) {
		return o.v, nil
	}
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", o.t.TypeName(), t)
}

func (o opaque) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case o.t:
		return o
	case types.TypeType:
		return o.t
	case types.StringType:
		return types.String(o.String())
	}
	return types.NewErr("type conversion error from '%s' to '%s'", o.t.TypeName(), t.TypeName())
}

func (o opaque) Equal(other ref.Val) ref.Val {
	x, ok := other.(opaque)
	if !ok || x.t != o.t {
		return types.MaybeNoSuchOverloadErr(other)
	}
	switch a := o.v.(type) {
	case resource.Quantity:
		return types.Bool(a.Equal(x.v.(resource.Quantity)))
	case *url.URL:
		return types.Bool(a.String() == x.v.(*url.URL).String())
	}
	return types.Bool(o.v == x.v)
}

func (o opaque) Type() ref.Type { return o.t }
func (o opaque) Value() any     { return o.v }

func (o opaque) String() string {
	switch a := o.v.(type) {
	case netip.Addr:
		return a.String()
	case netip.Prefix:
		return a.String()
	case *url.URL:
		return a.String()
	case resource.Quantity:
		return a.String()
	}
	return fmt.Sprint(o.v)
}

func str(v ref.Val) (string, bool) {
	s, ok := v.Value().(string)
	return s, ok
}

func parseIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return a, err
	}
	if a.Zone() != "" {
		return a, fmt.Errorf("IP address with zone value is not allowed")
	}
	if a.Is4In6() {
		return a, fmt.Errorf("IPv4-mapped IPv6 address is not allowed")
	}
	return a, nil
}

func of[T any](v ref.Val) (T, bool) {
	o, ok := v.(opaque)
	if !ok {
		var zero T
		return zero, false
	}
	x, ok := o.v.(T)
	return x, ok
}

func ipMember(f func(netip.Addr) ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		a, ok := of[netip.Addr](v)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return f(a)
	}
}

func quantityOf(v ref.Val) (resource.Quantity, bool) { return of[resource.Quantity](v) }

func valueTypesLibrary() []cel.EnvOption {
	ipBool := func(name string, f func(netip.Addr) bool) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("ip_"+name, []*cel.Type{ipType}, cel.BoolType,
			cel.UnaryBinding(ipMember(func(a netip.Addr) ref.Val { return types.Bool(f(a)) }))))
	}
	toString := func(t *cel.Type, id string) cel.FunctionOpt {
		return cel.Overload(id, []*cel.Type{t}, cel.StringType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			if o, ok := v.(opaque); ok {
				return types.String(o.String())
			}
			return types.MaybeNoSuchOverloadErr(v)
		}))
	}
	urlGet := func(name string, f func(*url.URL) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("url_"+name, []*cel.Type{urlType}, cel.DynType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			u, ok := of[*url.URL](v)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(u)
		})))
	}
	qCompare := func(name string, f func(int) bool) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("quantity_"+name, []*cel.Type{quantityType, quantityType}, cel.BoolType, cel.BinaryBinding(func(a, b ref.Val) ref.Val {
			x, ok1 := quantityOf(a)
			y, ok2 := quantityOf(b)
			if !ok1 || !ok2 {
				return types.MaybeNoSuchOverloadErr(a)
			}
			return types.Bool(f(x.Cmp(y)))
		})))
	}
	qArith := func(name string, sign int64) cel.EnvOption {
		apply := func(a, b ref.Val) ref.Val {
			x, ok := quantityOf(a)
			if !ok {
				return types.MaybeNoSuchOverloadErr(a)
			}
			var y resource.Quantity
			switch bv := b.Value().(type) {
			case int64:
				y = *resource.NewQuantity(bv, resource.DecimalSI)
			default:
				if q, ok := quantityOf(b); ok {
					y = q
				} else {
					return types.MaybeNoSuchOverloadErr(b)
				}
			}
			out := x.DeepCopy()
			if sign > 0 {
				out.Add(y)
			} else {
				out.Sub(y)
			}
			return opaque{quantityType, out}
		}
		return cel.Function(name,
			cel.MemberOverload("quantity_"+name, []*cel.Type{quantityType, quantityType}, quantityType, cel.BinaryBinding(apply)),
			cel.MemberOverload("quantity_"+name+"_int", []*cel.Type{quantityType, cel.IntType}, quantityType, cel.BinaryBinding(apply)))
	}
	return []cel.EnvOption{
		cel.Function("ip", cel.Overload("string_to_ip", []*cel.Type{cel.StringType}, ipType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, _ := str(v)
			a, err := parseIP(s)
			if err != nil {
				return types.NewErr("IP Address %q parse error during conversion from string: %v", s, err)
			}
			return opaque{ipType, a}
		}))),
		cel.Function("family", cel.MemberOverload("ip_family", []*cel.Type{ipType}, cel.IntType, cel.UnaryBinding(ipMember(func(a netip.Addr) ref.Val {
			if a.Is4() {
				return types.Int(4)
			}
			return types.Int(6)
		})))),
		ipBool("isUnspecified", netip.Addr.IsUnspecified),
		ipBool("isLoopback", netip.Addr.IsLoopback),
		ipBool("isLinkLocalMulticast", netip.Addr.IsLinkLocalMulticast),
		ipBool("isLinkLocalUnicast", netip.Addr.IsLinkLocalUnicast),
		ipBool("isGlobalUnicast", netip.Addr.IsGlobalUnicast),
		cel.Function("cidr", cel.Overload("string_to_cidr", []*cel.Type{cel.StringType}, cidrType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, _ := str(v)
			p, err := netip.ParsePrefix(s)
			if err == nil && p.Addr().Is4In6() {
				err = fmt.Errorf("IPv4-mapped IPv6 address is not allowed")
			}
			if err != nil {
				return types.NewErr("network address parse error during conversion from string: %v", err)
			}
			return opaque{cidrType, p}
		}))),
		cel.Function("containsIP",
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{cidrType, ipType}, cel.BoolType, cel.BinaryBinding(func(c, i ref.Val) ref.Val {
				p, ok1 := of[netip.Prefix](c)
				a, ok2 := of[netip.Addr](i)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(c)
				}
				return types.Bool(p.Contains(a))
			})),
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType, cel.BinaryBinding(func(c, i ref.Val) ref.Val {
				p, ok1 := of[netip.Prefix](c)
				s, ok2 := str(i)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(c)
				}
				a, err := parseIP(s)
				if err != nil {
					return types.NewErr("IP Address %q parse error during conversion from string: %v", s, err)
				}
				return types.Bool(p.Contains(a))
			}))),
		cel.Function("containsCIDR",
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{cidrType, cidrType}, cel.BoolType, cel.BinaryBinding(func(c, o ref.Val) ref.Val {
				p, ok1 := of[netip.Prefix](c)
				q, ok2 := of[netip.Prefix](o)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(c)
				}
				return types.Bool(p.Bits() <= q.Bits() && p.Contains(q.Addr()))
			})),
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType, cel.BinaryBinding(func(c, o ref.Val) ref.Val {
				p, ok1 := of[netip.Prefix](c)
				s, ok2 := str(o)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(c)
				}
				q, err := netip.ParsePrefix(s)
				if err != nil {
					return types.NewErr("network address parse error during conversion from string: %v", err)
				}
				return types.Bool(p.Bits() <= q.Bits() && p.Contains(q.Addr()))
			}))),
		cel.Function("prefixLength", cel.MemberOverload("cidr_prefix_length", []*cel.Type{cidrType}, cel.IntType, cel.UnaryBinding(func(c ref.Val) ref.Val {
			p, ok := of[netip.Prefix](c)
			if !ok {
				return types.MaybeNoSuchOverloadErr(c)
			}
			return types.Int(p.Bits())
		}))),
		cel.Function("ip", cel.MemberOverload("cidr_ip", []*cel.Type{cidrType}, ipType, cel.UnaryBinding(func(c ref.Val) ref.Val {
			p, ok := of[netip.Prefix](c)
			if !ok {
				return types.MaybeNoSuchOverloadErr(c)
			}
			return opaque{ipType, p.Addr()}
		}))),
		cel.Function("masked", cel.MemberOverload("cidr_masked", []*cel.Type{cidrType}, cidrType, cel.UnaryBinding(func(c ref.Val) ref.Val {
			p, ok := of[netip.Prefix](c)
			if !ok {
				return types.MaybeNoSuchOverloadErr(c)
			}
			return opaque{cidrType, p.Masked()}
		}))),
		cel.Function("url", cel.Overload("string_to_url", []*cel.Type{cel.StringType}, urlType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, _ := str(v)
			u, err := url.Parse(s)
			if err != nil {
				return types.NewErr("URL parse error during conversion from string: %v", err)
			}
			return opaque{urlType, u}
		}))),
		urlGet("getScheme", func(u *url.URL) ref.Val { return types.String(u.Scheme) }),
		urlGet("getHost", func(u *url.URL) ref.Val { return types.String(u.Host) }),
		urlGet("getHostname", func(u *url.URL) ref.Val { return types.String(u.Hostname()) }),
		urlGet("getPort", func(u *url.URL) ref.Val { return types.String(u.Port()) }),
		urlGet("getEscapedPath", func(u *url.URL) ref.Val { return types.String(u.EscapedPath()) }),
		urlGet("getQuery", func(u *url.URL) ref.Val {
			return types.DefaultTypeAdapter.NativeToValue(map[string][]string(u.Query()))
		}),
		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, quantityType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, _ := str(v)
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return types.NewErr("quantities must match the regular expression '%s'", "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
			}
			return opaque{quantityType, q}
		}))),
		qCompare("isLessThan", func(c int) bool { return c < 0 }),
		qCompare("isGreaterThan", func(c int) bool { return c > 0 }),
		cel.Function("compareTo", cel.MemberOverload("quantity_compareTo", []*cel.Type{quantityType, quantityType}, cel.IntType, cel.BinaryBinding(func(a, b ref.Val) ref.Val {
			x, ok1 := quantityOf(a)
			y, ok2 := quantityOf(b)
			if !ok1 || !ok2 {
				return types.MaybeNoSuchOverloadErr(a)
			}
			return types.Int(x.Cmp(y))
		}))),
		qArith("add", 1),
		qArith("sub", -1),
		cel.Function("sign", cel.MemberOverload("quantity_sign", []*cel.Type{quantityType}, cel.IntType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			q, ok := quantityOf(v)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.Int(q.Sign())
		}))),
		cel.Function("isInteger", cel.MemberOverload("quantity_is_integer", []*cel.Type{quantityType}, cel.BoolType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			q, ok := quantityOf(v)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			_, exact := q.AsInt64()
			return types.Bool(exact)
		}))),
		cel.Function("asInteger", cel.MemberOverload("quantity_as_integer", []*cel.Type{quantityType}, cel.IntType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			q, ok := quantityOf(v)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			n, exact := q.AsInt64()
			if !exact {
				return types.NewErr("cannot convert value to integer")
			}
			return types.Int(n)
		}))),
		cel.Function("asApproximateFloat", cel.MemberOverload("quantity_as_float", []*cel.Type{quantityType}, cel.DoubleType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			q, ok := quantityOf(v)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			f := q.AsApproximateFloat64()
			if math.IsInf(f, 0) {
				return types.NewErr("value out of range")
			}
			return types.Double(f)
		}))),
		cel.Function("string",
			toString(ipType, "ip_to_string"), toString(cidrType, "cidr_to_string"), toString(quantityType, "quantity_to_string")),
	}
}
