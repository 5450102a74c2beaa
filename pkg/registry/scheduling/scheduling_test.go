package scheduling

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDefaultPriorityClass(t *testing.T) {
	pc := &schedulingv1.PriorityClass{}
	DefaultPriorityClass(pc)
	if pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("preemptionPolicy = %v", pc.PreemptionPolicy)
	}
	pc.PreemptionPolicy = new(corev1.PreemptNever)
	DefaultPriorityClass(pc)
	if *pc.PreemptionPolicy != corev1.PreemptNever {
		t.Errorf("user value overwritten")
	}
}

func TestSystemPriorityClasses(t *testing.T) {
	classes := SystemPriorityClasses()
	if len(classes) != 2 {
		t.Fatalf("got %d classes", len(classes))
	}
	want := map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
	for _, pc := range classes {
		if want[pc.Name] != pc.Value {
			t.Errorf("%s = %d", pc.Name, pc.Value)
		}
		if errs := ValidatePriorityClass(pc); len(errs) != 0 {
			t.Errorf("%s invalid: %v", pc.Name, errs)
		}
	}
	// Fresh copies: callers may change them.
	classes[0].Value = 1
	if SystemPriorityClasses()[0].Value != 2000001000 {
		t.Errorf("SystemPriorityClasses shares state")
	}
}

func TestValidatePriorityClass(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*schedulingv1.PriorityClass)
		path   string
		typ    field.ErrorType
		msg    string
	}{
		{name: "valid", mutate: func(*schedulingv1.PriorityClass) {}},
		{name: "max user value", mutate: func(pc *schedulingv1.PriorityClass) { pc.Value = 1000000000 }},
		{name: "negative value is fine", mutate: func(pc *schedulingv1.PriorityClass) { pc.Value = -5 }},
		{name: "Never", mutate: func(pc *schedulingv1.PriorityClass) { pc.PreemptionPolicy = new(corev1.PreemptNever) }},
		{name: "too high", mutate: func(pc *schedulingv1.PriorityClass) { pc.Value = 1000000001 },
			path: "value", typ: field.ErrorTypeForbidden,
			msg: "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"},
		{name: "system prefix", mutate: func(pc *schedulingv1.PriorityClass) { pc.Name = "system-mine" },
			path: "metadata.name", typ: field.ErrorTypeForbidden,
			msg: "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"},
		{name: "system class with wrong value", mutate: func(pc *schedulingv1.PriorityClass) { pc.Name = "system-cluster-critical" },
			path: "metadata.name", typ: field.ErrorTypeForbidden,
			msg: "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000"},
		{name: "bad preemption policy", mutate: func(pc *schedulingv1.PriorityClass) { pc.PreemptionPolicy = new(corev1.PreemptionPolicy("Sometimes")) },
			path: "preemptionPolicy", typ: field.ErrorTypeNotSupported},
		{name: "empty preemption policy", mutate: func(pc *schedulingv1.PriorityClass) { pc.PreemptionPolicy = new(corev1.PreemptionPolicy("")) },
			path: "preemptionPolicy", typ: field.ErrorTypeRequired},
		{name: "namespaced", mutate: func(pc *schedulingv1.PriorityClass) { pc.Namespace = "default" },
			path: "metadata.namespace", typ: field.ErrorTypeForbidden},
		{name: "bad name", mutate: func(pc *schedulingv1.PriorityClass) { pc.Name = "High" },
			path: "metadata.name", typ: field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}
			DefaultPriorityClass(pc)
			tc.mutate(pc)
			errs := ValidatePriorityClass(pc)
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
				t.Fatalf("got %q\nwant %q", errs[0].Error(), tc.msg)
			}
		})
	}
}

func TestValidatePriorityClassUpdate(t *testing.T) {
	old := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high", ResourceVersion: "1"}, Value: 1000}
	DefaultPriorityClass(old)

	pc := old.DeepCopy()
	pc.Description = "now documented"
	pc.GlobalDefault = true
	if errs := ValidatePriorityClassUpdate(pc, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	pc = old.DeepCopy()
	pc.Value = 2000
	if errs := ValidatePriorityClassUpdate(pc, old); !registrytest.FindError(errs, "value", field.ErrorTypeForbidden) {
		t.Fatalf("got %v", errs)
	}

	pc = old.DeepCopy()
	pc.PreemptionPolicy = new(corev1.PreemptNever)
	if errs := ValidatePriorityClassUpdate(pc, old); !registrytest.FindError(errs, "preemptionPolicy", field.ErrorTypeInvalid) {
		t.Fatalf("got %v", errs)
	}
}
