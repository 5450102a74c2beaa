package printers

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCustomResource(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "c1", "creationTimestamp": "2026-01-01T11:55:00Z"},
		"spec":     map[string]any{"cronSpec": "* * * * */5", "replicas": int64(2), "ratio": 0.5, "on": true, "size": 3.0},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}}
	tests := []struct {
		name  string
		cols  []Column
		names []string
		cells []interface{}
	}{
		{"default Age", nil, []string{"Name", "Age"}, []interface{}{"c1", "5m"}},
		{"typed columns", []Column{
			{Name: "Spec", Type: "string", JSONPath: ".spec.cronSpec"},
			{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
			{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
			{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio"},
			{Name: "On", Type: "boolean", JSONPath: ".spec.on"},
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
			{Name: "Missing", Type: "string", JSONPath: ".spec.nope"},
			{Name: "Wrong", Type: "integer", JSONPath: ".spec.cronSpec"},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp", Priority: 1},
		}, []string{"Name", "Spec", "Replicas", "Size", "Ratio", "On", "Ready", "Missing", "Wrong", "Age"},
			[]interface{}{"c1", "* * * * */5", int64(2), int64(3), 0.5, true, "True", nil, nil, "5m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := CustomResource(tc.cols)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range h.Columns {
				names = append(names, c.Name)
			}
			if !reflect.DeepEqual(names, tc.names) {
				t.Errorf("columns = %v, want %v", names, tc.names)
			}
			cells, err := h.Cells(obj, now)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cells, tc.cells) {
				t.Errorf("cells = %#v, want %#v", cells, tc.cells)
			}
		})
	}
	if _, err := CustomResource([]Column{{Name: "X", Type: "string", JSONPath: ".spec["}}); err == nil {
		t.Error("bad path accepted")
	}
}
