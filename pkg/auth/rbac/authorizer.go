package rbac

import (
	"context"
	"errors"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// PolicyRuleResolver resolves RBAC rules: a user's in a namespace, and a
// binding's role's (what the escalation checks of the RBAC registry need).
type PolicyRuleResolver interface {
	PolicyRulesFor(ctx context.Context, user *authenticationv1.UserInfo, namespace string) ([]rbacv1.PolicyRule, error)
	GetRoleReferenceRules(ctx context.Context, ref rbacv1.RoleRef, bindingNS string) ([]rbacv1.PolicyRule, error)
}

// Authorizer is the RBAC authorizer over an Index. It allows or has no
// opinion, never denies (RBAC is deny by default through the union).
type Authorizer struct {
	Index *Index
}

// New returns the RBAC authorizer reading x.
func New(x *Index) *Authorizer { return &Authorizer{Index: x} }

// Authorize implements authorizer.Authorizer.
func (z *Authorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.User == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	var errs []error
	reason := ""
	z.Index.visit(a.User, a.Namespace, func(b *binding, subject int, rules []rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
			return true
		}
		if RulesAllow(&a, rules) {
			reason = b.reasons[subject]
			return false
		}
		return true
	}, false)
	if reason != "" {
		return authorizer.DecisionAllow, reason, nil
	}
	if len(errs) > 0 {
		return authorizer.DecisionNoOpinion, "RBAC: " + aggregateMessage(errs), nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// PolicyRulesFor returns every rule that applies to user in namespace
// (cluster role bindings' and, with a namespace, its role bindings'), and
// the errors met resolving them (a binding to a missing role).
func (z *Authorizer) PolicyRulesFor(_ context.Context, user *authenticationv1.UserInfo, namespace string) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	if user == nil {
		return nil, nil
	}
	z.Index.visit(user, namespace, func(_ *binding, _ int, r []rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
		}
		rules = append(rules, r...)
		return true
	}, true)
	if len(errs) > 0 {
		return rules, errors.New(aggregateMessage(errs))
	}
	return rules, nil
}

// GetRoleReferenceRules returns the rules of the role a binding in
// bindingNS refers to.
func (z *Authorizer) GetRoleReferenceRules(_ context.Context, ref rbacv1.RoleRef, bindingNS string) ([]rbacv1.PolicyRule, error) {
	return z.Index.GetRoleReferenceRules(ref, bindingNS)
}

// RulesFor implements authorizer.RuleResolver (SelfSubjectRulesReview):
// RBAC's rules are complete.
func (z *Authorizer) RulesFor(ctx context.Context, user *authenticationv1.UserInfo, namespace string) ([]authorizationv1.ResourceRule,
	[]authorizationv1.NonResourceRule, bool, error) {
	rules, err := z.PolicyRulesFor(ctx, user, namespace)
	var rr []authorizationv1.ResourceRule
	var nr []authorizationv1.NonResourceRule
	for _, r := range rules {
		if len(r.Resources) > 0 {
			rr = append(rr, authorizationv1.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			nr = append(nr, authorizationv1.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	return rr, nr, false, err
}

// visit calls fn with the rules of each binding that applies to user:
// cluster role bindings first, then the role bindings of namespace. The
// subject is the index of the first of the binding's subjects that applies.
// fn returning false stops the visit. With dedupe a binding reached through
// two of the user's keys is visited once (without it the visit stops at the
// first allowing rule anyway, a repeat only costs a second look).
func (x *Index) visit(user *authenticationv1.UserInfo, namespace string,
	fn func(b *binding, subject int, rules []rbacv1.PolicyRule, err error) bool, dedupe bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	saNS, saName, isSA := serviceAccountOf(user.Username)
	var seen map[*binding]bool
	if dedupe {
		seen = map[*binding]bool{}
	}
	do := func(list []*binding, bindingNS string) bool {
		for _, b := range list {
			if seen != nil {
				if seen[b] {
					continue
				}
				seen[b] = true
			}
			i, ok := appliesTo(user, b.subjects, bindingNS)
			if !ok {
				continue
			}
			rules, err := x.roleRules(b.roleRef, bindingNS)
			if !fn(b, i, rules, err) {
				return false
			}
		}
		return true
	}
	// Cluster role bindings.
	if !do(x.crbBySubject[subjectKey{kind: 'U', name: user.Username}], "") {
		return
	}
	for _, g := range user.Groups {
		if !do(x.crbBySubject[subjectKey{kind: 'G', name: g}], "") {
			return
		}
	}
	if isSA && !do(x.crbBySubject[subjectKey{kind: 'S', ns: saNS, name: saName}], "") {
		return
	}
	if namespace == "" {
		return
	}
	if !do(x.rbBySubject[nsSubjectKey{namespace, subjectKey{kind: 'U', name: user.Username}}], namespace) {
		return
	}
	for _, g := range user.Groups {
		if !do(x.rbBySubject[nsSubjectKey{namespace, subjectKey{kind: 'G', name: g}}], namespace) {
			return
		}
	}
	if isSA {
		do(x.rbBySubject[nsSubjectKey{namespace, subjectKey{kind: 'S', ns: saNS, name: saName}}], namespace)
	}
}

// appliesTo returns the index of the first subject that names user.
func appliesTo(user *authenticationv1.UserInfo, subjects []rbacv1.Subject, namespace string) (int, bool) {
	for i := range subjects {
		s := &subjects[i]
		switch s.Kind {
		case rbacv1.UserKind:
			if user.Username == s.Name {
				return i, true
			}
		case rbacv1.GroupKind:
			for _, g := range user.Groups {
				if g == s.Name {
					return i, true
				}
			}
		case rbacv1.ServiceAccountKind:
			ns := namespace
			if s.Namespace != "" {
				ns = s.Namespace
			}
			if ns != "" && matchesSAUsername(user.Username, ns, s.Name) {
				return i, true
			}
		}
	}
	return 0, false
}

// matchesSAUsername reports username == "system:serviceaccount:"+ns+":"+name
// without building the string.
func matchesSAUsername(username, ns, name string) bool {
	rest, ok := strings.CutPrefix(username, "system:serviceaccount:")
	if !ok || len(rest) != len(ns)+1+len(name) {
		return false
	}
	return strings.HasPrefix(rest, ns) && rest[len(ns)] == ':' && strings.HasSuffix(rest, name)
}

// aggregateMessage formats errors as upstream's utilerrors aggregate.
func aggregateMessage(errs []error) string {
	if len(errs) == 1 {
		return errs[0].Error()
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}
