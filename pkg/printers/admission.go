package printers

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// paramKindCell is upstream's ParamKind column: apiVersion/kind, or <unset>.
func paramKindCell(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return "<unset>"
	}
	return pk.APIVersion + "/" + pk.Kind
}

// paramRefCell is upstream's ParamRef column: namespace/name (*/name when
// the namespace is unset), the selector, or <unset>.
func paramRefCell(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		return "*/" + pr.Name
	case pr.Selector != nil:
		return metav1.FormatLabelSelector(pr.Selector)
	}
	return "<unset>"
}

func policyColumns(count, countDoc string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		col(count, "integer", countDoc),
		col("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
		ageColumn(),
	}
}

func bindingPolicyColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		col("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
		col("ParamRef", "string", "ParamRef indicates the param resource which sets the configration param"),
		ageColumn(),
	}
}

func validatingAdmissionPolicyHandler() Handler {
	return Handler{
		Columns: policyColumns("Validations", "Validations indicates the number of validation rules defined in this configuration"),
		Cells: typed(func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) ([]interface{}, error) {
			return []interface{}{p.Name, int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), age(p.CreationTimestamp, now)}, nil
		}),
	}
}

func validatingAdmissionPolicyBindingHandler() Handler {
	return Handler{
		Columns: bindingPolicyColumns(),
		Cells: typed(func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) ([]interface{}, error) {
			return []interface{}{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b.CreationTimestamp, now)}, nil
		}),
	}
}

func mutatingAdmissionPolicyHandler() Handler {
	return Handler{
		Columns: policyColumns("Mutations", "Mutations indicates the number of mutations rules defined in this configuration"),
		Cells: typed(func(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) ([]interface{}, error) {
			return []interface{}{p.Name, int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), age(p.CreationTimestamp, now)}, nil
		}),
	}
}

func mutatingAdmissionPolicyBindingHandler() Handler {
	return Handler{
		Columns: bindingPolicyColumns(),
		Cells: typed(func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) ([]interface{}, error) {
			return []interface{}{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b.CreationTimestamp, now)}, nil
		}),
	}
}
