package cel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
)

func compileSchema(t *testing.T, src string) (*Validator, field.ErrorList) {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(src), &props); err != nil {
		t.Fatal(err)
	}
	s, err := structural.New(&props)
	if err != nil {
		t.Fatal(err)
	}
	return Compile(s.Root, field.NewPath("spec", "validation", "openAPIV3Schema"))
}

func decode(t *testing.T, src string) map[string]any {
	t.Helper()
	if src == "" {
		return nil
	}
	var m map[string]any
	if err := kjson.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const schema = `{"type": "object", "properties": {"spec": {
  "type": "object",
  "x-kubernetes-validations": [
    {"rule": "self.replicas <= self.maxReplicas"},
    {"rule": "!has(self.mode) || self.mode != 'off'", "message": "mode may not be off", "reason": "FieldValueForbidden", "fieldPath": ".mode"},
    {"rule": "self.replicas != 7", "messageExpression": "'replicas ' + string(self.replicas) + ' is unlucky'"}
  ],
  "properties": {
    "replicas": {"type": "integer"},
    "maxReplicas": {"type": "integer"},
    "mode": {"type": "string"},
    "name": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [
      {"rule": "self.startsWith('a')"},
      {"rule": "self == oldSelf", "message": "Value is immutable"}
    ]},
    "ports": {"type": "array", "maxItems": 4, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
      "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "maxLength": 8}, "port": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "!has(oldSelf.port) || self.port >= oldSelf.port", "message": "port may only grow"}]}}
  }}}}`

func TestValidate(t *testing.T) {
	v, errs := compileSchema(t, schema)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	tests := []struct {
		name     string
		obj, old string
		want     []string
	}{
		{name: "valid", obj: `{"spec": {"replicas": 1, "maxReplicas": 2, "name": "ab"}}`},
		{name: "failed rule", obj: `{"spec": {"replicas": 3, "maxReplicas": 2}}`,
			want: []string{`spec: Invalid value: failed rule: self.replicas <= self.maxReplicas`}},
		{name: "message, reason and fieldPath", obj: `{"spec": {"replicas": 1, "maxReplicas": 2, "mode": "off"}}`,
			want: []string{`spec.mode: Forbidden: mode may not be off`}},
		{name: "messageExpression", obj: `{"spec": {"replicas": 7, "maxReplicas": 9}}`,
			want: []string{`spec: Invalid value: replicas 7 is unlucky`}},
		{name: "scalar rule", obj: `{"spec": {"replicas": 1, "maxReplicas": 2, "name": "bob"}}`,
			want: []string{`spec.name: Invalid value: "bob": failed rule: self.startsWith('a')`}},
		{name: "transition rule skipped on create", obj: `{"spec": {"replicas": 1, "maxReplicas": 2, "name": "ann"}}`},
		{name: "transition rule", obj: `{"spec": {"replicas": 1, "maxReplicas": 2, "name": "ann"}}`, old: `{"spec": {"replicas": 1, "maxReplicas": 2, "name": "abe"}}`,
			want: []string{`spec.name: Invalid value: "ann": Value is immutable`}},
		{name: "list-map items correlate by key", obj: `{"spec": {"replicas": 1, "maxReplicas": 2, "ports": [{"name": "b", "port": 1}, {"name": "a", "port": 5}]}}`,
			old:  `{"spec": {"replicas": 1, "maxReplicas": 2, "ports": [{"name": "a", "port": 6}]}}`,
			want: []string{`spec.ports[1]: Invalid value: port may only grow`}},
		{name: "ratcheting: an unchanged failing value passes an update", obj: `{"spec": {"replicas": 3, "maxReplicas": 2, "name": "abe"}}`, old: `{"spec": {"replicas": 3, "maxReplicas": 2, "name": "abe"}}`},
		{name: "runtime error", obj: `{"spec": {"replicas": 1}}`,
			want: []string{`spec: Invalid value: "object": no such key: maxReplicas evaluating rule: self.replicas <= self.maxReplicas`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := v.Validate(context.Background(), decode(t, tc.obj), decode(t, tc.old))
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

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // substring of the joined errors; "" = no errors
	}{
		{"fine", `{"type": "object", "x-kubernetes-validations": [{"rule": "self.a == 1"}], "properties": {"a": {"type": "integer"}}}`, ""},
		{"syntax", `{"type": "object", "x-kubernetes-validations": [{"rule": "self.a =="}]}`,
			`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.a ==","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:10: Syntax error`},
		{"undefined field", `{"type": "object", "properties": {"a": {"type": "integer"}}, "x-kubernetes-validations": [{"rule": "self.nope == 1"}]}`,
			`compilation failed: ERROR: <input>:1:5: undefined field 'nope'`},
		{"type mismatch", `{"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [{"rule": "self.a == 1"}]}`,
			`compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(string, int)'`},
		{"oldSelf in an atomic list", `{"type": "object", "properties": {"l": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 4, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}`,
			`spec.validation.openAPIV3Schema.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[l]`},
		{"not a bool", `{"type": "object", "x-kubernetes-validations": [{"rule": "'x'"}]}`,
			`x-kubernetes-validations[0].rule: Invalid value: {"Rule":"'x'","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: cel expression must evaluate to a bool`},
		{"bad messageExpression", `{"type": "object", "x-kubernetes-validations": [{"rule": "true", "messageExpression": "1"}]}`,
			`x-kubernetes-validations[0].messageExpression: Invalid value: {"Rule":"true","Message":"","MessageExpression":"1","Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression must evaluate to a string`},
		{"optionalOldSelf without oldSelf", `{"type": "object", "x-kubernetes-validations": [{"rule": "true", "optionalOldSelf": true}]}`,
			`x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`},
		{"unbounded list too expensive", `{"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"},
			"x-kubernetes-validations": [{"rule": "self.all(x, self.exists(y, x == y + 'a'))"}]}}}`,
			`spec.validation.openAPIV3Schema.properties[l].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`},
		{"bounded list is fine", `{"type": "object", "properties": {"l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10},
			"x-kubernetes-validations": [{"rule": "self.all(x, self.exists(y, x == y + 'a'))"}]}}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := compileSchema(t, tc.schema)
			got := errs.ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("unexpected: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Errorf("got %v\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRuntimeCostLimit(t *testing.T) {
	// Estimation is bounded by maxItems, but a rule still stops at the
	// per-call limit when it runs.
	v, errs := compileSchema(t, `{"type": "object", "properties": {"l": {"type": "array", "items": {"type": "integer"},
		"x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, self.all(z, x + y + z >= 0)))"}]}}}`)
	_ = errs // estimated too expensive too; the runtime limit applies regardless
	l := make([]any, 200)
	for i := range l {
		l[i] = int64(i)
	}
	got := v.Validate(context.Background(), map[string]any{"l": l}, nil)
	if len(got) != 1 || !strings.Contains(got[0].Error(), "no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, self.all(z, x + y + z >= 0)))") {
		t.Errorf("got %v", got)
	}
}

func TestKubernetesLibrary(t *testing.T) {
	obj := map[string]any{"l": []any{int64(1), int64(3), int64(2)}, "s": []any{"a", "b"}, "ip": "10.0.0.1", "cidr": "10.0.0.0/8",
		"url": "https://example.com/x", "q": "100Mi", "bad": "not an ip", "text": "a1b22c333"}
	for _, rule := range []string{
		"!self.l.isSorted() && self.s.isSorted()",
		"self.l.sum() == 6 && self.l.min() == 1 && self.l.max() == 3",
		"self.l.indexOf(3) == 1 && self.l.lastIndexOf(9) == -1",
		"self.text.find('[0-9]+') == '1' && self.text.findAll('[0-9]+') == ['1', '22', '333'] && self.text.findAll('[0-9]+', 2).size() == 2",
		"isIP(self.ip) && !isIP(self.bad) && isCIDR(self.cidr) && !isCIDR(self.ip)",
		"isURL(self.url) && isQuantity(self.q) && !isQuantity(self.bad)",
		"'x,y'.split(',').size() == 2",
		"ip(self.ip).family() == 4 && !ip(self.ip).isLoopback() && ip('::1').isLoopback() && string(ip(self.ip)) == '10.0.0.1'",
		"cidr(self.cidr).containsIP(self.ip) && cidr(self.cidr).containsIP(ip('10.1.2.3')) && cidr(self.cidr).prefixLength() == 8 && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
		"url(self.url).getScheme() == 'https' && url(self.url).getHost() == 'example.com' && url(self.url).getEscapedPath() == '/x'",
		"quantity(self.q).isGreaterThan(quantity('1Mi')) && quantity(self.q).compareTo(quantity('100Mi')) == 0 && quantity('1').add(2).asInteger() == 3 && quantity(self.q) == quantity('100Mi')",
	} {
		v, errs := compileSchema(t, `{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-validations": [{"rule": `+strconvQuote(rule)+`}]}`)
		if len(errs) > 0 {
			t.Errorf("%s: %v", rule, errs)
			continue
		}
		if got := v.Validate(context.Background(), obj, nil); len(got) > 0 {
			t.Errorf("%s: %v", rule, got)
		}
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Property names that are CEL keywords or contain '-', '.', '/' or "__"
// are reached escaped, as upstream; map keys are not.
func TestEscapedPropertyNames(t *testing.T) {
	v, errs := compileSchema(t, `{"type": "object", "properties": {
	  "namespace": {"type": "string", "maxLength": 10},
	  "x-y": {"type": "integer"},
	  "a.b": {"type": "integer"},
	  "labels": {"type": "object", "maxProperties": 5, "additionalProperties": {"type": "string", "maxLength": 10}},
	  "refs": {"type": "array", "maxItems": 4, "items": {"type": "object", "properties": {"namespace": {"type": "string", "maxLength": 10}}}}},
	  "x-kubernetes-validations": [
	    {"rule": "self.__namespace__ == 'ns'"},
	    {"rule": "self.x__dash__y == 1 && self.a__dot__b == 2"},
	    {"rule": "self.labels['app.kubernetes.io/name'] == 'web'"},
	    {"rule": "self.refs.all(r, !has(r.__namespace__) || r.__namespace__ == self.__namespace__)"}
	  ]}`)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	good := map[string]any{"namespace": "ns", "x-y": int64(1), "a.b": int64(2), "labels": map[string]any{"app.kubernetes.io/name": "web"},
		"refs": []any{map[string]any{"namespace": "ns"}, map[string]any{}}}
	if got := v.Validate(context.Background(), good, nil); len(got) > 0 {
		t.Errorf("good object: %v", got)
	}
	good["refs"] = []any{map[string]any{"namespace": "other"}}
	got := v.Validate(context.Background(), good, nil)
	if len(got) != 1 || got[0].Error() != "<nil>: Invalid value: failed rule: self.refs.all(r, !has(r.__namespace__) || r.__namespace__ == self.__namespace__)" {
		t.Errorf("bad ref: %v", got)
	}
}

// Strings with format date-time, duration and byte are timestamps,
// durations and bytes in rules, as upstream.
func TestFormattedStrings(t *testing.T) {
	v, errs := compileSchema(t, `{"type": "object", "properties": {
	  "at": {"type": "string", "format": "date-time"},
	  "every": {"type": "string", "format": "duration"},
	  "data": {"type": "string", "format": "byte"}},
	  "x-kubernetes-validations": [
	    {"rule": "self.at > timestamp('2020-01-01T00:00:00Z')", "message": "too early"},
	    {"rule": "self.every <= duration('1h')", "message": "too long"},
	    {"rule": "self.data == b'hi'", "message": "wrong data"}
	  ]}`)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	obj := map[string]any{"at": "2021-05-01T10:00:00Z", "every": "30m", "data": "aGk="}
	if got := v.Validate(context.Background(), obj, nil); len(got) > 0 {
		t.Errorf("valid: %v", got)
	}
	obj = map[string]any{"at": "2019-05-01T10:00:00Z", "every": "2h", "data": "aGk="}
	got := v.Validate(context.Background(), obj, nil)
	if len(got) != 2 || got[0].Detail != "too early" || got[1].Detail != "too long" {
		t.Errorf("invalid: %v", got)
	}
}

func TestNormalizeFieldPath(t *testing.T) {
	var props apiextensionsv1.JSONSchemaProps
	_ = json.Unmarshal([]byte(`{"type": "object", "properties": {"a": {"type": "object", "properties": {"b.c": {"type": "string"}}},
	  "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "string"}}}}}}`), &props)
	s, err := structural.New(&props)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{".a": "a", ".a['b.c']": "a.b.c", ".m['k.y'].x": "m[k.y].x", ".m.key": "m[key]"} {
		if got := normalizeFieldPath(s.Root, in); got != want {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
}

// A rule on the root selecting nested fields compiles (the schema's type
// names never shadow the variable's field selections).
func TestRootRuleSelectsNestedFields(t *testing.T) {
	v, errs := compileSchema(t, `{"type": "object", "x-kubernetes-validations": [{"rule": "self.spec.replicas <= 5"}],
	  "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}`)
	if len(errs) > 0 {
		t.Fatalf("compile: %v", errs)
	}
	if errs := v.Validate(context.Background(), decode(t, `{"spec": {"replicas": 6}}`), nil); len(errs) != 1 || errs[0].Detail != "failed rule: self.spec.replicas <= 5" {
		t.Errorf("validate: %v", errs)
	}
}
