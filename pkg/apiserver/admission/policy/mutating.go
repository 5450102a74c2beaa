package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/matching"
)

// MutatingName is the plugin's upstream name.
const MutatingName = "MutatingAdmissionPolicy"

var (
	grMAP  = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}
	grMAPB = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicybindings"}

	jsonPatchListType = cel.ListType(cel.ObjectType(jsonPatchTypeName))
)

// Mutating is upstream's MutatingAdmissionPolicy admission plugin.
type Mutating struct {
	plugin
	cache compileCache[*compiledMutating]
}

// NewMutating returns the MutatingAdmissionPolicy plugin.
func NewMutating(cfg Config) *Mutating { return &Mutating{plugin: plugin{cfg: cfg}} }

func (*Mutating) Name() string { return MutatingName }

// Handles: mutations apply to creates and updates (and connects, which
// carry an options object); a delete has no object to patch.
func (*Mutating) Handles(op admission.Operation) bool { return op != admission.Delete }

type mutation struct {
	patchType admissionregistrationv1.PatchType
	program
}

type compiledMutating struct {
	vars       []namedProgram
	conditions []namedProgram
	mutations  []mutation
}

func compileMutating(p *admissionregistrationv1.MutatingAdmissionPolicy) *compiledMutating {
	k := envKey{params: p.Spec.ParamKind != nil, patchTypes: true}
	c := &compiledMutating{}
	for _, v := range p.Spec.Variables {
		c.vars = append(c.vars, namedProgram{name: v.Name, program: compile(k, v.Expression)})
	}
	for _, m := range p.Spec.MatchConditions {
		c.conditions = append(c.conditions, namedProgram{name: m.Name, program: compile(k, m.Expression, cel.BoolType)})
	}
	for _, m := range p.Spec.Mutations {
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			c.mutations = append(c.mutations, mutation{patchType: m.PatchType, program: compile(k, m.ApplyConfiguration.Expression, cel.ObjectType("Object"))})
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			c.mutations = append(c.mutations, mutation{patchType: m.PatchType, program: compile(k, m.JSONPatch.Expression, jsonPatchListType)})
		default:
			c.mutations = append(c.mutations, mutation{patchType: m.PatchType})
		}
	}
	return c
}

// invocation is one policy, binding and param applying to a request.
type invocation struct {
	policy   *admissionregistrationv1.MutatingAdmissionPolicy
	binding  *admissionregistrationv1.MutatingAdmissionPolicyBinding
	compiled *compiledMutating
	matched  matching.Result
	param    any
	key      string
}

// policyError is upstream's generic PolicyError.
type policyError struct {
	policy, binding string
	failure         admissionregistrationv1.FailurePolicyType
	err             error
	reason          metav1.StatusReason
}

func (e policyError) Error() string {
	if e.binding != "" {
		return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.policy, e.binding, e.err.Error())
	}
	return fmt.Sprintf("policy %q denied request: %s", e.policy, e.err.Error())
}

// reinvocation is the plugin's reinvocation state of one request
// (upstream's policyReinvokeContext).
type reinvocation struct {
	last     runtime.Object
	invoked  map[string]bool // IfNeeded invocations run so far
	reinvoke map[string]bool
}

// Admit runs every MutatingAdmissionPolicy bound to the request, as
// upstream's mutating dispatcher: the mutations of each invocation in
// order, each on the result of the previous one; the object is converted
// back to its storage form (and defaulted) after each changed invocation.
func (m *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if excluded[a.Resource] || a.Object == nil {
		return nil
	}
	policies, err := listSorted(ctx, m.cfg.Getter, grMAP, func(p *admissionregistrationv1.MutatingAdmissionPolicy) string { return p.Name })
	if err != nil || len(policies) == 0 {
		return err
	}
	bindings, err := listSorted(ctx, m.cfg.Getter, grMAPB, func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) string { return b.Name })
	if err != nil {
		return err
	}
	byPolicy := map[string][]*admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	for _, b := range bindings {
		byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
	}
	live := map[k8stypes.UID]bool{}
	var errs []policyError
	var invocations []invocation
	for _, p := range policies {
		live[p.UID] = true
		bs := byPolicy[p.Name]
		if len(bs) == 0 {
			continue
		}
		fail := failurePolicy(p.Spec.FailurePolicy)
		configErr := func(err error, binding string) {
			msg := fmt.Errorf("failed to configure policy: %w", err)
			if binding != "" {
				msg = fmt.Errorf("failed to configure binding: %w", err)
			}
			errs = append(errs, policyError{policy: p.Name, binding: binding, failure: fail, err: msg})
		}
		if p.Spec.MatchConstraints == nil {
			configErr(errors.New("policy contained no match constraints, a required field"), "")
			continue
		}
		ok, matched, err := matching.Matches(ctx, m.cfg.Getter, p.Spec.MatchConstraints, a)
		if err != nil {
			configErr(err, "")
			continue
		}
		if !ok {
			continue
		}
		src, err := resolveParamKind(m.cfg.Resources, p.Spec.ParamKind)
		if err != nil {
			configErr(err, "")
			continue
		}
		compiled := m.cache.get(p.UID, p.ResourceVersion, func() *compiledMutating { return compileMutating(p) })
		for _, b := range bs {
			if b.Spec.MatchResources != nil {
				ok, _, err := matching.Matches(ctx, m.cfg.Getter, b.Spec.MatchResources, a)
				if err != nil {
					configErr(err, b.Name)
					continue
				}
				if !ok {
					continue
				}
			}
			params, err := m.collectParams(ctx, src, b.Spec.ParamRef, a.Namespace)
			if err != nil {
				configErr(err, b.Name)
				continue
			}
			for _, param := range params {
				invocations = append(invocations, invocation{policy: p, binding: b, compiled: compiled, matched: matched, param: param,
					key: invocationKey(p.Name, b.Name, param)})
			}
		}
	}
	m.cache.prune(live)
	if len(invocations) > 0 {
		more, err := m.dispatch(ctx, a, invocations)
		if err != nil {
			return err
		}
		errs = append(errs, more...)
	}
	var failed []policyError
	for _, e := range errs {
		if e.failure != admissionregistrationv1.Ignore {
			failed = append(failed, e)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	err = forbidden(a, errors.New("admission request denied by policy"))
	st := err.(*apierrors.StatusError)
	st.ErrStatus.Message = ""
	for _, e := range failed {
		msg := e.Error()
		if st.ErrStatus.Message == "" {
			st.ErrStatus.Message = msg
			if e.reason != "" {
				st.ErrStatus.Reason = e.reason
			}
		}
		st.ErrStatus.Details.Causes = append(st.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	}
	return st
}

func invocationKey(policy, binding string, param any) string {
	key := policy + "/" + binding
	if pm, ok := param.(map[string]any); ok {
		u := unstructured.Unstructured{Object: pm}
		key += "/" + u.GetNamespace() + "/" + u.GetName()
	}
	return key
}

func (m *Mutating) dispatch(ctx context.Context, a *admission.Attributes, invocations []invocation) ([]policyError, error) {
	state, _ := a.Reinvocation.Value(MutatingName).(*reinvocation)
	if state == nil {
		state = &reinvocation{invoked: map[string]bool{}, reinvoke: map[string]bool{}}
		a.Reinvocation.SetValue(MutatingName, state)
	}
	requireReinvoke := func() {
		for k := range state.invoked {
			state.reinvoke[k] = true
		}
	}
	if a.Reinvocation.IsReinvoke && !apiequality.Semantic.DeepEqual(state.last, a.Object) {
		requireReinvoke()
	}
	defer func() { state.last = a.Object.DeepCopyObject() }()

	var errs []policyError
	az := newCachingAuthorizer(m.cfg.authz())
	for _, inv := range invocations {
		p, b := inv.policy, inv.binding
		fail := failurePolicy(p.Spec.FailurePolicy)
		req := m.newRequest(a) // the object as the previous invocations left it
		req.az = az
		in, err := m.input(ctx, req, inv.matched, inv.compiled != nil && p.Spec.ParamKind != nil)
		if err != nil {
			if in == nil {
				return nil, err
			}
			return nil, apierrors.NewInternalError(err)
		}
		in.params = inv.param
		ok, err := matchConditions(ctx, inv.compiled.conditions, in, inv.compiled.vars)
		if err != nil {
			if fail != admissionregistrationv1.Ignore {
				errs = append(errs, policyError{policy: p.Name, binding: b.Name, failure: fail, err: err, reason: metav1.StatusReasonInvalid})
			}
			continue
		}
		if !ok {
			continue
		}
		if a.Reinvocation.IsReinvoke && !state.reinvoke[inv.key] {
			continue
		}
		before := in.object
		obj := in.object
		changed := false
		for _, mu := range inv.compiled.mutations {
			if obj == nil {
				continue
			}
			out, err := m.mutate(ctx, mu, in, inv.compiled.vars, obj, inv.matched)
			if err != nil {
				var st *apierrors.StatusError
				if errors.As(err, &st) {
					return nil, st
				}
				errs = append(errs, policyError{policy: p.Name, binding: b.Name, failure: fail, err: err, reason: metav1.StatusReasonInvalid})
				continue
			}
			obj = out
			in.object = out
			changed = true
		}
		if changed && !apiequality.Semantic.DeepEqual(before, obj) {
			if err := m.store(a, obj, inv.matched.Resource); err != nil {
				return nil, err
			}
			requireReinvoke()
			a.Reinvocation.ShouldReinvoke = true
		}
		if p.Spec.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy {
			state.invoked[inv.key] = true
		}
	}
	return errs, nil
}

// store replaces the request's object by the mutated one (served version
// gvr) in its storage form, defaulted as a request body.
func (m *Mutating) store(a *admission.Attributes, obj any, gvr schema.GroupVersionResource) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if a.Versions != nil {
		out, err := a.Versions.FromJSON(data, gvr)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to convert object: %w", err))
		}
		a.Object = out
		return nil
	}
	if u, ok := a.Object.(*unstructured.Unstructured); ok {
		u.Object = obj.(map[string]any)
		return nil
	}
	out := reflect.New(reflect.TypeOf(a.Object).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(data, out); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to convert object: %w", err))
	}
	a.Object = out
	return nil
}

// mutate evaluates one mutation against obj (the versioned object as a
// JSON map) and returns the patched object.
func (m *Mutating) mutate(ctx context.Context, mu mutation, in *input, vars []namedProgram, obj any, matched matching.Result) (any, error) {
	if mu.expr == "" && mu.err == nil {
		return nil, fmt.Errorf("unsupported patch type %q", mu.patchType)
	}
	if mu.err != nil {
		return nil, mu.err
	}
	act := newActivation(ctx, in, vars)
	val, _, err := act.eval(ctx, mu.program, runtimeCostBudget)
	if err != nil {
		return nil, err
	}
	switch mu.patchType {
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		o, ok := val.(*objectVal)
		if !ok {
			return nil, fmt.Errorf("unsupported return type from ApplyConfiguration expression: %v", val.Type())
		}
		if errs := checkTypeNames(o, []string{o.typeName}); len(errs) > 0 {
			return nil, fmt.Errorf("type mismatch: %w", errors.Join(errs...))
		}
		patch, err := toNative(o)
		if err != nil {
			return nil, fmt.Errorf("invalid return type: %T", val)
		}
		out, err := m.applyConfiguration(obj.(map[string]any), patch.(map[string]any), matched.Kind)
		if err != nil {
			return nil, fmt.Errorf("error applying patch: %w", err)
		}
		return out, nil
	default:
		patch, err := jsonPatchOf(val)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("failed to create JSON patch: %w", err)
		}
		patched, err := patch.Apply(data)
		if err != nil {
			if errors.Is(err, jsonpatch.ErrTestFailed) {
				return obj, nil
			}
			return nil, fmt.Errorf("JSON Patch: %w", err)
		}
		var out map[string]any
		if err := json.Unmarshal(patched, &out); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return out, nil
	}
}

// jsonPatchOf converts a list of JSONPatch values to a JSON patch.
func jsonPatchOf(val any) (jsonpatch.Patch, error) {
	l, ok := val.(traits.Lister)
	if !ok {
		return nil, errors.New("type mismatch: JSONPatchType.expression should evaluate to array")
	}
	var ops []map[string]any
	for it := l.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		o, ok := v.(*objectVal)
		if !ok || o.typeName != jsonPatchTypeName {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of %v", v.Type())
		}
		op := map[string]any{}
		for _, k := range []string{"op", "path", "from"} {
			if s, ok := o.fields[k].(types.String); ok && (k != "from" || s != "") {
				op[k] = string(s)
			} else if k != "from" {
				op[k] = ""
			}
		}
		if value, ok := o.fields["value"]; ok {
			if errs := checkTypeNames(value, []string{"Object"}); len(errs) > 0 && isObjectValue(value) {
				return nil, fmt.Errorf("type mismatch: %w", errors.Join(errs...))
			}
			n, err := toNative(value)
			if err != nil {
				return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
			}
			op["value"] = n
		}
		ops = append(ops, op)
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
	}
	return jsonpatch.DecodePatch(data)
}

func isObjectValue(v any) bool {
	o, ok := v.(*objectVal)
	return ok && strings.HasPrefix(o.typeName, "Object")
}

// applyConfiguration merges patch into obj with server-side apply's merge
// semantics (structured-merge-diff over the kind's schema), as upstream's
// ApplyStructuredMergeDiff; no field ownership is recorded.
func (m *Mutating) applyConfiguration(obj, patch map[string]any, gvk schema.GroupVersionKind) (map[string]any, error) {
	if m.cfg.TypeConverter == nil {
		return nil, errors.New("type converter must not be nil")
	}
	tc, err := m.cfg.TypeConverter(gvk)
	if err != nil || tc == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("Resource kind %s not found. There can be a delay between when CustomResourceDefinitions are created and when they are available.", gvk))
	}
	p := &unstructured.Unstructured{Object: patch}
	p.SetGroupVersionKind(gvk)
	live := &unstructured.Unstructured{Object: obj}
	if live.GroupVersionKind() != gvk {
		return nil, fmt.Errorf("patch (%v) and original object (%v) are not of the same gvk", gvk.String(), live.GroupVersionKind().String())
	}
	pt, err := tc.ObjectToTyped(p)
	if err != nil {
		return nil, fmt.Errorf("failed to convert patch object to typed object: %w", err)
	}
	if err := checkNoAtomics(pt); err != nil {
		return nil, fmt.Errorf("invalid ApplyConfiguration: %w", err)
	}
	lt, err := tc.ObjectToTyped(live)
	if err != nil {
		return nil, fmt.Errorf("failed to convert original object to typed object: %w", err)
	}
	merged, err := lt.Merge(pt)
	if err != nil {
		return nil, fmt.Errorf("failed to merge patch: %w", err)
	}
	out, err := tc.TypedToObject(merged)
	if err != nil {
		return nil, fmt.Errorf("failed to convert typed object to object: %w", err)
	}
	return toMap(out)
}
