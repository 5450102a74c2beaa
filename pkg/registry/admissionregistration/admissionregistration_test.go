package admissionregistration

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

func TestDefaultWebhooks(t *testing.T) {
	c := &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{
		Name:         "a.example.com",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s", Namespace: "n"}},
		Rules:        []admissionregistrationv1.RuleWithOperations{{}},
	}}}
	DefaultMutatingWebhookConfiguration(c)
	w := c.Webhooks[0]
	if *w.FailurePolicy != "Fail" || *w.MatchPolicy != "Equivalent" || w.NamespaceSelector == nil || w.ObjectSelector == nil ||
		*w.TimeoutSeconds != 10 || *w.ReinvocationPolicy != "Never" || *w.Rules[0].Scope != "*" || *w.ClientConfig.Service.Port != 443 {
		t.Errorf("defaults: %+v", w)
	}
	if w.SideEffects != nil || w.AdmissionReviewVersions != nil {
		t.Errorf("sideEffects and admissionReviewVersions have no v1 default: %+v", w)
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{TimeoutSeconds: new(int32(3))}}}
	DefaultValidatingWebhookConfiguration(v)
	if *v.Webhooks[0].TimeoutSeconds != 3 || *v.Webhooks[0].FailurePolicy != "Fail" {
		t.Errorf("validating defaults: %+v", v.Webhooks[0])
	}
}

func validWebhookConfig() *admissionregistrationv1.ValidatingWebhookConfiguration {
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "policy", ResourceVersion: "1"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "check.example.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "hook", Namespace: "default", Path: new("/validate")}},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "pods/status"}}}},
			SideEffects:             new(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	DefaultValidatingWebhookConfiguration(c)
	return c
}

func TestValidateWebhookConfiguration(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*admissionregistrationv1.ValidatingWebhook)
		want   []string
		msg    string
	}{
		{name: "valid", mutate: func(*admissionregistrationv1.ValidatingWebhook) {}},
		{name: "url", mutate: func(w *admissionregistrationv1.ValidatingWebhook) {
			w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: new("https://hook.example.com/v")}
		}},
		{name: "name not qualified", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.Name = "check" },
			want: []string{"webhooks[0].name: Invalid value"}},
		{name: "sideEffects missing", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.SideEffects = nil },
			want: []string{"webhooks[0].sideEffects: Required value"}, msg: "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"},
		{name: "sideEffects Some", mutate: func(w *admissionregistrationv1.ValidatingWebhook) {
			w.SideEffects = new(admissionregistrationv1.SideEffectClassSome)
		},
			want: []string{"webhooks[0].sideEffects: Unsupported value"}},
		{name: "review versions missing", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.AdmissionReviewVersions = nil },
			want: []string{"webhooks[0].admissionReviewVersions: Required value"}, msg: "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"},
		{name: "unknown review version", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.AdmissionReviewVersions = []string{"v2"} },
			want: []string{"webhooks[0].admissionReviewVersions: Invalid value"}},
		{name: "timeout", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.TimeoutSeconds = new(int32(31)) },
			want: []string{"webhooks[0].timeoutSeconds: Invalid value"}, msg: "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"},
		{name: "both url and service", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.ClientConfig.URL = new("https://x.example.com") },
			want: []string{"webhooks[0].clientConfig: Required value"}},
		{name: "http url", mutate: func(w *admissionregistrationv1.ValidatingWebhook) {
			w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: new("http://hook.example.com?a=b")}
		}, want: []string{"webhooks[0].clientConfig.url: Invalid value", "webhooks[0].clientConfig.url: Invalid value"}},
		{name: "service path", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.ClientConfig.Service.Path = new("validate") },
			want: []string{"webhooks[0].clientConfig.service.path: Invalid value"}},
		{name: "service port", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.ClientConfig.Service.Port = new(int32(0)) },
			want: []string{"webhooks[0].clientConfig.service.port: Invalid value"}},
		{name: "bad failure policy", mutate: func(w *admissionregistrationv1.ValidatingWebhook) {
			w.FailurePolicy = new(admissionregistrationv1.FailurePolicyType("Retry"))
		}, want: []string{"webhooks[0].failurePolicy: Unsupported value"}},
		{name: "rule without operations", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.Rules[0].Operations = nil },
			want: []string{"webhooks[0].rules[0].operations: Required value"}},
		{name: "wildcard with others", mutate: func(w *admissionregistrationv1.ValidatingWebhook) { w.Rules[0].Resources = []string{"*/*", "pods"} },
			want: []string{"webhooks[0].rules[0].resources: Invalid value"}},
		{name: "subresource covered", mutate: func(w *admissionregistrationv1.ValidatingWebhook) {
			w.Rules[0].Resources = []string{"pods/*", "pods/status"}
		},
			want: []string{"webhooks[0].rules[0].resources[1]: Invalid value"}},
		{name: "bad scope", mutate: func(w *admissionregistrationv1.ValidatingWebhook) {
			w.Rules[0].Scope = new(admissionregistrationv1.ScopeType("Global"))
		},
			want: []string{"webhooks[0].rules[0].scope: Unsupported value"}},
		{name: "match condition without expression", mutate: func(w *admissionregistrationv1.ValidatingWebhook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "ok"}}
		}, want: []string{"webhooks[0].matchConditions[0].expression: Required value"}},
		{name: "bad selector", mutate: func(w *admissionregistrationv1.ValidatingWebhook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b c"}}
		}, want: []string{"webhooks[0].namespaceSelector.matchLabels: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validWebhookConfig()
			tt.mutate(&c.Webhooks[0])
			errs := ValidateValidatingWebhookConfiguration(c)
			registrytest.ExpectErrors(t, errs, tt.want...)
			if tt.msg != "" && (len(errs) == 0 || errs[0].Error() != tt.msg) {
				t.Errorf("got %v, want %q", errs, tt.msg)
			}
		})
	}
	dup := validWebhookConfig()
	dup.Webhooks = append(dup.Webhooks, dup.Webhooks[0])
	registrytest.ExpectErrors(t, ValidateValidatingWebhookConfiguration(dup), "webhooks[1].name: Duplicate value")

	// Ratcheting: a stored webhook with side effects stays updatable.
	old := validWebhookConfig()
	old.Webhooks[0].SideEffects = new(admissionregistrationv1.SideEffectClassSome)
	upd := old.DeepCopy()
	upd.Labels = map[string]string{"a": "b"}
	registrytest.ExpectErrors(t, ValidateValidatingWebhookConfigurationUpdate(upd, old))
	registrytest.ExpectErrors(t, ValidateValidatingWebhookConfiguration(upd), "webhooks[0].sideEffects: Unsupported value")
}

func TestValidateMutatingWebhookReinvocation(t *testing.T) {
	c := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Webhooks: []admissionregistrationv1.MutatingWebhook{{
		Name: "m.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: new("https://m.example.com")},
		SideEffects: new(admissionregistrationv1.SideEffectClassNoneOnDryRun), AdmissionReviewVersions: []string{"v1beta1"},
		ReinvocationPolicy: new(admissionregistrationv1.ReinvocationPolicyType("Always")),
	}}}
	DefaultMutatingWebhookConfiguration(c)
	registrytest.ExpectErrors(t, ValidateMutatingWebhookConfiguration(c), "webhooks[0].reinvocationPolicy: Unsupported value")
}

func matchAll() *admissionregistrationv1.MatchResources {
	m := &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE", "UPDATE"},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}}
	defaultMatchResources(m)
	return m
}

func TestValidateValidatingAdmissionPolicy(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*admissionregistrationv1.ValidatingAdmissionPolicy)
		want   []string
	}{
		{name: "valid", mutate: func(*admissionregistrationv1.ValidatingAdmissionPolicy) {}},
		{name: "no validations", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.Validations = nil },
			want: []string{"spec.validations: Required value", "spec.auditAnnotations: Required value"}},
		{name: "audit annotation only", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations = nil
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "replicas", ValueExpression: "string(object.spec.replicas)"}}
		}},
		{name: "no match constraints", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.MatchConstraints = nil },
			want: []string{"spec.matchConstraints: Required value"}},
		{name: "no resource rules", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules = nil
		},
			want: []string{"spec.matchConstraints.resourceRules: Required value"}},
		{name: "empty expression", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.Validations[0].Expression = " " },
			want: []string{"spec.validations[0].expression: Required value"}},
		{name: "multi-line message", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.Validations[0].Message = "a\nb" },
			want: []string{"spec.validations[0].message: Invalid value"}},
		{name: "bad reason", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Reason = new(metav1.StatusReasonNotFound)
		}, want: []string{"spec.validations[0].reason: Unsupported value"}},
		{name: "param kind without version", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "example.com/", Kind: "Config"}
		}, want: []string{"spec.paramKind.apiVersion: Invalid value"}},
		{name: "variable not an identifier", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "in", Expression: "1"}}
		}, want: []string{"spec.variables[0].name: Invalid value"}},
		{name: "duplicate audit key", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "k", ValueExpression: "'a'"}, {Key: "k", ValueExpression: "'b'"}}
		}, want: []string{"spec.auditAnnotations[1].key: Duplicate value"}},
		{name: "failure policy unset", mutate: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.FailurePolicy = nil },
			want: []string{"spec.failurePolicy: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "replicas"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: matchAll(), Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}}}}
			DefaultValidatingAdmissionPolicy(p)
			tt.mutate(p)
			registrytest.ExpectErrors(t, ValidateValidatingAdmissionPolicy(p), tt.want...)
		})
	}
}

func TestValidateBindings(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec)
		want   []string
		msg    string
	}{
		{name: "valid", mutate: func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {}},
		{name: "no policy", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.PolicyName = "" },
			want: []string{"spec.policyName: Required value"}},
		{name: "no actions", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) { s.ValidationActions = nil },
			want: []string{"spec.validationActions: Required value"}},
		{name: "deny and warn", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ValidationActions = []admissionregistrationv1.ValidationAction{"Deny", "Warn"}
		}, want: []string{"spec.validationActions: Invalid value"}},
		{name: "param ref name and selector", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef = &admissionregistrationv1.ParamRef{Name: "p", Selector: &metav1.LabelSelector{}, ParameterNotFoundAction: new(admissionregistrationv1.DenyAction)}
		}, want: []string{"spec.paramRef.name: Forbidden", "spec.paramRef.selector: Forbidden"}},
		{name: "param ref without action", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef = &admissionregistrationv1.ParamRef{Name: "p"}
		}, want: []string{"spec.paramRef.parameterNotFoundAction: Required value"}},
		{name: "match resources keep upstream's path", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources = &admissionregistrationv1.MatchResources{}
		}, want: []string{"spec.matchResouces.matchPolicy: Required value", "spec.matchResouces.namespaceSelector: Required value", "spec.matchResouces.objectSelector: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replicas", ValidationActions: []admissionregistrationv1.ValidationAction{"Deny"}}}
			tt.mutate(&b.Spec)
			registrytest.ExpectErrors(t, ValidateValidatingAdmissionPolicyBinding(b), tt.want...)
		})
	}
	mb := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	registrytest.ExpectErrors(t, ValidateMutatingAdmissionPolicyBinding(mb), "spec.policyName: Required value")
}

func TestValidateMutatingAdmissionPolicy(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*admissionregistrationv1.MutatingAdmissionPolicySpec)
		want   []string
	}{
		{name: "valid", mutate: func(*admissionregistrationv1.MutatingAdmissionPolicySpec) {}},
		{name: "no mutations", mutate: func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) { s.Mutations = nil },
			want: []string{"spec.mutations: Required value"}},
		{name: "no reinvocation policy", mutate: func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) { s.ReinvocationPolicy = "" },
			want: []string{"spec.reinvocationPolicy: Required value"}},
		{name: "json patch missing", mutate: func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) { s.Mutations[0].PatchType = "JSONPatch" },
			want: []string{"spec.mutations[0].jsonPatch: Required value", "spec.mutations[0].applyConfiguration: Forbidden"}},
		{name: "unknown patch type", mutate: func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) { s.Mutations[0].PatchType = "Merge" },
			want: []string{"spec.mutations[0].patchType: Unsupported value"}},
		{name: "matches delete", mutate: func(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{"DELETE"}
		}, want: []string{"spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "sa"}, Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
				MatchConstraints: matchAll(), ReinvocationPolicy: "Never",
				Mutations: []admissionregistrationv1.Mutation{{PatchType: "ApplyConfiguration",
					ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{spec: Object.spec{paused: true}}`}}}}}
			DefaultMutatingAdmissionPolicy(p)
			tt.mutate(&p.Spec)
			registrytest.ExpectErrors(t, ValidateMutatingAdmissionPolicy(p), tt.want...)
		})
	}
}

// CEL: syntax errors are refused with upstream's "compilation failed"
// message, results of a definitely wrong type too; what this environment
// cannot type (upstream's libraries, typed request fields) is accepted.
func TestCELExpressions(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)
		want   []string
		msg    string
	}{
		{name: "typed request field", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].Expression = "request.dryRun"
		}},
		{name: "upstream library function", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].Expression = "isURL(object.spec.url) && authorizer.group('apps').resource('deployments').check('get').allowed()"
		}},
		{name: "syntax error", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].Expression = "object.spec.replicas <="
		}, want: []string{"spec.validations[0].expression: Invalid value"},
			msg: "spec.validations[0].expression: Invalid value: \"object.spec.replicas <=\": compilation failed: ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' expecting"},
		{name: "not a bool", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations[0].Expression = "'yes'" },
			want: []string{"spec.validations[0].expression: Invalid value"}, msg: `spec.validations[0].expression: Invalid value: "'yes'": must evaluate to bool`},
		{name: "message expression not a string", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].MessageExpression = "1 + 2"
		}, want: []string{"spec.validations[0].messageExpression: Invalid value"}, msg: `spec.validations[0].messageExpression: Invalid value: "1 + 2": must evaluate to string`},
		{name: "audit annotation value", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: "true"}, {Key: "b", ValueExpression: "null"}}
		}, want: []string{"spec.auditAnnotations[0].valueExpression: Invalid value"},
			msg: `spec.auditAnnotations[0].valueExpression: Invalid value: "true": must evaluate to one of [string null_type]`},
		{name: "match condition syntax", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "object.(x"}}
		}, want: []string{"spec.matchConditions[0].expression: Invalid value"}},
		{name: "variable syntax", mutate: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []admissionregistrationv1.Variable{{Name: "v", Expression: "[1,"}}
		}, want: []string{"spec.variables[0].expression: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "replicas"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: matchAll(), Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}}}}
			DefaultValidatingAdmissionPolicy(p)
			tt.mutate(&p.Spec)
			errs := ValidateValidatingAdmissionPolicy(p)
			registrytest.ExpectErrors(t, errs, tt.want...)
			if tt.msg != "" && (len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), tt.msg)) {
				t.Errorf("got %v\nwant prefix %q", errs, tt.msg)
			}
		})
	}
	// Webhook match conditions and mutations are parsed too.
	c := validWebhookConfig()
	c.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "'x'"}}
	registrytest.ExpectErrors(t, ValidateValidatingWebhookConfiguration(c), "webhooks[0].matchConditions[0].expression: Invalid value")
	m := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConstraints: matchAll(), ReinvocationPolicy: "Never",
		Mutations: []admissionregistrationv1.Mutation{{PatchType: "JSONPatch", JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "[JSONPatch{op: "}}}}}
	DefaultMutatingAdmissionPolicy(m)
	registrytest.ExpectErrors(t, ValidateMutatingAdmissionPolicy(m), "spec.mutations[0].jsonPatch.expression: Invalid value")
}

func TestMarkTypeChecked(t *testing.T) {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	warn := func(*admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
		return []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[0].expression", Warning: "w"}}
	}
	if !MarkTypeChecked(p, nil) || p.Status.ObservedGeneration != 2 || p.Status.TypeChecking == nil {
		t.Fatalf("status = %+v", p.Status)
	}
	if MarkTypeChecked(p, warn) {
		t.Errorf("unchanged policy marked again")
	}
	p.Generation = 3
	if !MarkTypeChecked(p, warn) || p.Status.ObservedGeneration != 3 || len(p.Status.TypeChecking.ExpressionWarnings) != 1 {
		t.Errorf("new generation not observed: %+v", p.Status)
	}
}
