package storage

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
)

// Codec turns objects into stored bytes and back.
type Codec interface {
	Encode(obj runtime.Object) ([]byte, error)
	Decode(data []byte, into runtime.Object) error
}

// JSONCodec stores objects as the JSON the API serves (apiVersion and kind
// included), so a stored value can be sent back to the API server as is.
type JSONCodec struct {
	Typer runtime.ObjectTyper
}

// Encode marshals obj, filling in its apiVersion and kind from the typer.
func (c JSONCodec) Encode(obj runtime.Object) ([]byte, error) {
	SetKind(c.Typer, obj)
	// The bytes an Encoder writes without its newline, in one exactly
	// sized allocation (Marshal encodes in a pooled buffer).
	return json.Marshal(obj)
}

// Decode unmarshals data into into (case-sensitively, as the API server does).
func (c JSONCodec) Decode(data []byte, into runtime.Object) error {
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, into); err != nil {
		return fmt.Errorf("decoding stored object: %w", err)
	}
	return nil
}

// SetKind fills in obj's apiVersion/kind from typer when missing.
func SetKind(typer runtime.ObjectTyper, obj runtime.Object) schema.GroupVersionKind {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() && typer != nil {
		if kinds, _, err := typer.ObjectKinds(obj); err == nil {
			gvk = kinds[0]
			obj.GetObjectKind().SetGroupVersionKind(gvk)
		}
	}
	return gvk
}
