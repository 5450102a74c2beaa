package authorizer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// Well-known users and groups (upstream's k8s.io/apiserver/pkg/authentication/user).
const (
	SystemPrivilegedGroup = "system:masters"
	AllAuthenticated      = "system:authenticated"
	AllUnauthenticated    = "system:unauthenticated"
	Anonymous             = "system:anonymous"
)

// Attributes describe a request to authorize: a resource request (Verb on
// APIGroup/Resource[/Subresource] in Namespace, optionally Name) or a
// non-resource request (Verb on Path).
type Attributes struct {
	User            *authenticationv1.UserInfo
	Verb            string
	Namespace       string
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Name            string
	Path            string
	ResourceRequest bool
	// FieldSelector is the request's raw fieldSelector (list, watch and
	// deletecollection), for authorizers that decide by it (Node).
	FieldSelector string
}

// Decision is what an authorizer concludes about a request.
type Decision int

const (
	// DecisionDeny refuses the request, whatever later authorizers say.
	DecisionDeny Decision = iota
	// DecisionAllow allows the request.
	DecisionAllow
	// DecisionNoOpinion leaves the request to the next authorizer.
	DecisionNoOpinion
)

func (d Decision) String() string {
	switch d {
	case DecisionDeny:
		return "Deny"
	case DecisionAllow:
		return "Allow"
	default:
		return "NoOpinion"
	}
}

// Authorizer decides whether a request may proceed. reason explains the
// decision (shown after the 403 message, and in access reviews); err is an
// evaluation failure, which never allows on its own.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, string, error)
}

// Func adapts a function to Authorizer.
type Func func(ctx context.Context, a Attributes) (Decision, string, error)

func (f Func) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// RuleResolver lists what a user may do in a namespace, for
// SelfSubjectRulesReview. incomplete reports that some authorizer cannot
// list its rules (so the list may be missing permissions).
type RuleResolver interface {
	RulesFor(ctx context.Context, user *authenticationv1.UserInfo, namespace string) (resourceRules []authorizationv1.ResourceRule,
		nonResourceRules []authorizationv1.NonResourceRule, incomplete bool, err error)
}

// Union asks each authorizer in turn: the first Allow or Deny decides;
// NoOpinion moves on. With no decision the reasons of every member are
// joined by newlines and their errors aggregated, as upstream's union.
type Union []Authorizer

func (u Union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var reasons []string
	var errs []error
	for _, z := range u {
		d, reason, err := z.Authorize(ctx, a)
		if d == DecisionAllow || d == DecisionDeny {
			return d, reason, err
		}
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
	}
	return DecisionNoOpinion, strings.Join(reasons, "\n"), aggregate(errs)
}

// UnionRuleResolver concatenates the rules of its members.
type UnionRuleResolver []RuleResolver

func (u UnionRuleResolver) RulesFor(ctx context.Context, user *authenticationv1.UserInfo, namespace string) ([]authorizationv1.ResourceRule,
	[]authorizationv1.NonResourceRule, bool, error) {
	var (
		rr         []authorizationv1.ResourceRule
		nr         []authorizationv1.NonResourceRule
		incomplete bool
		errs       []error
	)
	for _, r := range u {
		a, b, inc, err := r.RulesFor(ctx, user, namespace)
		rr = append(rr, a...)
		nr = append(nr, b...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rr, nr, incomplete, aggregate(errs)
}

// aggregate is upstream's utilerrors.NewAggregate message: one error as
// itself, several as "[a, b]".
func aggregate(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}

// AlwaysAllow allows everything (--authorization-mode=AlwaysAllow).
type AlwaysAllow struct{}

func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionAllow, "", nil
}

func (AlwaysAllow) RulesFor(context.Context, *authenticationv1.UserInfo, string) ([]authorizationv1.ResourceRule,
	[]authorizationv1.NonResourceRule, bool, error) {
	return []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		[]authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}, false, nil
}

// AlwaysDeny has no opinion on anything, with upstream's reason, so that a
// later authorizer may still allow (--authorization-mode=AlwaysDeny).
type AlwaysDeny struct{}

func (AlwaysDeny) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionNoOpinion, "Everything is forbidden.", nil
}

func (AlwaysDeny) RulesFor(context.Context, *authenticationv1.UserInfo, string) ([]authorizationv1.ResourceRule,
	[]authorizationv1.NonResourceRule, bool, error) {
	return []authorizationv1.ResourceRule{}, []authorizationv1.NonResourceRule{}, false, nil
}

// Node is a Node authorizer without a graph: it never has an opinion. The
// API server's --authorization-mode=Node uses pkg/auth/node instead.
type Node struct{}

func (Node) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionNoOpinion, "", nil
}

func (Node) RulesFor(context.Context, *authenticationv1.UserInfo, string) ([]authorizationv1.ResourceRule,
	[]authorizationv1.NonResourceRule, bool, error) {
	return nil, nil, false, nil
}

// PrivilegedGroups allows every request of a member of one of its groups
// and has no opinion otherwise (upstream puts system:masters first).
type PrivilegedGroups []string

func (p PrivilegedGroups) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.User != nil {
		for _, g := range a.User.Groups {
			for _, pg := range p {
				if g == pg {
					return DecisionAllow, "", nil
				}
			}
		}
	}
	return DecisionNoOpinion, "", nil
}

// Modes are upstream's --authorization-mode names skiff accepts.
var Modes = []string{"AlwaysAllow", "AlwaysDeny", "Node", "RBAC"}

// ParseModes splits and checks a --authorization-mode value as upstream
// does: a comma-separated list of known modes, each at most once.
func ParseModes(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("at least one authorization-mode must be passed")
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		known := false
		for _, k := range Modes {
			known = known || k == m
		}
		if !known {
			if m == "ABAC" || m == "Webhook" {
				return nil, fmt.Errorf("authorization-mode %q is not supported by skiff", m)
			}
			return nil, fmt.Errorf("authorization-mode %q is not a valid mode", m)
		}
		if seen[m] {
			return nil, fmt.Errorf("authorization-mode %q has mode specified more than once", m)
		}
		seen[m] = true
		out = append(out, m)
	}
	return out, nil
}
