package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/matching"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// namedProgram is a compiled variable.
type namedProgram struct {
	name string
	program
}

// input are the values an evaluation binds.
type input struct {
	object, oldObject any
	request           map[string]any
	params            any
	hasParams         bool
	namespace         any
	authz             ref.Val
	requestResource   ref.Val
}

// activation binds the variables of one evaluation (one binding and one
// param); variables are evaluated lazily, at most once, and their cost is
// charged to the expression that first uses them (upstream's composition).
type activation struct {
	in   *input
	vars *lazyVars
}

func newActivation(ctx context.Context, in *input, vars []namedProgram) *activation {
	a := &activation{in: in}
	a.vars = &lazyVars{ctx: ctx, act: a, defs: vars, vals: map[string]ref.Val{}}
	return a
}

func nullable(v any) any {
	if v == nil {
		return types.NullValue
	}
	return v
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case varObject:
		return nullable(a.in.object), true
	case varOldObject:
		return nullable(a.in.oldObject), true
	case varRequest:
		return a.in.request, true
	case varParams:
		if !a.in.hasParams {
			return nil, false
		}
		return nullable(a.in.params), true
	case varNamespaceObject:
		return nullable(a.in.namespace), true
	case varAuthorizer:
		return a.in.authz, a.in.authz != nil
	case varRequestResource:
		return a.in.requestResource, a.in.requestResource != nil
	case varVariables:
		return a.vars, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// celError is an evaluation failure; stop means no further expression of
// the binding runs (the budget is spent).
type celError struct {
	msg  string
	stop bool
}

func (e *celError) Error() string { return e.msg }

const outOfBudget = "validation failed due to running out of cost budget, no further validation rules will be run"

// eval runs p against the activation, charging budget; it returns the
// result, the remaining budget and an error (upstream's Evaluate).
func (a *activation) eval(ctx context.Context, p program, budget int64) (ref.Val, int64, error) {
	if p.err != nil {
		return nil, budget, &celError{msg: fmt.Sprintf("compilation error: %v", p.err)}
	}
	val, det, err := p.prog.ContextEval(ctx, a)
	if c := a.vars.takeCost(); c > budget {
		return nil, -1, &celError{msg: outOfBudget, stop: true}
	} else {
		budget -= c
	}
	if det == nil || det.ActualCost() == nil {
		return nil, -1, &celError{msg: fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", p.expr), stop: true}
	}
	if c := *det.ActualCost(); c > math.MaxInt64 || int64(c) > budget {
		return nil, -1, &celError{msg: outOfBudget, stop: true}
	} else {
		budget -= int64(c)
	}
	if err != nil {
		return nil, budget, &celError{msg: fmt.Sprintf("expression '%v' resulted in error: %v", p.expr, err)}
	}
	return val, budget, nil
}

// lazyVars is the variables map.
type lazyVars struct {
	ctx  context.Context
	act  *activation
	defs []namedProgram
	vals map[string]ref.Val
	cost int64
}

func (l *lazyVars) takeCost() int64 {
	c := l.cost
	l.cost = 0
	return c
}

func (l *lazyVars) lookup(name string) (ref.Val, bool) {
	if v, ok := l.vals[name]; ok {
		return v, true
	}
	for _, d := range l.defs {
		if d.name != name {
			continue
		}
		var v ref.Val
		if d.err != nil {
			v = types.NewErr("composited variable %q fails to compile: %v", name, d.err)
		} else {
			out, det, err := d.prog.ContextEval(l.ctx, l.act)
			switch {
			case det == nil:
				v = types.NewErr("unable to get evaluation details of variable %q", name)
			case det.ActualCost() == nil:
				v = types.NewErr("unable to calculate cost of variable %q", name)
			default:
				c := *det.ActualCost()
				if c > math.MaxInt64 {
					l.cost = math.MaxInt64
				} else {
					l.cost += int64(c)
				}
				if err != nil {
					v = types.NewErr("composited variable %q fails to evaluate: %v", name, err)
				} else {
					v = out
				}
			}
		}
		l.vals[name] = v
		return v, true
	}
	return nil, false
}

func (l *lazyVars) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("variables cannot be converted to %v", t)
}
func (l *lazyVars) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return types.MapType
	}
	return types.NewErr("type conversion error from map to '%s'", t.TypeName())
}
func (l *lazyVars) Equal(other ref.Val) ref.Val { return types.Bool(other == ref.Val(l)) }
func (l *lazyVars) Type() ref.Type              { return types.MapType }
func (l *lazyVars) Value() any                  { return l }
func (l *lazyVars) Contains(k ref.Val) ref.Val {
	_, ok := l.Find(k)
	return types.Bool(ok)
}
func (l *lazyVars) Get(k ref.Val) ref.Val {
	v, ok := l.Find(k)
	if !ok {
		return types.NewErr("no such key: %v", k)
	}
	return v
}
func (l *lazyVars) Find(k ref.Val) (ref.Val, bool) {
	s, ok := k.(types.String)
	if !ok {
		return nil, false
	}
	return l.lookup(string(s))
}
func (l *lazyVars) Size() ref.Val { return types.Int(len(l.defs)) }
func (l *lazyVars) Iterator() traits.Iterator {
	names := make([]ref.Val, len(l.defs))
	for i, d := range l.defs {
		names[i] = types.String(d.name)
	}
	return types.NewDynamicList(types.DefaultTypeAdapter, names).Iterator()
}

var _ traits.Mapper = (*lazyVars)(nil)

// toMap converts an object to its JSON map (nil for nil).
func toMap(obj runtime.Object) (map[string]any, error) {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, nil
	}
	if u, ok := obj.(runtime.Unstructured); ok {
		return runtime.DeepCopyJSON(u.UnstructuredContent()), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// requestMap is upstream's request variable: the AdmissionRequest (as
// CreateAdmissionRequest fills it) as JSON values.
func requestMap(a *admission.Attributes, matched schema.GroupVersionResource, kind schema.GroupVersionKind) (map[string]any, error) {
	rr, rk := matching.RequestResource(a), matching.RequestKind(a)
	dryRun := a.DryRun
	req := admissionv1.AdmissionRequest{
		Kind:               metav1.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind},
		Resource:           metav1.GroupVersionResource{Group: matched.Group, Version: matched.Version, Resource: matched.Resource},
		SubResource:        a.Subresource,
		RequestKind:        &metav1.GroupVersionKind{Group: rk.Group, Version: rk.Version, Kind: rk.Kind},
		RequestResource:    &metav1.GroupVersionResource{Group: rr.Group, Version: rr.Version, Resource: rr.Resource},
		RequestSubResource: a.Subresource,
		Name:               a.Name,
		Namespace:          a.Namespace,
		Operation:          admissionv1.Operation(a.Operation),
		DryRun:             &dryRun,
	}
	if a.UserInfo != nil {
		req.UserInfo = *a.UserInfo
	}
	if a.Options != nil {
		data, err := json.Marshal(a.Options)
		if err != nil {
			return nil, err
		}
		req.Options = runtime.RawExtension{Raw: data}
	}
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// namespaceMap is upstream's namespaceObject: the namespace with only the
// metadata fields upstream keeps.
func namespaceMap(ns *corev1.Namespace) (map[string]any, error) {
	if ns == nil {
		return nil, nil
	}
	out := &corev1.Namespace{Spec: ns.Spec, Status: ns.Status, ObjectMeta: metav1.ObjectMeta{
		Name: ns.Name, GenerateName: ns.GenerateName, Namespace: ns.Namespace, UID: ns.UID,
		ResourceVersion: ns.ResourceVersion, Generation: ns.Generation, CreationTimestamp: ns.CreationTimestamp,
		DeletionTimestamp: ns.DeletionTimestamp, DeletionGracePeriodSeconds: ns.DeletionGracePeriodSeconds,
		Labels: ns.Labels, Annotations: ns.Annotations, Finalizers: ns.Finalizers,
	}}
	return toMap(out)
}

// authorizerVals are the authorizer and authorizer.requestResource
// variables of a request.
func authorizerVals(ctx context.Context, az authorizer.Authorizer, a *admission.Attributes, matched schema.GroupVersionResource) (ref.Val, ref.Val) {
	av := newAuthorizerVal(ctx, az, a.UserInfo)
	rr := &authzVal{t: resourceCheckType, ctx: ctx, az: az, usr: a.UserInfo,
		group: matched.Group, resource: matched.Resource, subresource: a.Subresource, namespace: a.Namespace, name: a.Name}
	return av, rr
}
