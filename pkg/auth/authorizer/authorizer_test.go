package authorizer

import (
	"context"
	"errors"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

func fixed(d Decision, reason string, err error) Authorizer {
	return Func(func(context.Context, Attributes) (Decision, string, error) { return d, reason, err })
}

func TestUnion(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		u          Union
		want       Decision
		wantReason string
		wantErr    string
	}{
		{"empty has no opinion", Union{}, DecisionNoOpinion, "", ""},
		{"first allow wins", Union{fixed(DecisionAllow, "a", nil), fixed(DecisionDeny, "d", nil)}, DecisionAllow, "a", ""},
		{"deny is final", Union{fixed(DecisionNoOpinion, "x", nil), fixed(DecisionDeny, "d", nil), fixed(DecisionAllow, "a", nil)}, DecisionDeny, "d", ""},
		{"no opinion passes on", Union{fixed(DecisionNoOpinion, "x", nil), fixed(DecisionAllow, "a", nil)}, DecisionAllow, "a", ""},
		{"reasons and errors joined", Union{fixed(DecisionNoOpinion, "x", boom), fixed(DecisionNoOpinion, "", nil), fixed(DecisionNoOpinion, "y", boom)},
			DecisionNoOpinion, "x\ny", "[boom, boom]"},
		{"AlwaysDeny then AlwaysAllow", Union{AlwaysDeny{}, AlwaysAllow{}}, DecisionAllow, "", ""},
		{"AlwaysDeny alone", Union{AlwaysDeny{}, Node{}}, DecisionNoOpinion, "Everything is forbidden.", ""},
	}
	for _, tt := range tests {
		d, reason, err := tt.u.Authorize(context.Background(), Attributes{})
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if d != tt.want || reason != tt.wantReason || gotErr != tt.wantErr {
			t.Errorf("%s: got %v %q %q, want %v %q %q", tt.name, d, reason, gotErr, tt.want, tt.wantReason, tt.wantErr)
		}
	}
}

func TestPrivilegedGroups(t *testing.T) {
	p := PrivilegedGroups{SystemPrivilegedGroup}
	for _, tt := range []struct {
		user *authenticationv1.UserInfo
		want Decision
	}{
		{nil, DecisionNoOpinion},
		{&authenticationv1.UserInfo{Username: "a", Groups: []string{"system:authenticated"}}, DecisionNoOpinion},
		{&authenticationv1.UserInfo{Username: "system:masters", Groups: []string{"x"}}, DecisionNoOpinion},
		{&authenticationv1.UserInfo{Username: "a", Groups: []string{"x", "system:masters"}}, DecisionAllow},
	} {
		if d, _, _ := p.Authorize(context.Background(), Attributes{User: tt.user}); d != tt.want {
			t.Errorf("%+v: %v, want %v", tt.user, d, tt.want)
		}
	}
}

func TestParseModes(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"Node,RBAC", "Node RBAC", ""},
		{"AlwaysAllow", "AlwaysAllow", ""},
		{" RBAC , AlwaysDeny", "RBAC AlwaysDeny", ""},
		{"", "", "at least one authorization-mode must be passed"},
		{"RBAC,RBAC", "", `authorization-mode "RBAC" has mode specified more than once`},
		{"rbac", "", `authorization-mode "rbac" is not a valid mode`},
		{"Webhook", "", `authorization-mode "Webhook" is not supported by skiff`},
	} {
		got, err := ParseModes(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if strings.Join(got, " ") != tt.want || gotErr != tt.err {
			t.Errorf("%q: %v %q, want %q %q", tt.in, got, gotErr, tt.want, tt.err)
		}
	}
}

func TestAlwaysAllowRules(t *testing.T) {
	rr, nr, inc, err := UnionRuleResolver{AlwaysAllow{}, AlwaysDeny{}, Node{}}.RulesFor(context.Background(), nil, "default")
	if err != nil || inc || len(rr) != 1 || len(nr) != 1 || rr[0].Verbs[0] != "*" || nr[0].NonResourceURLs[0] != "*" {
		t.Errorf("rules %v %v %v %v", rr, nr, inc, err)
	}
}
