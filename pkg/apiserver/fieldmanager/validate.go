package fieldmanager

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// InvalidAfterAdmissionWarning is upstream's warning when mutating
// admission left managedFields that do not decode (they are restored).
const InvalidAfterAdmissionWarning = ".metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: %v"

// ValidateManagedFields reports the first managedFields entry that does not
// decode, with upstream's messages (DecodeManagedFields): the operation
// must be Apply or Update, the apiVersion set, the fieldsType FieldsV1
// and fieldsV1 a field set.
func ValidateManagedFields(entries []metav1.ManagedFieldsEntry) error {
	for i, e := range entries {
		if e.Operation != metav1.ManagedFieldsOperationApply && e.Operation != metav1.ManagedFieldsOperationUpdate {
			return fmt.Errorf("operation must be `Apply` or `Update`")
		}
		if e.APIVersion == "" {
			return fmt.Errorf("apiVersion must not be empty")
		}
		switch e.FieldsType {
		case "FieldsV1":
		case "":
			return fmt.Errorf("missing fieldsType in managed fields entry %d", i)
		default:
			return fmt.Errorf("invalid fieldsType %q in managed fields entry %d", e.FieldsType, i)
		}
		raw := []byte("{}")
		if e.FieldsV1 != nil {
			raw = e.FieldsV1.Raw
		}
		var set fieldpath.Set
		if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
			return fmt.Errorf("error decoding versioned set from %v: error decoding set: %v", e, err)
		}
	}
	return nil
}
