package customresource

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// A type error blocks the CEL rules, and the result says so only when the
// schema has rules (upstream builds no CEL validator for a schema without
// x-kubernetes-validations).
func TestBlockedRulesError(t *testing.T) {
	const notChecked = "some validation rules were not checked"
	size := apiextensionsv1.JSONSchemaProps{Type: "integer"}
	withRule := size
	withRule.XValidations = apiextensionsv1.ValidationRules{{Rule: "self < 10"}}
	for _, tc := range []struct {
		name    string
		size    apiextensionsv1.JSONSchemaProps
		blocked bool
	}{
		{"no rules", size, false},
		{"a rule", withRule, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": tc.size}},
			}}
			v, err := NewValidator(nil, "v1", schema)
			if err != nil {
				t.Fatal(err)
			}
			obj := map[string]any{"spec": map[string]any{"size": "big"}}
			prior := v.Validate(obj, nil, false)
			errs := append(prior, v.ValidateStructure(obj, nil, prior)...)
			if len(errs) == 0 {
				t.Fatal("a string where the schema wants an integer passed")
			}
			if got := strings.Contains(errs.ToAggregate().Error(), notChecked); got != tc.blocked {
				t.Errorf("errors %v: %q present = %v, want %v", errs, notChecked, got, tc.blocked)
			}
		})
	}
}
