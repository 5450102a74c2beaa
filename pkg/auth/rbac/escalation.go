package rbac

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// FullAuthority is every permission (what using an aggregationRule needs).
var FullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// ConfirmNoEscalation checks that ownerRules (the user's rules, resolved
// with resolutionErr) cover rules, and otherwise returns upstream's error
// listing the missing permissions:
//
//	user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//	{APIGroups:[""], Resources:["pods"], Verbs:["get"]}
func ConfirmNoEscalation(user *authenticationv1.UserInfo, ownerRules []rbacv1.PolicyRule, resolutionErr error, rules []rbacv1.PolicyRule) error {
	ok, missing := Covers(ownerRules, rules)
	if ok {
		return nil
	}
	seen := map[string]bool{}
	var descs []string
	for _, m := range CompactRules(missing) {
		d := CompactString(m)
		if !seen[d] {
			seen[d] = true
			descs = append(descs, d)
		}
	}
	sort.Strings(descs)
	name, groups := "", []string(nil)
	if user != nil {
		name, groups = user.Username, user.Groups
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", name, groups, strings.Join(descs, "\n"))
	if resolutionErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{resolutionErr})
	}
	return errors.New(msg)
}

// Covers reports whether ownerRules allow everything servantRules do, and
// the broken-down servant rules they do not cover (upstream's Covers).
func Covers(ownerRules, servantRules []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var uncovered []rbacv1.PolicyRule
	for _, s := range servantRules {
		for _, sub := range BreakdownRule(s) {
			covered := false
			for i := range ownerRules {
				if ruleCovers(&ownerRules[i], &sub) {
					covered = true
					break
				}
			}
			if !covered {
				uncovered = append(uncovered, sub)
			}
		}
	}
	return len(uncovered) == 0, uncovered
}

// BreakdownRule splits a rule into rules of one group, resource, verb and
// resource name each (and one URL and verb each).
func BreakdownRule(rule rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range rule.APIGroups {
		for _, r := range rule.Resources {
			for _, v := range rule.Verbs {
				if len(rule.ResourceNames) > 0 {
					for _, n := range rule.ResourceNames {
						out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{r}, Verbs: []string{v}, ResourceNames: []string{n}})
					}
				} else {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{r}, Verbs: []string{v}})
				}
			}
		}
	}
	for _, u := range rule.NonResourceURLs {
		for _, v := range rule.Verbs {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

func has(set []string, e string) bool {
	for _, s := range set {
		if s == e {
			return true
		}
	}
	return false
}

func hasAll(set, contains []string) bool {
	for _, e := range contains {
		if !has(set, e) {
			return false
		}
	}
	return true
}

func resourceCoversAll(set, covers []string) bool {
	if has(set, rbacv1.ResourceAll) || hasAll(set, covers) {
		return true
	}
	for _, p := range covers {
		if has(set, p) {
			continue
		}
		_, sub, ok := strings.Cut(p, "/")
		if !ok || !has(set, "*/"+sub) {
			return false
		}
	}
	return true
}

func nonResourceURLsCoversAll(set, covers []string) bool {
	for _, p := range covers {
		covered := false
		for _, o := range set {
			if o == p || (strings.HasSuffix(o, "*") && strings.HasPrefix(p, strings.TrimRight(o, "*"))) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

func ruleCovers(owner, sub *rbacv1.PolicyRule) bool {
	verbs := has(owner.Verbs, rbacv1.VerbAll) || hasAll(owner.Verbs, sub.Verbs)
	groups := has(owner.APIGroups, rbacv1.APIGroupAll) || hasAll(owner.APIGroups, sub.APIGroups)
	resources := resourceCoversAll(owner.Resources, sub.Resources)
	urls := nonResourceURLsCoversAll(owner.NonResourceURLs, sub.NonResourceURLs)
	names := len(owner.ResourceNames) == 0
	if len(sub.ResourceNames) > 0 {
		names = names || hasAll(owner.ResourceNames, sub.ResourceNames)
	}
	return verbs && groups && resources && names && urls
}

// CompactRules merges rules that differ only in their verbs (one group,
// one resource, at most one name), keeping first-seen order.
func CompactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type simple struct {
		group, resource string
		hasName         bool
		name            string
	}
	var out []rbacv1.PolicyRule
	at := map[simple]int{}
	for _, r := range rules {
		s, ok := simpleKey(r)
		if !ok {
			out = append(out, r)
			continue
		}
		k := simple{s[0], s[1], len(r.ResourceNames) == 1, s[2]}
		if i, ok := at[k]; ok {
			out[i].Verbs = append(out[i].Verbs, r.Verbs...)
			continue
		}
		at[k] = len(out)
		out = append(out, *r.DeepCopy())
	}
	return out
}

func simpleKey(r rbacv1.PolicyRule) ([3]string, bool) {
	if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
		return [3]string{}, false
	}
	plain := rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}
	if !reflect.DeepEqual(plain, r) {
		return [3]string{}, false
	}
	name := ""
	if len(r.ResourceNames) == 1 {
		name = r.ResourceNames[0]
	}
	return [3]string{r.APIGroups[0], r.Resources[0], name}, true
}

// CompactString is upstream's short form of a rule in escalation errors:
// {APIGroups:[""], Resources:["pods"], Verbs:["get"]}.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	if len(r.APIGroups) > 0 {
		parts = append(parts, fmt.Sprintf("APIGroups:%q", r.APIGroups))
	}
	if len(r.Resources) > 0 {
		parts = append(parts, fmt.Sprintf("Resources:%q", r.Resources))
	}
	if len(r.NonResourceURLs) > 0 {
		parts = append(parts, fmt.Sprintf("NonResourceURLs:%q", r.NonResourceURLs))
	}
	if len(r.ResourceNames) > 0 {
		parts = append(parts, fmt.Sprintf("ResourceNames:%q", r.ResourceNames))
	}
	if len(r.Verbs) > 0 {
		parts = append(parts, fmt.Sprintf("Verbs:%q", r.Verbs))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
