package policy

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validPDB() *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: new(intstr.FromInt32(2)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	DefaultPodDisruptionBudget(pdb)
	return pdb
}

func TestValidatePodDisruptionBudget(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*policyv1.PodDisruptionBudget)
		path   string
		typ    field.ErrorType
		msg    string // full message, checked when set
	}{
		{name: "valid", mutate: func(*policyv1.PodDisruptionBudget) {}},
		{name: "valid percent maxUnavailable", mutate: func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MinAvailable = nil
			p.Spec.MaxUnavailable = new(intstr.FromString("25%"))
		}},
		{name: "valid 100%", mutate: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = new(intstr.FromString("100%")) }},
		{name: "valid eviction policy", mutate: func(p *policyv1.PodDisruptionBudget) {
			p.Spec.UnhealthyPodEvictionPolicy = new(policyv1.AlwaysAllow)
		}},
		{name: "upper-case name is fine for PDBs (path segment rule)", mutate: func(p *policyv1.PodDisruptionBudget) { p.Name = "Web" }},
		{name: "name with slash", mutate: func(p *policyv1.PodDisruptionBudget) { p.Name = "a/b" },
			path: "metadata.name", typ: field.ErrorTypeInvalid},
		{name: "both set", mutate: func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = new(intstr.FromInt32(1)) },
			path: "spec", typ: field.ErrorTypeInvalid},
		{name: "negative", mutate: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = new(intstr.FromInt32(-1)) },
			path: "spec.minAvailable", typ: field.ErrorTypeInvalid,
			msg: "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"},
		{name: "over 100%", mutate: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = new(intstr.FromString("101%")) },
			path: "spec.minAvailable", typ: field.ErrorTypeInvalid,
			msg: `spec.minAvailable: Invalid value: "101%": must not be greater than 100%`},
		{name: "not a percent", mutate: func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MaxUnavailable, p.Spec.MinAvailable = new(intstr.FromString("half")), nil
		},
			path: "spec.maxUnavailable", typ: field.ErrorTypeInvalid},
		{name: "bad selector", mutate: func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector.MatchLabels = map[string]string{"app": "-bad-"} },
			path: "spec.selector.matchLabels", typ: field.ErrorTypeInvalid},
		{name: "bad selector operator", mutate: func(p *policyv1.PodDisruptionBudget) {
			p.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Is"}}
		}, path: "spec.selector.matchExpressions[0].operator", typ: field.ErrorTypeInvalid},
		{name: "bad eviction policy", mutate: func(p *policyv1.PodDisruptionBudget) {
			p.Spec.UnhealthyPodEvictionPolicy = new(policyv1.UnhealthyPodEvictionPolicyType("Never"))
		}, path: "spec.unhealthyPodEvictionPolicy", typ: field.ErrorTypeNotSupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pdb := validPDB()
			tc.mutate(pdb)
			errs := ValidatePodDisruptionBudget(pdb)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
			if tc.msg != "" && errs[0].Error() != tc.msg {
				t.Fatalf("got %q, want %q", errs[0].Error(), tc.msg)
			}
		})
	}
}

func TestValidatePodDisruptionBudgetUpdate(t *testing.T) {
	old := validPDB()
	pdb := validPDB()
	pdb.Spec.MinAvailable = new(intstr.FromString("50%"))
	pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	if errs := ValidatePodDisruptionBudgetUpdate(pdb, old); len(errs) != 0 {
		t.Fatalf("spec is mutable, got %v", errs)
	}

	// A selector value that was stored when it was still accepted may stay.
	bad := []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"-x-"}}}
	old.Spec.Selector.MatchExpressions = bad
	pdb = old.DeepCopy()
	if errs := ValidatePodDisruptionBudgetUpdate(pdb, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	if errs := ValidatePodDisruptionBudget(pdb); !registrytest.FindError(errs, "spec.selector.matchExpressions[0].values[0]", field.ErrorTypeInvalid) {
		t.Fatalf("a new PDB with that selector is rejected, got %v", errs)
	}
}

func TestValidatePodDisruptionBudgetStatusUpdate(t *testing.T) {
	old := validPDB()
	pdb := validPDB()
	pdb.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3}
	if errs := ValidatePodDisruptionBudgetStatusUpdate(pdb, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	pdb.Status.DisruptionsAllowed = -1
	if errs := ValidatePodDisruptionBudgetStatusUpdate(pdb, old); !registrytest.FindError(errs, "status.disruptionsAllowed", field.ErrorTypeInvalid) {
		t.Fatalf("got %v", errs)
	}
	pdb.Status.DisruptionsAllowed = 0
	pdb.Status.Conditions = []metav1.Condition{{Type: "DisruptionAllowed", Status: "Maybe"}}
	if errs := ValidatePodDisruptionBudgetStatusUpdate(pdb, old); !registrytest.FindError(errs, "status.conditions[0].status", field.ErrorTypeNotSupported) {
		t.Fatalf("got %v", errs)
	}
}
