package cel

import (
	"net/netip"
	"net/url"
	"regexp"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/api/resource"
)

// kubernetesLibrary is the part of upstream's Kubernetes CEL libraries
// (k8s.io/apiserver/pkg/cel/library) that CRDs commonly use, over the
// dynamically typed values skiff binds: the list functions isSorted, sum,
// min, max, indexOf and lastIndexOf; the regex functions find and findAll;
// and the format checks isIP, isCIDR, isURL and isQuantity.
func kubernetesLibrary() cel.EnvOption {
	listOf := cel.ListType(cel.DynType)
	return cel.Lib(k8sLib{opts: append(valueTypesLibrary(),
		cel.Function("isSorted", cel.MemberOverload("list_is_sorted", []*cel.Type{listOf}, cel.BoolType, cel.UnaryBinding(isSorted))),
		cel.Function("sum", cel.MemberOverload("list_sum", []*cel.Type{listOf}, cel.DynType, cel.UnaryBinding(sum))),
		cel.Function("min", cel.MemberOverload("list_min", []*cel.Type{listOf}, cel.DynType, cel.UnaryBinding(func(v ref.Val) ref.Val { return extreme(v, -1) }))),
		cel.Function("max", cel.MemberOverload("list_max", []*cel.Type{listOf}, cel.DynType, cel.UnaryBinding(func(v ref.Val) ref.Val { return extreme(v, 1) }))),
		cel.Function("indexOf", cel.MemberOverload("list_index_of", []*cel.Type{listOf, cel.DynType}, cel.IntType, cel.BinaryBinding(func(l, x ref.Val) ref.Val { return indexOf(l, x, false) }))),
		cel.Function("lastIndexOf", cel.MemberOverload("list_last_index_of", []*cel.Type{listOf, cel.DynType}, cel.IntType, cel.BinaryBinding(func(l, x ref.Val) ref.Val { return indexOf(l, x, true) }))),
		cel.Function("find", cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType, cel.BinaryBinding(find))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType), cel.BinaryBinding(func(s, re ref.Val) ref.Val { return findAll(s, re, types.Int(-1)) })),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType), cel.FunctionBinding(func(args ...ref.Val) ref.Val { return findAll(args[0], args[1], args[2]) }))),
		cel.Function("isIP", cel.Overload("is_ip_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(stringCheck(func(s string) bool {
			a, err := netip.ParseAddr(s)
			return err == nil && a.Zone() == "" && !a.Is4In6()
		})))),
		cel.Function("isCIDR", cel.Overload("is_cidr_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(stringCheck(func(s string) bool {
			p, err := netip.ParsePrefix(s)
			return err == nil && !p.Addr().Is4In6()
		})))),
		cel.Function("isURL", cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(stringCheck(func(s string) bool {
			_, err := url.Parse(s)
			return err == nil
		})))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(stringCheck(func(s string) bool {
			_, err := resource.ParseQuantity(s)
			return err == nil
		})))),
	)})
}

type k8sLib struct{ opts []cel.EnvOption }

func (l k8sLib) CompileOptions() []cel.EnvOption     { return l.opts }
func (l k8sLib) ProgramOptions() []cel.ProgramOption { return nil }

func stringCheck(f func(string) bool) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		s, ok := v.Value().(string)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return types.Bool(f(s))
	}
}

func lister(v ref.Val) (traits.Lister, bool) {
	l, ok := v.(traits.Lister)
	return l, ok
}

func compare(a, b ref.Val) (int, ref.Val) {
	c, ok := a.(traits.Comparer)
	if !ok {
		return 0, types.MaybeNoSuchOverloadErr(a)
	}
	r := c.Compare(b)
	if types.IsError(r) {
		return 0, r
	}
	return int(r.(types.Int)), nil
}

func isSorted(v ref.Val) ref.Val {
	l, ok := lister(v)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	n := int(l.Size().(types.Int))
	for i := 1; i < n; i++ {
		c, err := compare(l.Get(types.Int(i-1)), l.Get(types.Int(i)))
		if err != nil {
			return err
		}
		if c > 0 {
			return types.False
		}
	}
	return types.True
}

func sum(v ref.Val) ref.Val {
	l, ok := lister(v)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	n := int(l.Size().(types.Int))
	if n == 0 {
		return types.Int(0)
	}
	acc := l.Get(types.Int(0))
	for i := 1; i < n; i++ {
		a, ok := acc.(traits.Adder)
		if !ok {
			return types.MaybeNoSuchOverloadErr(acc)
		}
		acc = a.Add(l.Get(types.Int(i)))
		if types.IsError(acc) {
			return acc
		}
	}
	return acc
}

func extreme(v ref.Val, sign int) ref.Val {
	l, ok := lister(v)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	n := int(l.Size().(types.Int))
	if n == 0 {
		return types.NewErr("%s called on empty list", map[int]string{-1: "min", 1: "max"}[sign])
	}
	best := l.Get(types.Int(0))
	for i := 1; i < n; i++ {
		x := l.Get(types.Int(i))
		c, err := compare(x, best)
		if err != nil {
			return err
		}
		if c*sign > 0 {
			best = x
		}
	}
	return best
}

func indexOf(v, x ref.Val, last bool) ref.Val {
	l, ok := lister(v)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	n := int(l.Size().(types.Int))
	found := -1
	for i := 0; i < n; i++ {
		if l.Get(types.Int(i)).Equal(x) == types.True {
			found = i
			if !last {
				break
			}
		}
	}
	return types.Int(found)
}

func find(s, re ref.Val) ref.Val {
	str, ok1 := s.Value().(string)
	pat, ok2 := re.Value().(string)
	if !ok1 || !ok2 {
		return types.MaybeNoSuchOverloadErr(s)
	}
	r, err := regexp.Compile(pat)
	if err != nil {
		return types.NewErr("%v", err)
	}
	return types.String(r.FindString(str))
}

func findAll(s, re, limit ref.Val) ref.Val {
	str, ok1 := s.Value().(string)
	pat, ok2 := re.Value().(string)
	n, ok3 := limit.Value().(int64)
	if !ok1 || !ok2 || !ok3 {
		return types.MaybeNoSuchOverloadErr(s)
	}
	r, err := regexp.Compile(pat)
	if err != nil {
		return types.NewErr("%v", err)
	}
	return types.DefaultTypeAdapter.NativeToValue(r.FindAllString(str, int(n)))
}
