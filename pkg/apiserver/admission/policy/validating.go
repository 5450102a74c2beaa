package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/matching"
)

// ValidatingName is the plugin's upstream name.
const ValidatingName = "ValidatingAdmissionPolicy"

var (
	grVAP  = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}
	grVAPB = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}
)

// matchConditionBudget is upstream's RuntimeCELCostBudgetMatchConditions.
const matchConditionBudget = 2500000

// Validating is upstream's ValidatingAdmissionPolicy admission plugin.
type Validating struct {
	plugin
	cache compileCache[*compiledValidating]
}

// NewValidating returns the ValidatingAdmissionPolicy plugin.
func NewValidating(cfg Config) *Validating { return &Validating{plugin: plugin{cfg: cfg}} }

func (*Validating) Name() string                     { return ValidatingName }
func (*Validating) Handles(admission.Operation) bool { return true }

type compiledValidating struct {
	vars        []namedProgram
	conditions  []namedProgram
	validations []program
	messages    []program // expr "" where the validation has none
	audits      []program
	// the static parts: each validation's message and reason, each audit
	// annotation's key.
	staticMessages []string
	reasons        []metav1.StatusReason
	auditKeys      []string
}

func compileValidating(p *admissionregistrationv1.ValidatingAdmissionPolicy) *compiledValidating {
	k := envKey{params: p.Spec.ParamKind != nil}
	c := &compiledValidating{}
	for _, v := range p.Spec.Variables {
		c.vars = append(c.vars, namedProgram{name: v.Name, program: compile(k, v.Expression)})
	}
	for _, m := range p.Spec.MatchConditions {
		c.conditions = append(c.conditions, namedProgram{name: m.Name, program: compile(k, m.Expression, cel.BoolType)})
	}
	for _, v := range p.Spec.Validations {
		c.validations = append(c.validations, compile(k, v.Expression, cel.BoolType))
		var m program
		if v.MessageExpression != "" {
			m = compile(k, v.MessageExpression, cel.StringType)
		}
		c.messages = append(c.messages, m)
		c.staticMessages = append(c.staticMessages, v.Message)
		var reason metav1.StatusReason
		if v.Reason != nil {
			reason = *v.Reason
		}
		c.reasons = append(c.reasons, reason)
	}
	for _, a := range p.Spec.AuditAnnotations {
		c.audits = append(c.audits, compile(k, a.ValueExpression, cel.StringType, cel.NullType))
		c.auditKeys = append(c.auditKeys, a.Key)
	}
	return c
}

// decision is one validation's outcome for one binding and param.
type decision struct {
	deny    bool
	message string
	reason  metav1.StatusReason
	index   int
}

type auditValue struct {
	key, value string
	err        string
}

type deniedDecision struct {
	decision
	policy, binding string
}

func failurePolicy(f *admissionregistrationv1.FailurePolicyType) admissionregistrationv1.FailurePolicyType {
	if f == nil {
		return admissionregistrationv1.Fail
	}
	return *f
}

// Validate runs every ValidatingAdmissionPolicy bound to the request, as
// upstream's validating dispatcher.
func (v *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	if excluded[a.Resource] {
		return nil
	}
	policies, err := listSorted(ctx, v.cfg.Getter, grVAP, func(p *admissionregistrationv1.ValidatingAdmissionPolicy) string { return p.Name })
	if err != nil || len(policies) == 0 {
		return err
	}
	bindings, err := listSorted(ctx, v.cfg.Getter, grVAPB, func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Name })
	if err != nil {
		return err
	}
	byPolicy := map[string][]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	for _, b := range bindings {
		byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
	}
	live := map[k8stypes.UID]bool{}
	req := v.newRequest(a)
	var denied []deniedDecision
	addConfigError := func(err error, p *admissionregistrationv1.ValidatingAdmissionPolicy, binding string) {
		switch f := failurePolicy(p.Spec.FailurePolicy); f {
		case admissionregistrationv1.Ignore:
		case admissionregistrationv1.Fail:
			msg := fmt.Sprintf("failed to configure policy: %v", err)
			if binding != "" {
				msg = fmt.Sprintf("failed to configure binding: %v", err)
			}
			denied = append(denied, deniedDecision{decision: decision{deny: true, message: msg}, policy: p.Name, binding: binding})
		default:
			denied = append(denied, deniedDecision{decision: decision{deny: true, message: fmt.Sprintf("unrecognized failure policy: '%v'", f)}, policy: p.Name, binding: binding})
		}
	}
	for _, p := range policies {
		live[p.UID] = true
		bs := byPolicy[p.Name]
		if len(bs) == 0 {
			continue
		}
		if p.Spec.MatchConstraints == nil {
			addConfigError(fmt.Errorf("policy contained no match constraints, a required field"), p, "")
			continue
		}
		ok, matched, err := matching.Matches(ctx, v.cfg.Getter, p.Spec.MatchConstraints, a)
		if err != nil {
			addConfigError(err, p, "")
			continue
		}
		if !ok {
			continue
		}
		src, err := resolveParamKind(v.cfg.Resources, p.Spec.ParamKind)
		if err != nil {
			addConfigError(err, p, "")
			continue
		}
		compiled := v.cache.get(p.UID, p.ResourceVersion, func() *compiledValidating { return compileValidating(p) })
		audits := newAuditCollector()
		for _, b := range bs {
			if b.Spec.MatchResources != nil {
				ok, _, err := matching.Matches(ctx, v.cfg.Getter, b.Spec.MatchResources, a)
				if err != nil {
					addConfigError(err, p, b.Name)
					continue
				}
				if !ok {
					continue
				}
			}
			params, err := v.collectParams(ctx, src, b.Spec.ParamRef, a.Namespace)
			if err != nil {
				addConfigError(err, p, b.Name)
				continue
			}
			in, err := v.input(ctx, req, matched, src != nil)
			if err != nil {
				if in == nil {
					return err
				}
				addConfigError(fmt.Errorf("failed to convert object version: %w", err), p, b.Name)
				continue
			}
			for _, param := range params {
				pin := *in
				pin.params = param
				decisions, auditValues := compiled.validate(ctx, &pin, failurePolicy(p.Spec.FailurePolicy))
				for _, d := range decisions {
					if !d.deny {
						continue
					}
					for _, action := range b.Spec.ValidationActions {
						switch action {
						case admissionregistrationv1.Deny:
							denied = append(denied, deniedDecision{decision: d, policy: p.Name, binding: b.Name})
						case admissionregistrationv1.Warn:
							admission.AddWarning(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.Name, b.Name, d.message))
						case admissionregistrationv1.Audit:
							publishValidationFailure(a, b, d, v.cfg.logger())
						}
					}
				}
				for _, av := range auditValues {
					if av.err != "" {
						denied = append(denied, deniedDecision{decision: decision{deny: true, message: av.err}, policy: p.Name, binding: b.Name})
						continue
					}
					audits.add(av.key, av.value)
				}
			}
		}
		audits.publish(p.Name, a, v.cfg.logger())
	}
	v.cache.prune(live)
	if len(denied) == 0 {
		return nil
	}
	d := denied[0]
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	if d.binding != "" {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	}
	return denial(a, msg, d.reason)
}

// input prepares the variables of a request for a policy matched as
// matched; a nil input with an error fails the request (the namespace
// could not be read), an input with an error fails the binding.
func (p *plugin) input(ctx context.Context, req *request, matched matching.Result, hasParams bool) (*input, error) {
	_, nsMap, err := req.namespace(ctx)
	if err != nil {
		return nil, err
	}
	in := &input{hasParams: hasParams, namespace: nsMap}
	if in.object, in.oldObject, err = req.objects(matched.Resource); err != nil {
		return in, err
	}
	if in.request, err = requestMap(req.a, matched.Resource, matched.Kind); err != nil {
		return in, err
	}
	in.authz, in.requestResource = authorizerVals(ctx, req.az, req.a, matched.Resource)
	return in, nil
}

func errorDecision(f admissionregistrationv1.FailurePolicyType, msg string) decision {
	return decision{deny: f != admissionregistrationv1.Ignore, message: msg}
}

// matchConditions is upstream's matchconditions matcher: any false → no
// match; otherwise errors are the failure (their aggregate).
func matchConditions(ctx context.Context, conds []namedProgram, in *input, vars []namedProgram) (bool, error) {
	if len(conds) == 0 {
		return true, nil
	}
	act := newActivation(ctx, in, vars)
	budget := int64(matchConditionBudget)
	var errs []error
	for _, c := range conds {
		val, b, err := act.eval(ctx, c.program, budget)
		budget = b
		if err != nil {
			if ce, ok := err.(*celError); ok && ce.stop {
				return false, err
			}
			errs = append(errs, err)
			continue
		}
		if val == types.False {
			return false, nil
		}
	}
	if len(errs) > 0 {
		return false, utilerrors.NewAggregate(errs)
	}
	return true, nil
}

// validate is upstream's validator: matchConditions, then every
// validation, then the messages of the failed ones and the audit
// annotations.
func (c *compiledValidating) validate(ctx context.Context, in *input, f admissionregistrationv1.FailurePolicyType) ([]decision, []auditValue) {
	ok, err := matchConditions(ctx, c.conditions, in, c.vars)
	if err != nil {
		return []decision{errorDecision(f, err.Error())}, nil
	}
	if !ok {
		return nil, nil
	}
	act := newActivation(ctx, in, c.vars)
	budget := int64(runtimeCostBudget)
	decisions := make([]decision, len(c.validations))
	results := make([]error, len(c.validations))
	for i, prog := range c.validations {
		decisions[i].index = i
		val, b, err := act.eval(ctx, prog, budget)
		budget = b
		if err != nil {
			if ce, ok := err.(*celError); ok && ce.stop {
				return []decision{errorDecision(f, err.Error())}, nil
			}
			decisions[i] = errorDecision(f, err.Error())
			decisions[i].index = i
			results[i] = err
			continue
		}
		if val == types.True {
			continue
		}
		decisions[i].deny = true
		decisions[i].reason = metav1.StatusReasonInvalid
		results[i] = errNotTrue
	}
	for i := range c.validations {
		if results[i] != errNotTrue {
			continue
		}
		d := &decisions[i]
		var message string
		if m := c.messages[i]; m.expr != "" {
			val, b, err := act.eval(ctx, m, budget)
			if err == nil {
				budget = b
				if s, ok := val.(types.String); ok {
					message = strings.TrimSpace(string(s))
					if len(message) > maxMessageBytes || strings.Contains(message, "\n") {
						message = ""
					}
				}
			} else if ce, ok := err.(*celError); ok && ce.stop {
				*d = errorDecision(f, "failed messageExpression: "+err.Error())
				continue
			}
		}
		d.setMessage(message, i, c)
	}
	var audits []auditValue
	for i, prog := range c.audits {
		val, b, err := act.eval(ctx, prog, budget)
		budget = b
		key := c.auditKeys[i]
		if err != nil {
			if f != admissionregistrationv1.Ignore {
				audits = append(audits, auditValue{key: key, err: err.Error()})
			}
			continue
		}
		switch x := val.(type) {
		case types.String:
			if s := strings.TrimSpace(string(x)); s != "" {
				audits = append(audits, auditValue{key: key, value: s})
			}
		case types.Null:
		default:
			audits = append(audits, auditValue{key: key, err: fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. Return type must be either string or null.", prog.expr, val.Type())})
		}
	}
	return decisions, audits
}

var errNotTrue = fmt.Errorf("not true")

func (d *decision) setMessage(message string, i int, c *compiledValidating) {
	if message == "" {
		message = strings.TrimSpace(c.staticMessages[i])
	}
	if message == "" {
		message = fmt.Sprintf("failed expression: %v", strings.TrimSpace(c.validations[i].expr))
	}
	d.message = message
	if c.reasons[i] != "" {
		d.reason = c.reasons[i]
	}
}

// publishValidationFailure records upstream's Audit action annotation.
func publishValidationFailure(a *admission.Attributes, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, d decision, log *slog.Logger) {
	const key = "validation.policy.admission.k8s.io/validation_failure"
	value, err := json.Marshal([]map[string]any{{
		"message": d.message, "policy": b.Spec.PolicyName, "binding": b.Name,
		"expressionIndex": d.index, "validationActions": b.Spec.ValidationActions,
	}})
	if err != nil {
		return
	}
	if _, exists := a.Annotations()[key]; exists {
		return
	}
	a.AddAnnotation(key, string(value))
	log.Debug("admission audit annotation", "key", key, "value", string(value))
}

// auditCollector gathers a policy's audit annotations over its bindings
// (distinct values of one key joined with ", ").
type auditCollector struct {
	keys   []string
	values map[string][]string
}

func newAuditCollector() *auditCollector { return &auditCollector{values: map[string][]string{}} }

func (c *auditCollector) add(key, value string) {
	if len(value) > maxAuditAnnotationValueLength {
		value = value[:maxAuditAnnotationValueLength]
	}
	for _, v := range c.values[key] {
		if v == value {
			return
		}
	}
	if _, ok := c.values[key]; !ok {
		c.keys = append(c.keys, key)
	}
	c.values[key] = append(c.values[key], value)
}

func (c *auditCollector) publish(policy string, a *admission.Attributes, log *slog.Logger) {
	for _, k := range c.keys {
		a.AddAnnotation(policy+"/"+k, strings.Join(c.values[k], ", "))
		log.Debug("admission audit annotation", "key", policy+"/"+k, "value", strings.Join(c.values[k], ", "))
	}
}
