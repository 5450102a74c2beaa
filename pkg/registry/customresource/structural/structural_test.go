package structural

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "k8s.io/apimachinery/pkg/util/json"
)

// testSchema is a structural schema using every feature.
func testSchema(t *testing.T) *Schema {
	t.Helper()
	const src = `{
	  "type": "object",
	  "properties": {
	    "spec": {
	      "type": "object",
	      "required": ["cronSpec"],
	      "properties": {
	        "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
	        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
	        "mode":     {"type": "string", "enum": ["fast", "slow"], "default": "slow"},
	        "name":     {"type": "string", "maxLength": 5},
	        "size":     {"x-kubernetes-int-or-string": true},
	        "tags":     {"type": "array", "maxItems": 3, "x-kubernetes-list-type": "set", "items": {"type": "string"}},
	        "ports":    {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
	                     "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}},
	        "extra":    {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
	        "labels":   {"type": "object", "additionalProperties": {"type": "string"}},
	        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
	        "nullable": {"type": "string", "nullable": true},
	        "notnull":  {"type": "string"},
	        "email":    {"type": "string", "format": "email"},
	        "weird":    {"type": "string", "format": "not-a-format"}
	      }
	    },
	    "status": {"type": "object", "properties": {"num": {"type": "integer", "maximum": 10}}}
	  }
	}`
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(src), &props); err != nil {
		t.Fatal(err)
	}
	s, err := New(&props)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func obj(t *testing.T, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := kjson.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidate(t *testing.T) {
	s := testSchema(t)
	const head = `"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "x"}`
	tests := []struct {
		name       string
		spec       string
		status     string
		statusOnly bool
		want       []string
	}{
		{name: "valid", spec: `{"cronSpec": "* * * * */5", "replicas": 3, "size": "50%", "tags": ["a", "b"], "email": "a@b.c", "weird": "anything"}`},
		{name: "int-or-string int", spec: `{"cronSpec": "* * * * *", "size": 5}`},
		{name: "required", spec: `{"replicas": 3}`, want: []string{`spec.cronSpec: Required value`}},
		{name: "type", spec: `{"cronSpec": "* * * * *", "replicas": "three"}`,
			want: []string{`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`}},
		{name: "maximum", spec: `{"cronSpec": "* * * * *", "replicas": 11}`,
			want: []string{`spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`}},
		{name: "minimum", spec: `{"cronSpec": "* * * * *", "replicas": 0}`,
			want: []string{`spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1`}},
		{name: "pattern", spec: `{"cronSpec": "every minute"}`,
			want: []string{`spec.cronSpec: Invalid value: "every minute": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'`}},
		{name: "enum", spec: `{"cronSpec": "* * * * *", "mode": "medium"}`,
			want: []string{`spec.mode: Unsupported value: "medium": supported values: "fast", "slow"`}},
		{name: "maxLength", spec: `{"cronSpec": "* * * * *", "name": "toolong"}`,
			want: []string{`spec.name: Too long: may not be more than 5 bytes`}},
		{name: "maxItems", spec: `{"cronSpec": "* * * * *", "tags": ["a", "b", "c", "d"]}`,
			want: []string{`spec.tags: Too many: 4: must have at most 3 items`}},
		{name: "int-or-string bool", spec: `{"cronSpec": "* * * * *", "size": true}`,
			want: []string{`spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"`}},
		{name: "format", spec: `{"cronSpec": "* * * * *", "email": "nope"}`,
			want: []string{`spec.email: Invalid value: "nope": spec.email in body must be of type email: "nope"`}},
		{name: "set duplicate", spec: `{"cronSpec": "* * * * *", "tags": ["a", "a"]}`,
			want: []string{`spec.tags[1]: Duplicate value: "a"`}},
		{name: "map duplicate", spec: `{"cronSpec": "* * * * *", "ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]}`,
			want: []string{`spec.ports[1]: Duplicate value: {"name":"http"}`}},
		{name: "embedded without kind", spec: `{"cronSpec": "* * * * *", "template": {"apiVersion": "v1", "metadata": {"name": "a/b"}}}`,
			want: []string{`spec.template.kind: Required value`, `spec.template.metadata.name: Invalid value: "a/b": may not contain '/'`}},
		{name: "status not checked by main resource alone", spec: `{"cronSpec": "* * * * *"}`, status: `{"num": 15}`,
			want: []string{`status.num: Invalid value: 15: status.num in body should be less than or equal to 10`}},
		{name: "status subresource", spec: `{"replicas": "ignored"}`, status: `{"num": 15}`, statusOnly: true,
			want: []string{`status.num: Invalid value: 15: num in body should be less than or equal to 10`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := `{` + head + `, "spec": ` + tc.spec
			if tc.status != "" {
				src += `, "status": ` + tc.status
			}
			errs := s.Validate(obj(t, src+`}`), tc.statusOnly)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestPruneAndDefault(t *testing.T) {
	s := testSchema(t)
	in := obj(t, `{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "x", "unknownMeta": 1}, "junk": 1,
	  "spec": {"cronSpec": "* * * * *", "unknown": {"a": 1}, "notnull": null, "nullable": null,
	    "ports": [{"name": "a", "bogus": true}],
	    "extra": {"free": 1, "known": {"a": "x", "b": "dropped"}},
	    "labels": {"k": "v"},
	    "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "bogus": 1}, "spec": {"kept": true}}},
	  "status": {"num": 1, "gone": 2}}`)
	unknown := s.Prune(in)
	want := []string{"junk", "metadata.unknownMeta", "spec.extra.known.b", "spec.ports[0].bogus", "spec.template.metadata.bogus", "spec.unknown", "status.gone"}
	if !reflect.DeepEqual(unknown, want) {
		t.Errorf("pruned %v, want %v", unknown, want)
	}
	s.PruneNulls(in)
	s.Default(in)
	out, _ := json.Marshal(in)
	const expect = `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"},"spec":{"cronSpec":"* * * * *","extra":{"free":1,"known":{"a":"x"}},"labels":{"k":"v"},"mode":"slow","nullable":null,"ports":[{"name":"a","port":80}],"replicas":1,"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"kept":true}}},"status":{"num":1}}`
	if string(out) != expect {
		t.Errorf("got\n%s\nwant\n%s", out, expect)
	}
	if _, ok := in["spec"].(map[string]any)["replicas"].(int64); !ok {
		t.Errorf("default replicas is %T, want int64", in["spec"].(map[string]any)["replicas"])
	}
}

// An update may keep a value the schema no longer allows (ratcheting), but
// not introduce one.
func TestRatchet(t *testing.T) {
	s := testSchema(t)
	old := obj(t, `{"spec": {"cronSpec": "bad spec", "replicas": 11, "ports": [{"name": "a", "port": 1}]}}`)
	tests := []struct {
		name string
		obj  string
		want []string
	}{
		{"unchanged invalid values", `{"spec": {"cronSpec": "bad spec", "replicas": 11, "mode": "fast", "ports": [{"name": "a", "port": 1}]}}`, nil},
		{"changed to another invalid value", `{"spec": {"cronSpec": "bad spec", "replicas": 12}}`,
			[]string{`spec.replicas: Invalid value: 12: spec.replicas in body should be less than or equal to 10`}},
		{"new invalid value", `{"spec": {"cronSpec": "bad spec", "replicas": 11, "mode": "medium"}}`,
			[]string{`spec.mode: Unsupported value: "medium": supported values: "fast", "slow"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := obj(t, tc.obj)
			var got []string
			for _, e := range s.Ratchet(s.Validate(o, false), o, old) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}
