package admissionregistration

import (
	"fmt"
	webhookval "github.com/skiff-sh/skiff/pkg/registry/webhook"
	"regexp"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	supportedFailurePolicies = []string{string(admissionregistrationv1.Fail), string(admissionregistrationv1.Ignore)}
	supportedMatchPolicies   = []string{string(admissionregistrationv1.Equivalent), string(admissionregistrationv1.Exact)}
	allSideEffectClasses     = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	noSideEffectClasses      = []string{"None", "NoneOnDryRun"}
	supportedOperations      = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	supportedReinvocation    = []string{string(admissionregistrationv1.IfNeededReinvocationPolicy), string(admissionregistrationv1.NeverReinvocationPolicy)}
	supportedScopes          = []string{"*", "Cluster", "Namespaced"}
	supportedReasons         = []string{string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge)}
	validationActions        = []string{string(admissionregistrationv1.Audit), string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn)}
	patchTypes               = []string{string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch)}
	// acceptedReviewVersions are the AdmissionReview versions this server
	// (and the one before it) speaks.
	acceptedReviewVersions = []string{"v1", "v1beta1"}
)

const (
	maxMatchConditions          = 64
	maxAuditAnnotations         = 20
	maxAuditAnnotationValueExpr = 5 * 1024
)

// options relax validation on update where the stored object already
// broke a rule that is newer than it (upstream's ratcheting).
type options struct {
	requireNoSideEffects           bool
	requireRecognizedReviewVersion bool
	requireUniqueWebhookNames      bool
	allowInvalidLabelValues        bool
	ignoreMatchConditions          bool
}

var strict = options{requireNoSideEffects: true, requireRecognizedReviewVersion: true, requireUniqueWebhookNames: true}

// webhook is what the two webhook kinds share.
type webhook struct {
	name                    string
	clientConfig            admissionregistrationv1.WebhookClientConfig
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	matchPolicy             *admissionregistrationv1.MatchPolicyType
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          *int32
	admissionReviewVersions []string
	matchConditions         []admissionregistrationv1.MatchCondition
	reinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType
}

func mutatingHooks(c *admissionregistrationv1.MutatingWebhookConfiguration) []webhook {
	out := make([]webhook, len(c.Webhooks))
	for i, w := range c.Webhooks {
		out[i] = webhook{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions, w.ReinvocationPolicy}
	}
	return out
}

func validatingHooks(c *admissionregistrationv1.ValidatingWebhookConfiguration) []webhook {
	out := make([]webhook, len(c.Webhooks))
	for i, w := range c.Webhooks {
		out[i] = webhook{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector,
			w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions, nil}
	}
	return out
}

// ValidateMutatingWebhookConfiguration validates a new configuration.
func ValidateMutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	return validateWebhookConfiguration(&c.ObjectMeta, mutatingHooks(c), true, strict)
}

// ValidateMutatingWebhookConfigurationUpdate validates an update.
func ValidateMutatingWebhookConfigurationUpdate(c, old *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateWebhookConfiguration(&c.ObjectMeta, mutatingHooks(c), true, ratchet(mutatingHooks(c), mutatingHooks(old)))...)
}

// ValidateValidatingWebhookConfiguration validates a new configuration.
func ValidateValidatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	return validateWebhookConfiguration(&c.ObjectMeta, validatingHooks(c), false, strict)
}

// ValidateValidatingWebhookConfigurationUpdate validates an update.
func ValidateValidatingWebhookConfigurationUpdate(c, old *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateWebhookConfiguration(&c.ObjectMeta, validatingHooks(c), false, ratchet(validatingHooks(c), validatingHooks(old)))...)
}

// ratchet: each rule stays strict only if the stored webhooks keep it.
func ratchet(hooks, old []webhook) options {
	o := options{requireNoSideEffects: true, requireRecognizedReviewVersion: true, requireUniqueWebhookNames: true, ignoreMatchConditions: len(hooks) == len(old)}
	names := map[string]bool{}
	for i, w := range old {
		if w.sideEffects == nil || !slices.Contains(noSideEffectClasses, string(*w.sideEffects)) {
			o.requireNoSideEffects = false
		}
		if len(w.admissionReviewVersions) > 0 && !slices.ContainsFunc(w.admissionReviewVersions, func(v string) bool { return slices.Contains(acceptedReviewVersions, v) }) {
			o.requireRecognizedReviewVersion = false
		}
		if names[w.name] {
			o.requireUniqueWebhookNames = false
		}
		names[w.name] = true
		for _, sel := range []*metav1.LabelSelector{w.namespaceSelector, w.objectSelector} {
			if sel != nil && len(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
				o.allowInvalidLabelValues = true
			}
		}
		if o.ignoreMatchConditions && !equality.Semantic.DeepEqual(hooks[i].matchConditions, w.matchConditions) {
			o.ignoreMatchConditions = false
		}
	}
	return o
}

func validateWebhookConfiguration(m *metav1.ObjectMeta, hooks []webhook, mutating bool, o options) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(m, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	names := map[string]bool{}
	for i, w := range hooks {
		p := field.NewPath("webhooks").Index(i)
		allErrs = append(allErrs, validateWebhook(&w, mutating, o, p)...)
		allErrs = append(allErrs, validateReviewVersions(w.admissionReviewVersions, o.requireRecognizedReviewVersion, p.Child("admissionReviewVersions"))...)
		if o.requireUniqueWebhookNames && w.name != "" {
			if names[w.name] {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), w.name))
			}
			names[w.name] = true
		}
	}
	return allErrs
}

func validateWebhook(w *webhook, mutating bool, o options, fldPath *field.Path) field.ErrorList {
	allErrs := validation.IsFullyQualifiedName(fldPath.Child("name"), w.name)
	for i := range w.rules {
		allErrs = append(allErrs, validateRuleWithOperations(&w.rules[i], fldPath.Child("rules").Index(i))...)
	}
	if w.failurePolicy != nil && !slices.Contains(supportedFailurePolicies, string(*w.failurePolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("failurePolicy"), *w.failurePolicy, supportedFailurePolicies))
	}
	if w.matchPolicy != nil && !slices.Contains(supportedMatchPolicies, string(*w.matchPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("matchPolicy"), *w.matchPolicy, supportedMatchPolicies))
	}
	allowed := allSideEffectClasses
	if o.requireNoSideEffects {
		allowed = noSideEffectClasses
	}
	if w.sideEffects == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(allowed, ", "))))
	} else if !slices.Contains(allowed, string(*w.sideEffects)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("sideEffects"), *w.sideEffects, allowed))
	}
	if t := w.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: o.allowInvalidLabelValues}
	if w.namespaceSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(w.namespaceSelector, selOpts, fldPath.Child("namespaceSelector"))...)
	}
	if w.objectSelector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(w.objectSelector, selOpts, fldPath.Child("objectSelector"))...)
	}
	if mutating && w.reinvocationPolicy != nil && !slices.Contains(supportedReinvocation, string(*w.reinvocationPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("reinvocationPolicy"), *w.reinvocationPolicy, supportedReinvocation))
	}
	cc := w.clientConfig
	ccPath := fldPath.Child("clientConfig")
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		allErrs = append(allErrs, field.Required(ccPath, "exactly one of url or service is required"))
	case cc.URL != nil:
		allErrs = append(allErrs, webhookval.ValidateURL(ccPath.Child("url"), *cc.URL)...)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		allErrs = append(allErrs, webhookval.ValidateService(ccPath.Child("service"), cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port)...)
	}
	if !o.ignoreMatchConditions {
		allErrs = append(allErrs, validateMatchConditions(w.matchConditions, fldPath.Child("matchConditions"))...)
	}
	return allErrs
}

func validateReviewVersions(versions []string, requireRecognized bool, fldPath *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must specify one of %v", strings.Join(acceptedReviewVersions, ", ")))}
	}
	var allErrs field.ErrorList
	seen := map[string]bool{}
	recognized := false
	for i, v := range versions {
		if seen[v] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range validation.IsDNS1035Label(v) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), v, msg))
		}
		if slices.Contains(acceptedReviewVersions, v) {
			recognized = true
		}
	}
	if requireRecognized && !recognized {
		allErrs = append(allErrs, field.Invalid(fldPath, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedReviewVersions, ", "))))
	}
	return allErrs
}

func validateRuleWithOperations(r *admissionregistrationv1.RuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(r.Operations) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, admissionregistrationv1.OperationAll) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !slices.Contains(supportedOperations, string(op)) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("operations").Index(i), op, supportedOperations))
		}
	}
	return append(allErrs, validateRule(&r.Rule, fldPath)...)
}

func validateRule(r *admissionregistrationv1.Rule, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(r.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("apiVersions").Index(i), ""))
		}
	}
	allErrs = append(allErrs, validateResources(r.Resources, fldPath.Child("resources"))...)
	if r.Scope != nil && !slices.Contains(supportedScopes, string(*r.Scope)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scope"), *r.Scope, supportedScopes))
	}
	return allErrs
}

// validateResources: "x", "x/y", "x/*", "*/y", "*", "*/*" without
// combinations that another entry already covers.
func validateResources(resources []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, ""))
	}
	wildSub, wildRes := map[string]bool{}, map[string]bool{}
	double, single, plain := false, false, false
	for i, rs := range resources {
		if rs == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
			continue
		}
		if rs == "*/*" {
			double = true
		}
		if rs == "*" {
			single = true
		}
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			plain = rs != "*"
			continue
		}
		if wildSub[res] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if wildRes[sub] {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			wildSub[res] = true
		}
		if res == "*" {
			wildRes[sub] = true
		}
	}
	if len(resources) > 1 && double {
		allErrs = append(allErrs, field.Invalid(fldPath, resources, "if '*/*' is present, must not specify other resources"))
	}
	if single && plain {
		allErrs = append(allErrs, field.Invalid(fldPath, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return allErrs
}

// validateMatchConditions: at most 64, named by unique qualified names,
// with an expression (not compiled: skiff has no CEL yet).
func validateMatchConditions(conds []admissionregistrationv1.MatchCondition, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(conds) > maxMatchConditions {
		allErrs = append(allErrs, field.TooMany(fldPath, len(conds), maxMatchConditions))
	}
	names := map[string]bool{}
	for i, c := range conds {
		p := fldPath.Index(i)
		if expr := strings.TrimSpace(c.Expression); expr == "" {
			allErrs = append(allErrs, field.Required(p.Child("expression"), ""))
		} else {
			allErrs = appendCEL(allErrs, p.Child("expression"), expr, cel.BoolType)
		}
		if c.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			allErrs = append(allErrs, qualifiedName(c.Name, p.Child("name"))...)
			if names[c.Name] {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
			}
			names[c.Name] = true
		}
	}
	return allErrs
}

func qualifiedName(v string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(v) {
		allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
	}
	return allErrs
}

// --- admission policies -----------------------------------------------------

// ValidateValidatingAdmissionPolicy validates a new policy.
func ValidateValidatingAdmissionPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	return validateVAP(p, false)
}

// ValidateValidatingAdmissionPolicyUpdate validates an update; unchanged
// match conditions are not checked again.
func ValidateValidatingAdmissionPolicyUpdate(p, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	ignore := equality.Semantic.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) && equality.Semantic.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
	return append(allErrs, validateVAP(p, ignore)...)
}

func validateVAP(p *admissionregistrationv1.ValidatingAdmissionPolicy, ignoreMatchConditions bool) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&p.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := &p.Spec
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, validatePolicyCommon(spec.FailurePolicy, spec.ParamKind, spec.MatchConstraints, spec.MatchConditions, spec.Variables, ignoreMatchConditions, false, fldPath)...)
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("validations"), "validations or auditAnnotations must contain at least one item"))
		allErrs = append(allErrs, field.Required(fldPath.Child("auditAnnotations"), "validations or auditAnnotations must contain at least one item"))
		return allErrs
	}
	for i := range spec.Validations {
		allErrs = append(allErrs, validateValidation(&spec.Validations[i], fldPath.Child("validations").Index(i))...)
	}
	if len(spec.AuditAnnotations) > maxAuditAnnotations {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("auditAnnotations"), spec.AuditAnnotations, fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
	}
	keys := map[string]bool{}
	for i, a := range spec.AuditAnnotations {
		ap := fldPath.Child("auditAnnotations").Index(i)
		if p.Name != "" {
			allErrs = append(allErrs, qualifiedName(p.Name+"/"+a.Key, ap.Child("key"))...)
		} else {
			allErrs = append(allErrs, field.Invalid(ap.Child("key"), a.Key, "requires metadata.name be non-empty"))
		}
		switch v := strings.TrimSpace(a.ValueExpression); {
		case v == "":
			allErrs = append(allErrs, field.Required(ap.Child("valueExpression"), "valueExpression is not specified"))
		case len(v) > maxAuditAnnotationValueExpr:
			allErrs = append(allErrs, field.Required(ap.Child("valueExpression"), fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueExpr)))
		default:
			if err := checkCEL(ap.Child("valueExpression"), v, cel.StringType, cel.NullType); err != nil {
				err.BadValue = a.ValueExpression
				allErrs = append(allErrs, err)
			}
		}
		if keys[a.Key] {
			allErrs = append(allErrs, field.Duplicate(ap.Child("key"), a.Key))
		}
		keys[a.Key] = true
	}
	return allErrs
}

// validatePolicyCommon checks what both policy kinds share: failure
// policy, param kind, match constraints (with at least one resource rule;
// a mutating policy may not match DELETE), match conditions and variables.
func validatePolicyCommon(fp *admissionregistrationv1.FailurePolicyType, pk *admissionregistrationv1.ParamKind, mc *admissionregistrationv1.MatchResources,
	conds []admissionregistrationv1.MatchCondition, vars []admissionregistrationv1.Variable, ignoreMatchConditions, mutating bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if fp == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("failurePolicy"), ""))
	} else if !slices.Contains(supportedFailurePolicies, string(*fp)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("failurePolicy"), *fp, supportedFailurePolicies))
	}
	if pk != nil {
		allErrs = append(allErrs, validateParamKind(*pk, fldPath.Child("paramKind"))...)
	}
	if mc == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("matchConstraints"), ""))
	} else {
		allErrs = append(allErrs, validateMatchResources(mc, fldPath.Child("matchConstraints"))...)
		if len(mc.ResourceRules) == 0 {
			allErrs = append(allErrs, field.Required(fldPath.Child("matchConstraints", "resourceRules"), ""))
		}
		if mutating {
			for i, r := range mc.ResourceRules {
				for j, op := range r.Operations {
					if op == admissionregistrationv1.Delete {
						allErrs = append(allErrs, field.NotSupported(fldPath.Child("matchConstraints", "resourceRules").Index(i).Child("operations").Index(j),
							op, []string{"*", "CONNECT", "CREATE", "UPDATE"}))
					}
				}
			}
		}
	}
	if !ignoreMatchConditions {
		allErrs = append(allErrs, validateMatchConditions(conds, fldPath.Child("matchConditions"))...)
	}
	for i, v := range vars {
		vp := fldPath.Child("variables").Index(i)
		if strings.TrimSpace(v.Name) == "" {
			allErrs = append(allErrs, field.Required(vp.Child("name"), "name is not specified"))
		} else if !isCELIdentifier(v.Name) {
			allErrs = append(allErrs, field.Invalid(vp.Child("name"), v.Name, "name is not a valid CEL identifier"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			allErrs = append(allErrs, field.Required(vp.Child("expression"), "expression is not specified"))
		} else {
			allErrs = appendCEL(allErrs, vp.Child("expression"), v.Expression)
		}
	}
	return allErrs
}

var newline = regexp.MustCompile(`[\n\r]+`)

func validateValidation(v *admissionregistrationv1.Validation, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("expression"), "expression is not specified"))
	} else {
		allErrs = appendCEL(allErrs, fldPath.Child("expression"), v.Expression, cel.BoolType)
	}
	if v.MessageExpression != "" && strings.TrimSpace(v.MessageExpression) == "" {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	} else if v.MessageExpression != "" {
		allErrs = appendCEL(allErrs, fldPath.Child("messageExpression"), v.MessageExpression, cel.StringType)
	}
	msg := strings.TrimSpace(v.Message)
	if v.Message != "" && msg == "" {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("message"), v.Message, "message must be non-empty if specified"))
	} else if newline.MatchString(msg) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("message"), v.Message, "message must not contain line breaks"))
	}
	if v.Reason != nil && !slices.Contains(supportedReasons, string(*v.Reason)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("reason"), *v.Reason, supportedReasons))
	}
	return allErrs
}

func validateParamKind(pk admissionregistrationv1.ParamKind, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	avp := fldPath.Child("apiVersion")
	if pk.APIVersion == "" {
		allErrs = append(allErrs, field.Required(avp, ""))
	} else if strings.Count(pk.APIVersion, "/") > 1 {
		allErrs = append(allErrs, field.Invalid(avp, pk.APIVersion, "unexpected GroupVersion string: "+pk.APIVersion))
	} else if pk.APIVersion != "/" {
		group, version, ok := strings.Cut(pk.APIVersion, "/")
		if !ok {
			group, version = "", pk.APIVersion
		}
		if group != "" {
			if errs := validation.IsDNS1123Subdomain(group); len(errs) > 0 {
				allErrs = append(allErrs, field.Invalid(avp, group, strings.Join(errs, ",")))
			}
		}
		if version == "" {
			allErrs = append(allErrs, field.Invalid(avp, pk.APIVersion, "version must be specified"))
		} else if errs := validation.IsDNS1035Label(version); len(errs) > 0 {
			allErrs = append(allErrs, field.Invalid(avp, version, strings.Join(errs, ",")))
		}
	}
	if pk.Kind == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("kind"), ""))
	} else if errs := validation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(errs) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(errs, ",")))
	}
	return allErrs
}

func validateMatchResources(mc *admissionregistrationv1.MatchResources, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if mc == nil {
		return nil
	}
	if mc.MatchPolicy == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("matchPolicy"), ""))
	} else if !slices.Contains(supportedMatchPolicies, string(*mc.MatchPolicy)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("matchPolicy"), *mc.MatchPolicy, supportedMatchPolicies))
	}
	for _, s := range []struct {
		name string
		sel  *metav1.LabelSelector
	}{{"namespaceSelector", mc.NamespaceSelector}, {"objectSelector", mc.ObjectSelector}} {
		if s.sel == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child(s.name), ""))
		} else {
			allErrs = append(allErrs, metav1validation.ValidateLabelSelector(s.sel, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child(s.name))...)
		}
	}
	for i := range mc.ResourceRules {
		allErrs = append(allErrs, validateNamedRule(&mc.ResourceRules[i], fldPath.Child("resourceRules").Index(i))...)
	}
	for i := range mc.ExcludeResourceRules {
		allErrs = append(allErrs, validateNamedRule(&mc.ExcludeResourceRules[i], fldPath.Child("excludeResourceRules").Index(i))...)
	}
	return allErrs
}

func validateNamedRule(n *admissionregistrationv1.NamedRuleWithOperations, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	for i, name := range n.ResourceNames {
		for _, msg := range path.ValidatePathSegmentName(name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("resourceNames").Index(i), name, msg))
		}
		if seen[name] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("resourceNames").Index(i), name))
		}
		seen[name] = true
	}
	return append(allErrs, validateRuleWithOperations(&n.RuleWithOperations, fldPath)...)
}

// ValidateValidatingAdmissionPolicyStatusUpdate validates the status: type
// checking warnings and conditions.
func ValidateValidatingAdmissionPolicyStatusUpdate(p, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st := field.NewPath("status")
	if tc := p.Status.TypeChecking; tc != nil {
		for i, w := range tc.ExpressionWarnings {
			wp := st.Child("typeChecking", "expressionWarnings").Index(i)
			if w.Warning == "" {
				allErrs = append(allErrs, field.Required(wp.Child("warning"), ""))
			}
			if strings.TrimSpace(w.FieldRef) == "" {
				allErrs = append(allErrs, field.Required(wp.Child("fieldRef"), ""))
			}
		}
	}
	return append(allErrs, metav1validation.ValidateConditions(p.Status.Conditions, st.Child("conditions"))...)
}

// ValidateValidatingAdmissionPolicyBinding validates a binding.
func ValidateValidatingAdmissionPolicyBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&b.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, validateBindingCommon(b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources, fldPath)...)
	return append(allErrs, validateValidationActions(b.Spec.ValidationActions, fldPath.Child("validationActions"))...)
}

// ValidateValidatingAdmissionPolicyBindingUpdate validates the new binding.
func ValidateValidatingAdmissionPolicyBindingUpdate(b, old *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateValidatingAdmissionPolicyBinding(b)...)
}

func validateBindingCommon(policy string, pr *admissionregistrationv1.ParamRef, mr *admissionregistrationv1.MatchResources, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if policy == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("policyName"), ""))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(policy, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("policyName"), policy, msg))
		}
	}
	allErrs = append(allErrs, validateParamRef(pr, fldPath.Child("paramRef"))...)
	// upstream's path carries this spelling
	return append(allErrs, validateMatchResources(mr, fldPath.Child("matchResouces"))...)
}

func validateParamRef(pr *admissionregistrationv1.ParamRef, fldPath *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var allErrs field.ErrorList
	if pr.Name != "" {
		for _, msg := range path.ValidatePathSegmentName(pr.Name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("name"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
		if pr.Name != "" {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("selector"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		allErrs = append(allErrs, field.Required(fldPath, `one of name or selector must be specified`))
	}
	if a := pr.ParameterNotFoundAction; a == nil || *a == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("parameterNotFoundAction"), ""))
	} else if *a != admissionregistrationv1.DenyAction && *a != admissionregistrationv1.AllowAction {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("parameterNotFoundAction"), *a, []string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return allErrs
}

func validateValidationActions(va []admissionregistrationv1.ValidationAction, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[admissionregistrationv1.ValidationAction]bool{}
	for i, a := range va {
		if !slices.Contains(validationActions, string(a)) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Index(i), a, validationActions))
		}
		if seen[a] {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), a))
		}
		seen[a] = true
	}
	if seen[admissionregistrationv1.Deny] && seen[admissionregistrationv1.Warn] {
		allErrs = append(allErrs, field.Invalid(fldPath, va, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "at least one validation action is required"))
	}
	return allErrs
}

// ValidateMutatingAdmissionPolicy validates a new mutating policy.
func ValidateMutatingAdmissionPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	return validateMAP(p, false)
}

// ValidateMutatingAdmissionPolicyUpdate validates an update.
func ValidateMutatingAdmissionPolicyUpdate(p, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	ignore := equality.Semantic.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) && equality.Semantic.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
	return append(allErrs, validateMAP(p, ignore)...)
}

func validateMAP(p *admissionregistrationv1.MutatingAdmissionPolicy, ignoreMatchConditions bool) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&p.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := &p.Spec
	fldPath := field.NewPath("spec")
	allErrs = append(allErrs, validatePolicyCommon(spec.FailurePolicy, spec.ParamKind, spec.MatchConstraints, spec.MatchConditions, spec.Variables, ignoreMatchConditions, true, fldPath)...)
	if len(spec.Mutations) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		allErrs = append(allErrs, validateMutation(&spec.Mutations[i], fldPath.Child("mutations").Index(i))...)
	}
	rp := fldPath.Child("reinvocationPolicy")
	if spec.ReinvocationPolicy == "" {
		allErrs = append(allErrs, field.Required(rp, ""))
	} else if !slices.Contains(supportedReinvocation, string(spec.ReinvocationPolicy)) {
		allErrs = append(allErrs, field.NotSupported(rp, spec.ReinvocationPolicy, supportedReinvocation))
	}
	return allErrs
}

func validateMutation(m *admissionregistrationv1.Mutation, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	ac, jp := fldPath.Child("applyConfiguration"), fldPath.Child("jsonPatch")
	switch m.PatchType {
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			allErrs = append(allErrs, field.Required(ac, "applyConfiguration field is required when patchType is 'ApplyConfiguration'"))
		} else if strings.TrimSpace(m.ApplyConfiguration.Expression) == "" {
			allErrs = append(allErrs, field.Required(ac.Child("expression"), ""))
		} else {
			allErrs = appendCEL(allErrs, ac.Child("expression"), m.ApplyConfiguration.Expression)
		}
		if m.JSONPatch != nil {
			allErrs = append(allErrs, field.Forbidden(jp, "must not be specified when patchType is ApplyConfiguration"))
		}
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			allErrs = append(allErrs, field.Required(jp, "jsonPatch field is required when patchType is 'JSONPatch'"))
		} else if strings.TrimSpace(m.JSONPatch.Expression) == "" {
			allErrs = append(allErrs, field.Required(jp.Child("expression"), ""))
		} else {
			allErrs = appendCEL(allErrs, jp.Child("expression"), m.JSONPatch.Expression)
		}
		if m.ApplyConfiguration != nil {
			allErrs = append(allErrs, field.Forbidden(ac, "must not be specified when patchType is JSONPatch"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("patchType"), m.PatchType, patchTypes))
	}
	return allErrs
}

// ValidateMutatingAdmissionPolicyBinding validates a binding.
func ValidateMutatingAdmissionPolicyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&b.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateBindingCommon(b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources, field.NewPath("spec"))...)
}

// ValidateMutatingAdmissionPolicyBindingUpdate validates the new binding.
func ValidateMutatingAdmissionPolicyBindingUpdate(b, old *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateMutatingAdmissionPolicyBinding(b)...)
}

var (
	celIdent    = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)
	celReserved = []string{"as", "break", "const", "continue", "else", "false", "for", "function", "if", "import", "in", "let",
		"loop", "namespace", "null", "package", "return", "true", "var", "void", "while"}
)

func isCELIdentifier(name string) bool {
	return celIdent.MatchString(name) && !slices.Contains(celReserved, name)
}
