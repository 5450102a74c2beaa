package policy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// fakeGetter serves objects by resource, namespace and name.
type fakeGetter map[schema.GroupResource][]runtime.Object

func (g fakeGetter) Get(_ context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error) {
	for _, o := range g[gr] {
		m := o.(metav1.Object)
		if m.GetNamespace() == ns && m.GetName() == name {
			return o, nil
		}
	}
	return nil, apierrors.NewNotFound(gr, name)
}

func (g fakeGetter) GetConsistent(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error) {
	return g.Get(ctx, gr, ns, name)
}

func (g fakeGetter) List(_ context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, o := range g[gr] {
		if ns == "" || o.(metav1.Object).GetNamespace() == ns {
			out = append(out, o)
		}
	}
	return out, nil
}

func (g fakeGetter) ListConsistent(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	return g.List(ctx, gr, ns)
}

var deploymentsV1 = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func vap(name string, validations []admissionregistrationv1.Validation, mutate func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	fail := admissionregistrationv1.Fail
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID(name), ResourceVersion: "1"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				},
			}}},
			Validations: validations,
		},
	}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

func vapb(name, policy string, actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: actions},
	}
}

func deploymentAttrs(replicas int32, user *authenticationv1.UserInfo) *admission.Attributes {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
	return &admission.Attributes{
		Operation: admission.Create, Resource: deploymentsV1.GroupResource(), Kind: schema.GroupKind{Group: "apps", Kind: "Deployment"},
		Namespace: "ns", Name: "web", Object: d, RequestResource: deploymentsV1,
		RequestKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, UserInfo: user,
	}
}

func newValidatingFor(az authorizer.Authorizer, objs ...runtime.Object) *Validating {
	g := fakeGetter{{Resource: "namespaces"}: {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"env": "prod"}}}}}
	for _, o := range objs {
		switch o.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			g[grVAP] = append(g[grVAP], o)
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			g[grVAPB] = append(g[grVAPB], o)
		}
	}
	return NewValidating(Config{Getter: g, Authorizer: az})
}

// Validate's outcomes for one request: the error (empty: admitted),
// warnings and audit annotations.
func TestValidatingOutcomes(t *testing.T) {
	replicas := []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}}
	denyAll := authorizer.Func(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionNoOpinion, "no RBAC rule", nil
	})
	for _, tt := range []struct {
		name        string
		objs        []runtime.Object
		az          authorizer.Authorizer
		replicas    int32
		wantErr     string
		wantCode    int32
		wantWarn    []string
		annotations map[string]string
	}{
		{name: "deny", objs: []runtime.Object{vap("p", replicas, nil), vapb("b", "p", admissionregistrationv1.Deny)}, replicas: 6,
			wantErr: `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: object.spec.replicas <= 5`, wantCode: 422},
		{name: "admit", objs: []runtime.Object{vap("p", replicas, nil), vapb("b", "p", admissionregistrationv1.Deny)}, replicas: 5},
		{name: "policy without binding does nothing", objs: []runtime.Object{vap("p", replicas, nil)}, replicas: 6},
		{name: "warn and audit", objs: []runtime.Object{vap("p", replicas, nil), vapb("b", "p", admissionregistrationv1.Warn, admissionregistrationv1.Audit)}, replicas: 6,
			wantWarn:    []string{"Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': failed expression: object.spec.replicas <= 5"},
			annotations: map[string]string{"validation.policy.admission.k8s.io/validation_failure": `[{"binding":"b","expressionIndex":0,"message":"failed expression: object.spec.replicas \u003c= 5","policy":"p","validationActions":["Warn","Audit"]}]`}},
		{name: "audit annotations", objs: []runtime.Object{vap("p", replicas, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{
				{Key: "high-replicas", ValueExpression: "object.spec.replicas > 3 ? 'replicas ' + string(object.spec.replicas) : ''"},
				{Key: "empty", ValueExpression: "' '"},
				{Key: "null", ValueExpression: "dyn(null)"},
			}
		}), vapb("b1", "p", admissionregistrationv1.Deny), vapb("b2", "p", admissionregistrationv1.Deny)}, replicas: 4,
			annotations: map[string]string{"p/high-replicas": "replicas 4"}},
		{name: "reason Forbidden", objs: []runtime.Object{vap("p", []admissionregistrationv1.Validation{{Expression: "false", Message: "no", Reason: ptr(metav1.StatusReasonForbidden)}}, nil), vapb("b", "p", admissionregistrationv1.Deny)},
			wantErr: `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no`, wantCode: 403},
		{name: "authorizer", az: denyAll, objs: []runtime.Object{vap("p", []admissionregistrationv1.Validation{{
			Expression:        "authorizer.group('').resource('secrets').namespace('ns').check('get').allowed()",
			MessageExpression: "'not allowed: ' + authorizer.group('').resource('secrets').namespace('ns').check('get').reason()",
		}}, nil), vapb("b", "p", admissionregistrationv1.Deny)},
			wantErr: `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: not allowed: no RBAC rule`, wantCode: 422},
		{name: "per-call cost limit", objs: []runtime.Object{vap("p", []admissionregistrationv1.Validation{{
			Expression: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))",
		}}, nil), vapb("b", "p", admissionregistrationv1.Deny)},
			wantErr: "resulted in error: operation cancelled: actual cost limit exceeded", wantCode: 422},
		{name: "variable compile error", objs: []runtime.Object{vap("p", []admissionregistrationv1.Validation{{Expression: "variables.bad"}}, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []admissionregistrationv1.Variable{{Name: "bad", Expression: "object.spec.("}}
		}), vapb("b", "p", admissionregistrationv1.Deny)},
			wantErr: `expression 'variables.bad' resulted in error: composited variable "bad" fails to compile: compilation failed`, wantCode: 422},
		{name: "namespaceObject and namespace selector", objs: []runtime.Object{vap("p", []admissionregistrationv1.Validation{{Expression: "namespaceObject.metadata.labels.env != 'prod'"}}, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
		}), vapb("b", "p", admissionregistrationv1.Deny)},
			wantErr: "failed expression: namespaceObject.metadata.labels.env != 'prod'", wantCode: 422},
		{name: "request is typed", objs: []runtime.Object{vap("p", []admissionregistrationv1.Validation{{Expression: "request.nope == 'x'"}}, nil), vapb("b", "p", admissionregistrationv1.Deny)},
			wantErr: `denied request: compilation error: compilation failed: ERROR: <input>:1:8: undefined field 'nope'`, wantCode: 422},
		{name: "namespaceObject is typed", objs: []runtime.Object{vap("p", []admissionregistrationv1.Validation{{Expression: "namespaceObject.spec.nope == 'x'"}}, nil), vapb("b", "p", admissionregistrationv1.Deny)},
			wantErr: `undefined field 'nope'`, wantCode: 422},
		{name: "request fields", objs: []runtime.Object{vap("p", []admissionregistrationv1.Validation{{
			Expression: "request.operation == 'CREATE' && request.kind.kind == 'Deployment' && request.requestResource.resource == 'deployments' && " +
				"request.userInfo.username == 'alice' && request.name == 'web' && request.namespace == 'ns' && !request.dryRun && !has(request.subResource)",
		}}, nil), vapb("b", "p", admissionregistrationv1.Deny)}},
		{name: "unknown paramKind", objs: []runtime.Object{vap("p", replicas, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Limits"}
		}), vapb("b", "p", admissionregistrationv1.Deny)},
			wantErr: `ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Limits'`, wantCode: 422},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := newValidatingFor(tt.az, tt.objs...)
			v.cfg.Resources = noResources{}
			a := deploymentAttrs(tt.replicas, &authenticationv1.UserInfo{Username: "alice"})
			var warnings []string
			ctx := admission.WithWarnings(context.Background(), func(s string) { warnings = append(warnings, s) })
			err := v.Validate(ctx, a)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			case tt.wantErr != "":
				if st := err.(*apierrors.StatusError); st.ErrStatus.Code != tt.wantCode {
					t.Errorf("code %d, want %d", st.ErrStatus.Code, tt.wantCode)
				}
			}
			if strings.Join(warnings, "|") != strings.Join(tt.wantWarn, "|") {
				t.Errorf("warnings %q, want %q", warnings, tt.wantWarn)
			}
			got, _ := json.Marshal(a.Annotations())
			want, _ := json.Marshal(tt.annotations)
			if tt.annotations == nil {
				want = []byte("{}")
			}
			if string(got) != string(want) {
				t.Errorf("annotations %s, want %s", got, want)
			}
		})
	}
}

type noResources struct{}

func (noResources) ResourceFor(schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	return schema.GroupVersionResource{}, false, false
}

func (noResources) ToVersion(obj runtime.Object, _ schema.GroupVersionResource) (runtime.Object, error) {
	return obj, nil
}

func ptr[T any](v T) *T { return &v }

// Object values built by ApplyConfiguration expressions name their field
// path, as upstream checks.
func TestApplyConfigurationTypeNames(t *testing.T) {
	for _, tt := range []struct {
		expr, wantErr string
	}{
		{`Object{spec: Object.spec{replicas: 3}}`, ""},
		{`Object{spec: Object.spec{template: Object.spec.template{metadata: Object.spec.template.metadata{labels: {"a": "b"}}}}}`, ""},
		{`Object{spec: Object.specc{replicas: 3}}`, `unexpected type name "Object.specc", expected "Object.spec", which matches field name path from root Object type`},
	} {
		p := compile(envKey{patchTypes: true}, tt.expr, cel.ObjectType("Object"))
		if p.err != nil {
			t.Fatalf("%s: %v", tt.expr, p.err)
		}
		val, _, err := p.prog.Eval(map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		o := val.(*objectVal)
		errs := checkTypeNames(o, []string{o.typeName})
		if tt.wantErr == "" && len(errs) > 0 || tt.wantErr != "" && (len(errs) != 1 || errs[0].Error() != tt.wantErr) {
			t.Errorf("%s: errors %v, want %q", tt.expr, errs, tt.wantErr)
		}
	}
}

// A delete is validated with object null and oldObject the stored object;
// the denial names the request's name.
func TestValidatingDelete(t *testing.T) {
	v := newValidatingFor(nil, vap("p", []admissionregistrationv1.Validation{{
		Expression:        "object == null && request.operation == 'DELETE' && (!has(oldObject.metadata.labels) || !('protected' in oldObject.metadata.labels))",
		MessageExpression: "'protected: ' + oldObject.metadata.name",
	}}, nil), vapb("b", "p", admissionregistrationv1.Deny))
	v.cfg.Resources = noResources{}
	a := deploymentAttrs(1, nil)
	a.Operation, a.OldObject, a.Object = admission.Delete, a.Object, nil
	a.OldObject.(*appsv1.Deployment).Labels = map[string]string{"protected": "yes"}
	err := v.Validate(context.Background(), a)
	if want := `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: protected: web`; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	a.OldObject.(*appsv1.Deployment).Labels = nil
	if err := v.Validate(context.Background(), a); err != nil {
		t.Fatalf("unprotected: %v", err)
	}
}
