package nodeaffinity

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func expr(key string, op corev1.NodeSelectorOperator, vals ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
}

func TestNodeSelectorMatch(t *testing.T) {
	labels := map[string]string{"foo": "bar", "num": "5", "text": "x"}
	cases := []struct {
		name    string
		terms   []corev1.NodeSelectorTerm
		node    *corev1.Node
		want    bool
		wantErr string // NewNodeSelector error (substring)
	}{
		{name: "no terms", want: false},
		{name: "empty term matches nothing", terms: []corev1.NodeSelectorTerm{{}}, want: false},
		{name: "In", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpIn, "baz", "bar")}}}, want: true},
		{name: "In missing label", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("nope", corev1.NodeSelectorOpIn, "bar")}}}, want: false},
		{name: "NotIn other value", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpNotIn, "baz")}}}, want: true},
		{name: "NotIn same value", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpNotIn, "bar")}}}, want: false},
		{name: "NotIn missing label matches", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("nope", corev1.NodeSelectorOpNotIn, "bar")}}}, want: true},
		{name: "Exists", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpExists)}}}, want: true},
		{name: "DoesNotExist", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpDoesNotExist)}}}, want: false},
		{name: "Gt", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("num", corev1.NodeSelectorOpGt, "4")}}}, want: true},
		{name: "Gt equal", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("num", corev1.NodeSelectorOpGt, "5")}}}, want: false},
		{name: "Lt", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("num", corev1.NodeSelectorOpLt, "6")}}}, want: true},
		{name: "Lt non-integer label", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("text", corev1.NodeSelectorOpLt, "6")}}}, want: false},
		{name: "expressions ANDed", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			expr("foo", corev1.NodeSelectorOpIn, "bar"), expr("num", corev1.NodeSelectorOpGt, "10")}}}, want: false},
		{name: "terms ORed", terms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpIn, "nope")}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{expr("num", corev1.NodeSelectorOpLt, "10")}}}, want: true},
		{name: "matchFields name In", terms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpIn, "n1")}}}, want: true},
		{name: "matchFields name In other", terms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpIn, "n2")}}}, want: false},
		{name: "matchFields name NotIn", terms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpNotIn, "n2")}}}, want: true},
		{name: "matchFields ignored for a nameless node", node: node("", labels), terms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpIn, "n2")}}}, want: true},
		{name: "fields and expressions ANDed", terms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpIn, "bar")},
			MatchFields:      []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpIn, "n2")}}}, want: false},
		{name: "invalid field operator", terms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpExists)}}},
			wantErr: `nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"`},
		{name: "field with two values", terms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpIn, "a", "b")}}},
			wantErr: "nodeSelectorTerms[0].matchFields[0].values: Invalid value: [\"a\",\"b\"]: must have one element"},
		{name: "Gt non-integer", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("num", corev1.NodeSelectorOpGt, "x")}}},
			wantErr: "for 'Gt', 'Lt' operators, the value must be an integer"},
		{name: "invalid key", terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("-bad", corev1.NodeSelectorOpExists)}}},
			wantErr: "nodeSelectorTerms[0].matchExpressions[0].key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node
			if n == nil {
				n = node("n1", labels)
			}
			ns := &corev1.NodeSelector{NodeSelectorTerms: tc.terms}
			sel, err := NewNodeSelector(ns)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				// The lazy selector does not match and reports the error.
				m, lerr := NewLazyErrorNodeSelector(ns).Match(n)
				if m || lerr == nil {
					t.Errorf("lazy Match = %v, %v; want false and an error", m, lerr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Match(n); got != tc.want {
				t.Errorf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLazyErrorOnlyWhenNoTermMatches(t *testing.T) {
	ns := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
		{MatchFields: []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpExists)}},
		{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpIn, "bar")}},
	}}
	lazy := NewLazyErrorNodeSelector(ns)
	if m, err := lazy.Match(node("n", map[string]string{"foo": "bar"})); !m || err != nil {
		t.Errorf("Match = %v, %v; want true, nil", m, err)
	}
	if m, err := lazy.Match(node("n", nil)); m || err == nil {
		t.Errorf("Match = %v, %v; want false and the parse error", m, err)
	}
}

func TestPreferredSchedulingTermsScore(t *testing.T) {
	terms := []corev1.PreferredSchedulingTerm{
		{Weight: 5, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpIn, "bar")}}},
		{Weight: 3, Preference: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpIn, "n1")}}},
		{Weight: 0, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpExists)}}},
		{Weight: 7},
	}
	p, err := NewPreferredSchedulingTerms(terms)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    *corev1.Node
		want int64
	}{
		{node("n1", map[string]string{"foo": "bar"}), 8},
		{node("n2", map[string]string{"foo": "bar"}), 5},
		{node("n1", nil), 3},
		{node("n2", nil), 0},
	} {
		if got := p.Score(tc.n); got != tc.want {
			t.Errorf("Score(%s %v) = %d, want %d", tc.n.Name, tc.n.Labels, got, tc.want)
		}
	}
	if _, err := NewPreferredSchedulingTerms([]corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpGt, "a")}}}}); err == nil {
		t.Error("a term that does not parse: want an error")
	}
}

func TestRequiredNodeAffinity(t *testing.T) {
	pod := func(sel map[string]string, terms ...corev1.NodeSelectorTerm) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: sel}}
		if terms != nil {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
		return p
	}
	n := node("n1", map[string]string{"foo": "bar", "zone": "a"})
	cases := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"nothing", pod(nil), true},
		{"selector matches", pod(map[string]string{"foo": "bar", "zone": "a"}), true},
		{"selector value differs", pod(map[string]string{"foo": "baz"}), false},
		{"selector empty value needs the label", pod(map[string]string{"missing": ""}), false},
		{"affinity matches", pod(nil, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr("zone", corev1.NodeSelectorOpIn, "a")}}), true},
		{"selector and affinity ANDed", pod(map[string]string{"foo": "bar"}, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr("zone", corev1.NodeSelectorOpIn, "b")}}), false},
		{"empty terms list matches nothing", pod(nil, []corev1.NodeSelectorTerm{}...), false},
	}
	for _, tc := range cases {
		got, _ := GetRequiredNodeAffinity(tc.pod).Match(n)
		if got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A required node selector with no terms matches no node.
	p := pod(nil)
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}
	if got, _ := GetRequiredNodeAffinity(p).Match(n); got {
		t.Error("required node affinity without terms: want no match")
	}
}

func BenchmarkRequiredNodeAffinityMatch(b *testing.B) {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{"foo": "bar"}, Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{expr("zone", corev1.NodeSelectorOpIn, "a", "b")},
			MatchFields:      []corev1.NodeSelectorRequirement{expr("metadata.name", corev1.NodeSelectorOpNotIn, "x")}}}}}}}}
	r := GetRequiredNodeAffinity(p)
	n := node("n1", map[string]string{"foo": "bar", "zone": "b"})
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := r.Match(n); !ok {
			b.Fatal("no match")
		}
	}
}
