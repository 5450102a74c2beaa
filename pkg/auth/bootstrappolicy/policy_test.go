package bootstrappolicy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// knownDifferences lists objects ("<kind> <namespace>/<name>") where skiff
// deliberately differs from upstream's published policy, with the reason.
// Empty: skiff grants exactly upstream's permissions.
var knownDifferences = map[string]string{}

// canonical is an order-insensitive rendering of a bootstrap object: what
// the API server and the authorizer see, minus list order where upstream's
// order carries no meaning (rules of a role, subjects of a binding).
type canonical struct {
	Kind, Namespace, Name string
	Labels, Annotations   map[string]string
	AggregationRule       *rbacv1.AggregationRule
	Rules                 []string
	RoleRef               rbacv1.RoleRef
	Subjects              []string
}

func canonRules(rules []rbacv1.PolicyRule) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		r = *r.DeepCopy()
		for _, l := range [][]string{r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs} {
			sort.Strings(l)
		}
		b, _ := json.Marshal(r)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

func canonSubjects(ss []rbacv1.Subject) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		b, _ := json.Marshal(s)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

func canonMeta(kind string, m metav1.ObjectMeta) canonical {
	return canonical{Kind: kind, Namespace: m.Namespace, Name: m.Name, Labels: m.Labels, Annotations: m.Annotations}
}

func key(c canonical) string { return c.Kind + " " + c.Namespace + "/" + c.Name }

func fromClusterRoles(rs []rbacv1.ClusterRole) []canonical {
	var out []canonical
	for _, r := range rs {
		c := canonMeta("ClusterRole", r.ObjectMeta)
		c.AggregationRule, c.Rules = r.AggregationRule, canonRules(r.Rules)
		out = append(out, c)
	}
	return out
}

func fromRoles(rs []rbacv1.Role) []canonical {
	var out []canonical
	for _, r := range rs {
		c := canonMeta("Role", r.ObjectMeta)
		c.Rules = canonRules(r.Rules)
		out = append(out, c)
	}
	return out
}

func fromClusterRoleBindings(bs []rbacv1.ClusterRoleBinding) []canonical {
	var out []canonical
	for _, b := range bs {
		c := canonMeta("ClusterRoleBinding", b.ObjectMeta)
		c.RoleRef, c.Subjects = b.RoleRef, canonSubjects(b.Subjects)
		out = append(out, c)
	}
	return out
}

func fromRoleBindings(bs []rbacv1.RoleBinding) []canonical {
	var out []canonical
	for _, b := range bs {
		c := canonMeta("RoleBinding", b.ObjectMeta)
		c.RoleRef, c.Subjects = b.RoleRef, canonSubjects(b.Subjects)
		out = append(out, c)
	}
	return out
}

func flatten[T any](m map[string][]T) []T {
	var out []T
	for _, l := range m {
		out = append(out, l...)
	}
	return out
}

func loadFixture[T any](t *testing.T, file string) []T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        map[string]any `json:"metadata"`
		Items           []T            `json:"items"`
	}
	if err := yaml.UnmarshalStrict(data, &list); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(list.Items) == 0 {
		t.Fatalf("%s: no items", file)
	}
	return list.Items
}

// diffPolicy compares ours with upstream's objects and returns one line
// per difference not listed in knownDifferences; seen records the known
// differences that occurred.
func diffPolicy(ours, theirs []canonical, seen map[string]bool) []string {
	var problems []string
	index := func(cs []canonical, what string) map[string]canonical {
		m := map[string]canonical{}
		for _, c := range cs {
			if _, dup := m[key(c)]; dup {
				problems = append(problems, what+" has "+key(c)+" twice")
			}
			m[key(c)] = c
		}
		return m
	}
	o, u := index(ours, "skiff"), index(theirs, "upstream")
	var keys []string
	for k := range o {
		keys = append(keys, k)
	}
	for k := range u {
		if _, ok := o[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		oc, inOurs := o[k]
		uc, inTheirs := u[k]
		var problem string
		switch {
		case !inOurs:
			problem = k + ": missing in skiff"
		case !inTheirs:
			problem = k + ": not in upstream's policy"
		case !reflect.DeepEqual(oc, uc):
			ob, _ := json.MarshalIndent(oc, "", " ")
			ub, _ := json.MarshalIndent(uc, "", " ")
			problem = k + ": differs\nskiff:    " + string(ob) + "\nupstream: " + string(ub)
		default:
			continue
		}
		if _, ok := knownDifferences[k]; ok {
			seen[k] = true
			continue
		}
		problems = append(problems, problem)
	}
	return problems
}

func TestMatchesUpstream(t *testing.T) {
	seen := map[string]bool{}
	cases := []struct {
		fixture      string
		ours, theirs []canonical
	}{
		{"cluster-roles.yaml", fromClusterRoles(ClusterRoles()), fromClusterRoles(loadFixture[rbacv1.ClusterRole](t, "cluster-roles.yaml"))},
		{"cluster-role-bindings.yaml", fromClusterRoleBindings(ClusterRoleBindings()), fromClusterRoleBindings(loadFixture[rbacv1.ClusterRoleBinding](t, "cluster-role-bindings.yaml"))},
		{"controller-roles.yaml", fromClusterRoles(ControllerRoles()), fromClusterRoles(loadFixture[rbacv1.ClusterRole](t, "controller-roles.yaml"))},
		{"controller-role-bindings.yaml", fromClusterRoleBindings(ControllerRoleBindings()), fromClusterRoleBindings(loadFixture[rbacv1.ClusterRoleBinding](t, "controller-role-bindings.yaml"))},
		{"namespace-roles.yaml", fromRoles(flatten(NamespaceRoles())), fromRoles(loadFixture[rbacv1.Role](t, "namespace-roles.yaml"))},
		{"namespace-role-bindings.yaml", fromRoleBindings(flatten(NamespaceRoleBindings())), fromRoleBindings(loadFixture[rbacv1.RoleBinding](t, "namespace-role-bindings.yaml"))},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			for _, p := range diffPolicy(tc.ours, tc.theirs, seen) {
				t.Error(p)
			}
		})
	}
	for k, reason := range knownDifferences {
		if !seen[k] {
			t.Errorf("knownDifferences lists %s (%s) but it matches upstream: remove the entry", k, reason)
		}
	}
}

// TestDiffPolicyDetects keeps the golden comparison honest: a changed rule,
// a missing object and an extra subject must each be reported.
func TestDiffPolicyDetects(t *testing.T) {
	base := fromClusterRoles(ControllerRoles())
	tests := []struct {
		name   string
		mutate func([]canonical) []canonical
		want   string
	}{
		{"rule changed", func(cs []canonical) []canonical {
			cs[0].Rules = append([]string(nil), cs[0].Rules...)
			cs[0].Rules[0] = strings.Replace(cs[0].Rules[0], `"list"`, `"delete"`, 1)
			return cs
		}, "differs"},
		{"object missing", func(cs []canonical) []canonical { return cs[1:] }, "missing in skiff"},
		{"annotation missing", func(cs []canonical) []canonical { cs[0].Annotations = nil; return cs }, "differs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ours := tc.mutate(append([]canonical(nil), base...))
			problems := diffPolicy(ours, base, map[string]bool{})
			if len(problems) != 1 || !strings.Contains(problems[0], tc.want) {
				t.Fatalf("problems = %q, want one containing %q", problems, tc.want)
			}
		})
	}
}

func TestEveryObjectIsMarked(t *testing.T) {
	var metas []metav1.ObjectMeta
	for _, r := range append(ClusterRoles(), ControllerRoles()...) {
		metas = append(metas, r.ObjectMeta)
	}
	for _, b := range append(ClusterRoleBindings(), ControllerRoleBindings()...) {
		metas = append(metas, b.ObjectMeta)
	}
	for _, r := range flatten(NamespaceRoles()) {
		metas = append(metas, r.ObjectMeta)
	}
	for _, b := range flatten(NamespaceRoleBindings()) {
		metas = append(metas, b.ObjectMeta)
	}
	for _, m := range metas {
		if m.Labels[BootstrappingLabel] != BootstrappingValue || m.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("%s/%s: labels %v annotations %v", m.Namespace, m.Name, m.Labels, m.Annotations)
		}
	}
}

func TestCallsReturnFreshObjects(t *testing.T) {
	a := ClusterRoles()
	a[0].Labels["x"] = "y"
	a[1].Name = "changed"
	for i := range a {
		if len(a[i].Rules) > 0 {
			a[i].Rules[0].Verbs[0] = "changed"
		}
	}
	b := ClusterRoles()
	if _, ok := b[0].Labels["x"]; ok || b[1].Name == "changed" {
		t.Fatal("ClusterRoles shares metadata between calls")
	}
	for i := range b {
		if len(b[i].Rules) > 0 && b[i].Rules[0].Verbs[0] == "changed" {
			t.Fatalf("ClusterRoles shares rules between calls (%s)", b[i].Name)
		}
	}
}

// Skiff's additions never take an upstream name, are marked like the rest
// and bind only roles that exist.
func TestSkiffAdditions(t *testing.T) {
	upstream := map[string]bool{}
	for _, r := range append(ClusterRoles(), ControllerRoles()...) {
		upstream[r.Name] = true
	}
	for _, b := range append(ClusterRoleBindings(), ControllerRoleBindings()...) {
		upstream["binding "+b.Name] = true
	}
	roles := map[string]bool{}
	for _, r := range SkiffClusterRoles() {
		if upstream[r.Name] || !strings.HasPrefix(r.Name, "skiff:") {
			t.Errorf("skiff role %q: upstream's name, or not under skiff:", r.Name)
		}
		if r.Labels[BootstrappingLabel] != BootstrappingValue || r.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("skiff role %q not marked", r.Name)
		}
		roles[r.Name] = true
	}
	for _, b := range SkiffClusterRoleBindings() {
		if upstream["binding "+b.Name] || !strings.HasPrefix(b.Name, "skiff:") {
			t.Errorf("skiff binding %q: upstream's name, or not under skiff:", b.Name)
		}
		if !roles[b.RoleRef.Name] && !upstream[b.RoleRef.Name] {
			t.Errorf("skiff binding %q binds unknown role %q", b.Name, b.RoleRef.Name)
		}
	}
}
