package fieldmanager

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateManagedFields(t *testing.T) {
	ok := metav1.ManagedFieldsEntry{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:k":{}}}`)}}
	with := func(f func(*metav1.ManagedFieldsEntry)) []metav1.ManagedFieldsEntry {
		e := *ok.DeepCopy()
		f(&e)
		return []metav1.ManagedFieldsEntry{ok, e}
	}
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    string
	}{
		{"valid", []metav1.ManagedFieldsEntry{ok}, ""},
		{"none", nil, ""},
		{"no fieldsV1", with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = nil }), ""},
		{"operation", with(func(e *metav1.ManagedFieldsEntry) { e.Operation = "Bogus" }), "operation must be `Apply` or `Update`"},
		{"apiVersion", with(func(e *metav1.ManagedFieldsEntry) { e.APIVersion = "" }), "apiVersion must not be empty"},
		{"missing fieldsType", with(func(e *metav1.ManagedFieldsEntry) { e.FieldsType = "" }), "missing fieldsType in managed fields entry 1"},
		{"invalid fieldsType", with(func(e *metav1.ManagedFieldsEntry) { e.FieldsType = "FieldsV2" }), `invalid fieldsType "FieldsV2" in managed fields entry 1`},
		{"bad set", with(func(e *metav1.ManagedFieldsEntry) { e.FieldsV1 = &metav1.FieldsV1{Raw: []byte(`[1]`)} }), "error decoding versioned set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateManagedFields(tt.entries)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.want != "" && (err == nil || len(err.Error()) < len(tt.want) || err.Error()[:len(tt.want)] != tt.want):
				t.Errorf("error %v, want %q...", err, tt.want)
			}
		})
	}
}
