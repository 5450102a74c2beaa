package storage

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestInternManagedFields(t *testing.T) {
	mk := func(fields string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: string([]byte("kubectl")), Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)},
		}}}}
	}
	a, b, c := mk(`{"f:data":{"f:a":{}}}`), mk(`{"f:data":{"f:a":{}}}`), mk(`{"f:data":{"f:b":{}}}`)
	for _, o := range []runtime.Object{a, b, c} {
		InternManagedFields(o)
	}
	ra, rb, rc := a.ManagedFields[0].FieldsV1.Raw, b.ManagedFields[0].FieldsV1.Raw, c.ManagedFields[0].FieldsV1.Raw
	if &ra[0] != &rb[0] {
		t.Error("identical field sets are not shared")
	}
	if &ra[0] == &rc[0] || string(rc) != `{"f:data":{"f:b":{}}}` {
		t.Errorf("different field sets shared or changed: %s", rc)
	}
	// Decoding into an object holding interned bytes leaves them alone.
	st := &Store{codec: JSONCodec{}}
	if err := st.decode("k", []byte(`{"metadata":{"managedFields":[{"manager":"x","fieldsType":"FieldsV1","fieldsV1":{"f:zz":{}}}]}}`), a, 1); err != nil {
		t.Fatal(err)
	}
	if string(rb) != `{"f:data":{"f:a":{}}}` || string(a.ManagedFields[0].FieldsV1.Raw) != `{"f:zz":{}}` {
		t.Errorf("decode wrote into shared bytes: shared %s, decoded %s", rb, a.ManagedFields[0].FieldsV1.Raw)
	}
	// Nothing to do for objects without metadata or managedFields.
	InternManagedFields(&metav1.Status{})
	InternManagedFields(&corev1.ConfigMap{})
}
