package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	k8scel "github.com/skiff-sh/skiff/pkg/registry/customresource/cel"
)

var namespacesV1 = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

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

// requestResource is the served resource the request used.
func requestResource(a *admission.Attributes) schema.GroupVersionResource {
	if !a.RequestResource.Empty() {
		return a.RequestResource
	}
	return a.Resource.WithVersion("")
}

func requestKind(a *admission.Attributes) schema.GroupVersionKind {
	if !a.RequestKind.Empty() {
		return a.RequestKind
	}
	return a.Kind.WithVersion("")
}

// ruleMatches is upstream's rules.Matcher: scope, operation, group,
// version and resource (with subresource) of one rule against a request
// for gvr.
func ruleMatches(r admissionregistrationv1.RuleWithOperations, a *admission.Attributes, gvr schema.GroupVersionResource) bool {
	if r.Scope != nil && *r.Scope != admissionregistrationv1.AllScopes {
		switch *r.Scope {
		case admissionregistrationv1.NamespacedScope:
			if gvr == namespacesV1 || a.Namespace == "" {
				return false
			}
		case admissionregistrationv1.ClusterScope:
			if gvr != namespacesV1 && a.Namespace != "" {
				return false
			}
		default:
			return false
		}
	}
	opOK := false
	for _, op := range r.Operations {
		if op == admissionregistrationv1.OperationAll || string(op) == string(a.Operation) {
			opOK = true
			break
		}
	}
	if !opOK || !exactOrWildcard(r.APIGroups, gvr.Group) || !exactOrWildcard(r.APIVersions, gvr.Version) {
		return false
	}
	for _, res := range r.Resources {
		res, sub, _ := strings.Cut(res, "/")
		if (res == "*" || res == gvr.Resource) && (sub == "*" || sub == a.Subresource) {
			return true
		}
	}
	return false
}

func exactOrWildcard(items []string, v string) bool {
	for _, i := range items {
		if i == "*" || i == v {
			return true
		}
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

// shouldCall is upstream's ShouldCallHook: namespace and object selectors,
// the rules (the request's own version, then, with matchPolicy
// Equivalent, the resource's other served versions), then the
// matchConditions. It returns nil when the webhook is not called.
func (d *dispatcher) shouldCall(ctx context.Context, h *hook, a *admission.Attributes, vs *versionedSet) (*invocation, error) {
	nsMatch, nsErr := d.matchNamespace(ctx, h, a)
	if !nsMatch && nsErr == nil {
		return nil, nil
	}
	objMatch, objErr := matchObject(h, a)
	if !objMatch && objErr == nil {
		return nil, nil
	}
	gvr := requestResource(a)
	var inv *invocation
	for _, r := range h.rules {
		if ruleMatches(r, a, gvr) {
			inv = &invocation{hook: h, resource: gvr, kind: requestKind(a)}
			break
		}
	}
	if inv == nil && h.matchPolicy == admissionregistrationv1.Equivalent && a.Versions != nil {
		equivalents := a.Versions.Equivalents()
	outer:
		for _, r := range h.rules {
			for _, eq := range equivalents {
				if eq == gvr || !ruleMatches(r, a, eq) {
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
		ok, err := h.evalConditions(a, inv, v)
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

// matchNamespace is upstream's namespace matcher: a cluster-scoped
// request other than for a namespace always matches; a namespace is
// matched by its own labels (the old object's for a delete); anything else
// by its namespace's labels (a namespace missing from the watch cache is
// read from storage; missing there too, the request answers 404).
func (d *dispatcher) matchNamespace(ctx context.Context, h *hook, a *admission.Attributes) (bool, error) {
	isNamespace := a.Resource == grNamespaces
	if a.Namespace == "" && !isNamespace {
		return true, nil
	}
	if h.selectorErr != nil {
		return false, apierrors.NewInternalError(h.selectorErr)
	}
	if h.nsSelector.Empty() {
		return true, nil
	}
	var lbls map[string]string
	if isNamespace {
		obj := a.Object
		if a.Operation == admission.Delete {
			obj = a.OldObject
		}
		if m, err := meta.Accessor(obj); err == nil {
			lbls = m.GetLabels()
		}
	} else {
		obj, err := d.getter.Get(ctx, grNamespaces, "", a.Namespace)
		if apierrors.IsNotFound(err) {
			obj, err = d.getter.GetConsistent(ctx, grNamespaces, "", a.Namespace)
		}
		if err != nil {
			if apierrors.IsNotFound(err) {
				return false, apierrors.NewNotFound(grNamespaces, a.Namespace)
			}
			return false, apierrors.NewInternalError(err)
		}
		lbls = obj.(*corev1.Namespace).Labels
	}
	return h.nsSelector.Matches(labels.Set(lbls)), nil
}

// matchObject is upstream's object matcher: the new or the old object's
// labels match the objectSelector.
func matchObject(h *hook, a *admission.Attributes) (bool, error) {
	if h.selectorErr != nil {
		return false, apierrors.NewInternalError(h.selectorErr)
	}
	if h.objSelector.Empty() {
		return true, nil
	}
	matches := func(obj runtime.Object) bool {
		if obj == nil {
			return false
		}
		m, err := meta.Accessor(obj)
		return err == nil && h.objSelector.Matches(labels.Set(m.GetLabels()))
	}
	return matches(a.Object) || matches(a.OldObject), nil
}

// conditionEnv is the environment of matchConditions: object, oldObject,
// request (the AdmissionRequest) and authorizer, with upstream's base
// libraries and the Kubernetes functions CRD rules have. The authorizer
// is declared but not bound: skiff's matchConditions cannot make
// authorization checks yet (an expression using it fails to evaluate and
// the failurePolicy decides).
var conditionEnv = func() *cel.Env {
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType),
		cel.Variable("authorizer", cel.DynType),
		cel.HomogeneousAggregateLiterals(),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.Lists(ext.ListsVersion(3)),
		ext.TwoVarComprehensions(),
		k8scel.KubernetesLibrary(),
	)
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
func (h *hook) evalConditions(a *admission.Attributes, inv *invocation, v versioned) (bool, error) {
	vars := map[string]any{"object": nil, "oldObject": nil}
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
