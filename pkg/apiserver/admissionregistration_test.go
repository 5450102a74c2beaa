package apiserver_test

import (
	"net/http"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// Webhook configurations and admission policies are stored with
// upstream's defaults and refused with upstream's messages.
func TestAdmissionRegistrationServed(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := start(t, testenv.Config{Clock: fake})
	const base = "/apis/admissionregistration.k8s.io/v1/"
	hook := func(sideEffects any) map[string]any {
		w := map[string]any{"name": "check.example.com", "admissionReviewVersions": []string{"v1"},
			"clientConfig": map[string]any{"service": map[string]any{"name": "hook", "namespace": "default"}}}
		if sideEffects != nil {
			w["sideEffects"] = sideEffects
		}
		return map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
			"metadata": map[string]any{"name": "check"}, "webhooks": []any{w}}
	}
	code, _, data := c.do(http.MethodPost, base+"validatingwebhookconfigurations", hook(nil), "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`ValidatingWebhookConfiguration.admissionregistration.k8s.io "check" is invalid: webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`)
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	c.call(http.MethodPost, base+"validatingwebhookconfigurations", hook("None"), http.StatusCreated, &vwc)
	w := vwc.Webhooks[0]
	if *w.FailurePolicy != "Fail" || *w.MatchPolicy != "Equivalent" || *w.TimeoutSeconds != 10 || *w.ClientConfig.Service.Port != 443 || w.ObjectSelector == nil {
		t.Errorf("defaults not applied: %+v", w)
	}

	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	c.call(http.MethodPost, base+"validatingadmissionpolicies", map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": map[string]any{"name": "replicas"},
		"spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{"apiGroups": []string{"apps"}, "apiVersions": []string{"v1"},
				"operations": []string{"CREATE", "UPDATE"}, "resources": []string{"deployments"}}}},
			"validations": []any{map[string]any{"expression": "object.spec.replicas <= 5"}},
		},
	}, http.StatusCreated, &vap)
	if *vap.Spec.FailurePolicy != "Fail" || *vap.Spec.MatchConstraints.MatchPolicy != "Equivalent" || vap.Generation != 1 {
		t.Errorf("policy = %+v", vap.Spec)
	}
	// status is a subresource
	vap.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Checked", LastTransitionTime: metav1.Now()}}
	var st admissionregistrationv1.ValidatingAdmissionPolicy
	c.call(http.MethodPut, base+"validatingadmissionpolicies/replicas/status", &vap, http.StatusOK, &st)
	if len(st.Status.Conditions) != 1 {
		t.Errorf("status not stored: %+v", st.Status)
	}
	// type checking is reported done for the current generation
	eventually(t, "the policy to be type-checked", func() bool {
		fake.Step(5 * time.Second)
		var p admissionregistrationv1.ValidatingAdmissionPolicy
		c.call(http.MethodGet, base+"validatingadmissionpolicies/replicas", nil, http.StatusOK, &p)
		return p.Status.TypeChecking != nil && p.Status.ObservedGeneration == p.Generation
	})
	code, _, data = c.do(http.MethodPost, base+"validatingadmissionpolicybindings", map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": map[string]any{"name": "replicas"},
		"spec": map[string]any{"policyName": "replicas"},
	}, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "replicas" is invalid: spec.validationActions: Required value: at least one validation action is required`)
	c.call(http.MethodPost, base+"mutatingadmissionpolicies", map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy", "metadata": map[string]any{"name": "paused"},
		"spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{"apiGroups": []string{"apps"}, "apiVersions": []string{"v1"},
				"operations": []string{"CREATE"}, "resources": []string{"deployments"}}}},
			"reinvocationPolicy": "Never",
			"mutations":          []any{map[string]any{"patchType": "ApplyConfiguration", "applyConfiguration": map[string]any{"expression": "Object{spec: Object.spec{paused: true}}"}}},
		},
	}, http.StatusCreated, nil)
}
