package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/matching"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/policy"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	k8scel "github.com/skiff-sh/skiff/pkg/registry/customresource/cel"
)

// exempt reports the resources webhooks are never called for (upstream's
// IsExemptAdmissionConfigurationResource): webhook configurations and
// admission policies, so that a broken webhook can always be removed.
func exempt(a *admission.Attributes) bool {
	if a.Kind.Group != "admissionregistration.k8s.io" {
		return false
	}
	switch a.Kind.Kind {
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
		"ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
		return true
	}
	return false
}

// invocation is a webhook to call for a request, in the served version it
// matched.
type invocation struct {
	hook     *hook
	resource schema.GroupVersionResource
	kind     schema.GroupVersionKind
}

// shouldCall is upstream's ShouldCallHook (with the matching package):
// namespace and object selectors, the rules (the request's own version, then, with matchPolicy
// Equivalent, the resource's other served versions), then the
// matchConditions. It returns nil when the webhook is not called.
func (d *dispatcher) shouldCall(ctx context.Context, h *hook, a *admission.Attributes, vs *versionedSet) (*invocation, error) {
	nsMatch, nsErr := matching.MatchNamespace(ctx, d.getter, h.nsSelector, a)
	if !nsMatch && nsErr == nil {
		return nil, nil
	}
	objMatch, objErr := matching.MatchObject(h.objSelector, a)
	if !objMatch && objErr == nil {
		return nil, nil
	}
	gvr := matching.RequestResource(a)
	var inv *invocation
	for _, r := range h.rules {
		if matching.RuleMatches(r, a, gvr) {
			inv = &invocation{hook: h, resource: gvr, kind: matching.RequestKind(a)}
			break
		}
	}
	if inv == nil && h.matchPolicy == admissionregistrationv1.Equivalent && a.Versions != nil {
		equivalents := a.Versions.Equivalents()
	outer:
		for _, r := range h.rules {
			for _, eq := range equivalents {
				if eq == gvr || !matching.RuleMatches(r, a, eq) {
					continue
				}
				kind := a.Versions.KindFor(eq)
				if kind.Empty() {
					return nil, apierrors.NewInternalError(fmt.Errorf("unable to convert to %v: unknown kind", eq))
				}
				inv = &invocation{hook: h, resource: eq, kind: kind}
				break outer
			}
		}
	}
	if inv == nil {
		return nil, nil
	}
	if nsErr != nil {
		return nil, nsErr
	}
	if objErr != nil {
		return nil, objErr
	}
	if len(h.conditions) > 0 {
		v, err := vs.get(a, inv.resource)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		ok, err := h.evalConditions(ctx, d.authorizer, a, inv, v)
		if err != nil {
			d.logger.Warn("Failed evaluating match conditions, failing closed", "webhook", h.name, "err", err)
			return nil, apierrors.NewForbidden(a.Resource, a.Name, err)
		}
		if !ok {
			return nil, nil
		}
	}
	return inv, nil
}

// conditionEnv is the environment of matchConditions, as upstream's:
// object, oldObject, request (the AdmissionRequest), authorizer and
// authorizer.requestResource (the authorizer library of package policy),
// with upstream's base libraries.
var conditionEnv = func() *cel.Env {
	opts := append(k8scel.BaseEnvOptions(),
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType),
	)
	env, err := cel.NewEnv(append(opts, policy.AuthorizerEnvOptions()...)...)
	if err != nil {
		panic(err)
	}
	return env
}()

// conditionCostLimit is upstream's per-evaluation budget of match
// conditions (RuntimeCELCostBudgetMatchConditions).
const conditionCostLimit = 7_000_000

func compileCondition(name, expr string) condition {
	c := condition{name: name, expr: expr}
	ast, iss := conditionEnv.Compile(expr)
	if iss.Err() != nil {
		c.err = fmt.Errorf("compilation failed: %v", iss.Err())
		return c
	}
	c.prog, c.err = conditionEnv.Program(ast, cel.CostLimit(conditionCostLimit))
	return c
}

// evalConditions is upstream's matchConditions matcher: any condition
// false → not called; otherwise evaluation errors → the failurePolicy
// (Fail: the error; Ignore: not called).
func (h *hook) evalConditions(ctx context.Context, az authorizer.Authorizer, a *admission.Attributes, inv *invocation, v versioned) (bool, error) {
	vars := map[string]any{"object": nil, "oldObject": nil}
	vars[policy.AuthorizerVariable], vars[policy.RequestResourceVariable] = policy.AuthorizerVars(ctx, az, a, inv.resource)
	if v.obj != nil {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v.obj)
		if err != nil {
			return h.conditionError(err)
		}
		vars["object"] = m
	}
	if v.old != nil {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v.old)
		if err != nil {
			return h.conditionError(err)
		}
		vars["oldObject"] = m
	}
	req, err := requestMap(a, inv)
	if err != nil {
		return h.conditionError(err)
	}
	vars["request"] = req
	var errs []error
	for _, c := range h.conditions {
		if c.err != nil {
			errs = append(errs, fmt.Errorf("expression '%s' resulted in error: %w", c.expr, c.err))
			continue
		}
		out, _, err := c.prog.Eval(vars)
		if err != nil {
			errs = append(errs, fmt.Errorf("expression '%s' resulted in error: %w", c.expr, err))
			continue
		}
		b, ok := out.(types.Bool)
		if !ok {
			errs = append(errs, fmt.Errorf("expression '%s' resulted in error: must evaluate to bool", c.expr))
			continue
		}
		if !b {
			return false, nil
		}
	}
	if len(errs) > 0 {
		return h.conditionError(utilerrors.NewAggregate(errs))
	}
	return true, nil
}

func (h *hook) conditionError(err error) (bool, error) {
	if h.ignoresFailures() {
		return false, nil
	}
	return false, err
}

// requestMap is the request variable: the AdmissionRequest as JSON values
// (without the objects, which are variables of their own).
func requestMap(a *admission.Attributes, inv *invocation) (map[string]any, error) {
	r := newRequest("", a, inv, versioned{})
	r.Object, r.OldObject = runtime.RawExtension{}, runtime.RawExtension{}
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(data, &m)
	delete(m, "object")
	delete(m, "oldObject")
	return m, err
}
