package printers

import (
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/printers/jsonpath"
)

// Column is one additionalPrinterColumn of a custom resource version.
type Column struct {
	Name, Type, Format, Description string
	Priority                        int32
	JSONPath                        string
}

// CustomResource returns the table handler of a custom resource version, as
// the apiextensions-apiserver's table convertor builds it: Name, then the
// version's additionalPrinterColumns (or, without any, Age from
// metadata.creationTimestamp). A cell is nil when its path selects nothing
// or its value does not fit the column's type; only the first value a path
// selects is shown.
func CustomResource(cols []Column) (Handler, error) {
	if len(cols) == 0 {
		cols = []Column{{Name: "Age", Type: "date", Description: objectMetaDoc["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"}}
	}
	h := Handler{Columns: []metav1.TableColumnDefinition{nameColumn()}}
	paths := make([]*jsonpath.Path, len(cols))
	for i, c := range cols {
		p, err := jsonpath.Parse(c.JSONPath)
		if err != nil {
			return Handler{}, fmt.Errorf("unrecognized column definition %q: %w", c.JSONPath, err)
		}
		paths[i] = p
		h.Columns = append(h.Columns, metav1.TableColumnDefinition{
			Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority,
		})
	}
	h.Cells = func(obj runtime.Object, now time.Time) ([]interface{}, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if u, ok := obj.(runtime.Unstructured); ok {
			content, err = u.UnstructuredContent(), nil
		}
		if err != nil {
			return nil, err
		}
		cells := []interface{}{m.GetName()}
		for i, c := range cols {
			vals := paths[i].Find(content)
			if len(vals) == 0 {
				cells = append(cells, nil)
				continue
			}
			cells = append(cells, customCell(c.Type, vals[0], now))
		}
		return cells, nil
	}
	return h, nil
}

// customCell converts a JSON value to a cell of the column type, as
// upstream's cellForJSONValue.
func customCell(typ string, v any, now time.Time) interface{} {
	if v == nil {
		return nil
	}
	switch typ {
	case "integer":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			if n == math.Trunc(n) {
				return int64(n)
			}
		}
	case "number":
		switch v.(type) {
		case int64, float64:
			return v
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err == nil {
				return age(t, now)
			}
		}
	case "string":
		return jsonpath.Format(v)
	}
	return nil
}
