package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/validation"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// The types of upstream's authorizer library (k8s.io/apiserver/pkg/cel/
// library authz.go): authorizer.group(g).resource(r).subresource(s)
// .namespace(ns).name(n).check(verb) and authorizer.path(p).check(verb)
// return a decision with allowed(), reason(), errored() and error();
// authorizer.serviceAccount(ns, name) checks as that service account;
// authorizer.requestResource is the check of the request's own resource.
var (
	authorizerType    = cel.ObjectType("kubernetes.authorization.Authorizer")
	pathCheckType     = cel.ObjectType("kubernetes.authorization.PathCheck")
	groupCheckType    = cel.ObjectType("kubernetes.authorization.GroupCheck")
	resourceCheckType = cel.ObjectType("kubernetes.authorization.ResourceCheck")
	decisionType      = cel.ObjectType("kubernetes.authorization.Decision")
)

// authzVal is any of the library's values.
type authzVal struct {
	t   *types.Type
	ctx context.Context
	az  authorizer.Authorizer
	usr *authenticationv1.UserInfo

	path                                          string
	group, resource, subresource, namespace, name string
	fieldSelector, labelSelector                  string
	decision                                      authorizer.Decision
	reason                                        string
	err                                           error
}

func (a *authzVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", a.t.TypeName(), t)
}

func (a *authzVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return a.t
	}
	return types.NewErr("type conversion error from '%s' to '%s'", a.t.TypeName(), t.TypeName())
}

func (a *authzVal) Equal(other ref.Val) ref.Val { return types.Bool(other == ref.Val(a)) }
func (a *authzVal) Type() ref.Type              { return a.t }
func (a *authzVal) Value() any                  { return a }

func (a *authzVal) with(t *types.Type, f func(*authzVal)) ref.Val {
	c := *a
	c.t = t
	f(&c)
	return &c
}

func asAuthz(v ref.Val, t *types.Type) (*authzVal, bool) {
	a, ok := v.(*authzVal)
	return a, ok && a.t == t
}

func stringArg(v ref.Val) (string, bool) {
	s, ok := v.(types.String)
	return string(s), ok
}

// newAuthorizerVal is the authorizer variable of user's request.
func newAuthorizerVal(ctx context.Context, az authorizer.Authorizer, usr *authenticationv1.UserInfo) *authzVal {
	return &authzVal{t: authorizerType, ctx: ctx, az: az, usr: usr}
}

func (a *authzVal) check(verb string) ref.Val {
	attrs := authorizer.Attributes{User: a.usr, Verb: verb}
	if a.t == pathCheckType {
		attrs.Path = a.path
	} else {
		attrs.ResourceRequest = true
		attrs.APIGroup, attrs.APIVersion, attrs.Resource, attrs.Subresource = a.group, "*", a.resource, a.subresource
		attrs.Namespace, attrs.Name = a.namespace, a.name
	}
	ctx := a.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	d, reason, err := a.az.Authorize(ctx, attrs)
	return &authzVal{t: decisionType, decision: d, reason: reason, err: err}
}

func authorizerLibrary() cel.EnvOption {
	str := cel.StringType
	setter := func(id string, f func(*authzVal, string)) cel.FunctionOpt {
		return cel.MemberOverload(id, []*cel.Type{resourceCheckType, str}, resourceCheckType, cel.BinaryBinding(func(l, r ref.Val) ref.Val {
			a, ok := asAuthz(l, resourceCheckType)
			s, ok2 := stringArg(r)
			if !ok || !ok2 {
				return types.MaybeNoSuchOverloadErr(l)
			}
			return a.with(resourceCheckType, func(c *authzVal) { f(c, s) })
		}))
	}
	decision := func(id string, out *cel.Type, f func(*authzVal) ref.Val) cel.FunctionOpt {
		return cel.MemberOverload(id, []*cel.Type{decisionType}, out, cel.UnaryBinding(func(v ref.Val) ref.Val {
			a, ok := asAuthz(v, decisionType)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return f(a)
		}))
	}
	return cel.Lib(authzLib{opts: []cel.EnvOption{
		cel.Function("path", cel.MemberOverload("authorizer_path", []*cel.Type{authorizerType, str}, pathCheckType, cel.BinaryBinding(func(l, r ref.Val) ref.Val {
			a, ok := asAuthz(l, authorizerType)
			s, ok2 := stringArg(r)
			if !ok || !ok2 {
				return types.MaybeNoSuchOverloadErr(l)
			}
			if strings.TrimSpace(s) == "" {
				return types.NewErr("path must not be empty")
			}
			return a.with(pathCheckType, func(c *authzVal) { c.path = s })
		}))),
		cel.Function("group", cel.MemberOverload("authorizer_group", []*cel.Type{authorizerType, str}, groupCheckType, cel.BinaryBinding(func(l, r ref.Val) ref.Val {
			a, ok := asAuthz(l, authorizerType)
			s, ok2 := stringArg(r)
			if !ok || !ok2 {
				return types.MaybeNoSuchOverloadErr(l)
			}
			return a.with(groupCheckType, func(c *authzVal) { c.group = s })
		}))),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount", []*cel.Type{authorizerType, str, str}, authorizerType, cel.FunctionBinding(func(args ...ref.Val) ref.Val {
			if len(args) != 3 {
				return types.NoSuchOverloadErr()
			}
			a, ok := asAuthz(args[0], authorizerType)
			ns, ok2 := stringArg(args[1])
			name, ok3 := stringArg(args[2])
			if !ok || !ok2 || !ok3 {
				return types.MaybeNoSuchOverloadErr(args[0])
			}
			if len(validation.ValidateServiceAccountName(name, false)) > 0 {
				return types.NewErr("Invalid service account name")
			}
			if len(validation.ValidateNamespaceName(ns, false)) > 0 {
				return types.NewErr("Invalid service account namespace")
			}
			return a.with(authorizerType, func(c *authzVal) {
				c.usr = &authenticationv1.UserInfo{
					Username: "system:serviceaccount:" + ns + ":" + name,
					Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns},
				}
			})
		}))),
		cel.Function("resource", cel.MemberOverload("groupcheck_resource", []*cel.Type{groupCheckType, str}, resourceCheckType, cel.BinaryBinding(func(l, r ref.Val) ref.Val {
			a, ok := asAuthz(l, groupCheckType)
			s, ok2 := stringArg(r)
			if !ok || !ok2 {
				return types.MaybeNoSuchOverloadErr(l)
			}
			if strings.TrimSpace(s) == "" {
				return types.NewErr("resource must not be empty")
			}
			return a.with(resourceCheckType, func(c *authzVal) { c.resource = s })
		}))),
		cel.Function("subresource", setter("resourcecheck_subresource", func(c *authzVal, s string) { c.subresource = s })),
		cel.Function("namespace", setter("resourcecheck_namespace", func(c *authzVal, s string) { c.namespace = s })),
		cel.Function("name", setter("resourcecheck_name", func(c *authzVal, s string) { c.name = s })),
		cel.Function("fieldSelector", setter("authorizer_fieldselector", func(c *authzVal, s string) { c.fieldSelector = s })),
		cel.Function("labelSelector", setter("authorizer_labelselector", func(c *authzVal, s string) { c.labelSelector = s })),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{pathCheckType, str}, decisionType, cel.BinaryBinding(func(l, r ref.Val) ref.Val {
				a, ok := asAuthz(l, pathCheckType)
				s, ok2 := stringArg(r)
				if !ok || !ok2 {
					return types.MaybeNoSuchOverloadErr(l)
				}
				return a.check(s)
			})),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{resourceCheckType, str}, decisionType, cel.BinaryBinding(func(l, r ref.Val) ref.Val {
				a, ok := asAuthz(l, resourceCheckType)
				s, ok2 := stringArg(r)
				if !ok || !ok2 {
					return types.MaybeNoSuchOverloadErr(l)
				}
				return a.check(s)
			}))),
		cel.Function("errored", decision("decision_errored", cel.BoolType, func(a *authzVal) ref.Val { return types.Bool(a.err != nil) })),
		cel.Function("error", decision("decision_error", cel.StringType, func(a *authzVal) ref.Val {
			if a.err == nil {
				return types.String("")
			}
			return types.String(a.err.Error())
		})),
		cel.Function("allowed", decision("decision_allowed", cel.BoolType, func(a *authzVal) ref.Val {
			return types.Bool(a.decision == authorizer.DecisionAllow)
		})),
		cel.Function("reason", decision("decision_reason", cel.StringType, func(a *authzVal) ref.Val { return types.String(a.reason) })),
	}})
}

type authzLib struct{ opts []cel.EnvOption }

func (l authzLib) CompileOptions() []cel.EnvOption     { return l.opts }
func (l authzLib) ProgramOptions() []cel.ProgramOption { return nil }

// cachingAuthorizer remembers the decisions of one admission request
// (upstream's admission CachingAuthorizer): expressions of several
// policies asking the same question ask the authorizer once.
type cachingAuthorizer struct {
	az    authorizer.Authorizer
	mu    sync.Mutex
	cache map[string]cachedDecision
}

type cachedDecision struct {
	d      authorizer.Decision
	reason string
	err    error
}

func newCachingAuthorizer(az authorizer.Authorizer) *cachingAuthorizer {
	return &cachingAuthorizer{az: az, cache: map[string]cachedDecision{}}
}

func (c *cachingAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	data, err := json.Marshal(a)
	if err != nil {
		return c.az.Authorize(ctx, a)
	}
	key := string(data)
	c.mu.Lock()
	hit, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return hit.d, hit.reason, hit.err
	}
	d, reason, err := c.az.Authorize(ctx, a)
	c.mu.Lock()
	c.cache[key] = cachedDecision{d, reason, err}
	c.mu.Unlock()
	return d, reason, err
}
