package jsonpath

import (
	"reflect"
	"testing"
)

func TestFind(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"spec": map[string]any{
			"replicas": int64(3),
			"ports":    []any{map[string]any{"name": "http", "port": int64(80)}, map[string]any{"name": "https", "port": int64(443)}},
		},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "Synced", "status": "False"},
		}},
	}
	tests := []struct {
		path string
		want []any
	}{
		{".spec.replicas", []any{int64(3)}},
		{"{.spec.replicas}", []any{int64(3)}},
		{"spec.replicas", []any{int64(3)}},
		{".spec.ports[0].port", []any{int64(80)}},
		{".spec.ports[-1].name", []any{"https"}},
		{".spec.ports[*].name", []any{"http", "https"}},
		{".spec.ports[?(@.port>100)].name", []any{"https"}},
		{".metadata.labels['app.kubernetes.io/name']", []any{"web"}},
		{`.status.conditions[?(@.type=="Ready")].status`, []any{"True"}},
		{`.status.conditions[?(@.type=='Synced')].status`, []any{"False"}},
		{".spec.missing", nil},
		{".spec.ports[5]", nil},
		{"..port", []any{int64(80), int64(443)}},
	}
	for _, tc := range tests {
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if got := p.Find(obj); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.path, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, p := range []string{"{.spec", ".spec[", ".spec[1:2]", ".spec[?(x)]", ".spec.$x", "{.a}{.b}"} {
		if _, err := Parse(p); err == nil {
			t.Errorf("Parse(%q): no error", p)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{{"x", "x"}, {int64(3), "3"}, {1.5, "1.5"}, {true, "true"}, {map[string]any{"a": int64(1)}, `{"a":1}`}, {[]any{"a"}, `["a"]`}} {
		if got := Format(tc.v); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
