package flowcontrol

import (
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

// Upstream's bootstrap configuration: each flow schema's priority level
// and matching precedence, and each level's shares, lendable percent and
// queues.
func TestBootstrapObjectsMatchUpstream(t *testing.T) {
	type fsWant struct {
		pl         string
		precedence int32
		dm         string
	}
	wantFS := map[string]fsWant{
		"exempt":                       {"exempt", 1, ""},
		"probes":                       {"exempt", 2, ""},
		"system-leader-election":       {"leader-election", 100, "ByUser"},
		"endpoint-controller":          {"workload-high", 150, "ByUser"},
		"workload-leader-election":     {"leader-election", 200, "ByUser"},
		"system-node-high":             {"node-high", 400, "ByUser"},
		"system-nodes":                 {"system", 500, "ByUser"},
		"kube-controller-manager":      {"workload-high", 800, "ByNamespace"},
		"kube-scheduler":               {"workload-high", 800, "ByNamespace"},
		"kube-system-service-accounts": {"workload-high", 900, "ByNamespace"},
		"service-accounts":             {"workload-low", 9000, "ByUser"},
		"global-default":               {"global-default", 9900, "ByUser"},
		"catch-all":                    {"catch-all", 10000, "ByUser"},
	}
	type plWant struct {
		typ                        string
		shares, lendable           int32
		queues, handSize, queueLen int32
	}
	wantPL := map[string]plWant{
		"exempt":          {"Exempt", 0, 0, 0, 0, 0},
		"catch-all":       {"Limited", 5, 0, 0, 0, 0},
		"system":          {"Limited", 30, 33, 64, 6, 50},
		"node-high":       {"Limited", 40, 25, 64, 6, 50},
		"leader-election": {"Limited", 10, 0, 16, 4, 50},
		"workload-high":   {"Limited", 40, 50, 128, 6, 50},
		"workload-low":    {"Limited", 100, 90, 128, 6, 50},
		"global-default":  {"Limited", 20, 50, 128, 6, 50},
	}
	levels := map[string]bool{}
	pls := append(MandatoryPriorityLevelConfigurations(), SuggestedPriorityLevelConfigurations()...)
	if len(pls) != len(wantPL) {
		t.Errorf("%d priority levels, want %d", len(pls), len(wantPL))
	}
	for _, pl := range pls {
		levels[pl.Name] = true
		w, ok := wantPL[pl.Name]
		if !ok {
			t.Errorf("unexpected priority level %s", pl.Name)
			continue
		}
		got := plWant{typ: string(pl.Spec.Type)}
		if l := pl.Spec.Limited; l != nil {
			got.shares, got.lendable = *l.NominalConcurrencyShares, *l.LendablePercent
			if q := l.LimitResponse.Queuing; q != nil {
				got.queues, got.handSize, got.queueLen = q.Queues, q.HandSize, q.QueueLengthLimit
			}
		}
		if got != w {
			t.Errorf("priority level %s: %+v, want %+v", pl.Name, got, w)
		}
		checkBootstrapObject(t, pl, func() { DefaultPriorityLevelConfiguration(pl) }, ValidatePriorityLevelConfiguration(pl).ToAggregate())
	}
	fss := append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...)
	if len(fss) != len(wantFS) {
		t.Errorf("%d flow schemas, want %d", len(fss), len(wantFS))
	}
	for _, fs := range fss {
		w, ok := wantFS[fs.Name]
		if !ok {
			t.Errorf("unexpected flow schema %s", fs.Name)
			continue
		}
		got := fsWant{pl: fs.Spec.PriorityLevelConfiguration.Name, precedence: fs.Spec.MatchingPrecedence}
		if fs.Spec.DistinguisherMethod != nil {
			got.dm = string(fs.Spec.DistinguisherMethod.Type)
		}
		if got != w {
			t.Errorf("flow schema %s: %+v, want %+v", fs.Name, got, w)
		}
		if !levels[got.pl] {
			t.Errorf("flow schema %s references missing level %s", fs.Name, got.pl)
		}
		checkBootstrapObject(t, fs, func() { DefaultFlowSchema(fs) }, ValidateFlowSchema(fs).ToAggregate())
	}
}

// checkBootstrapObject: valid, annotated for autoupdate, unchanged by
// defaulting.
func checkBootstrapObject(t *testing.T, obj interface {
	metav1.Object
	DeepCopyObject() runtime.Object
}, def func(), err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s invalid: %v", obj.GetName(), err)
	}
	if !IsAutoUpdate(obj) {
		t.Errorf("%s lacks the autoupdate annotation", obj.GetName())
	}
	before := obj.DeepCopyObject()
	def()
	if !equality.Semantic.DeepEqual(before, obj.DeepCopyObject()) {
		t.Errorf("%s changed by defaulting", obj.GetName())
	}
}

func TestDefaults(t *testing.T) {
	pl := &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{
			Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}}},
	}}
	DefaultPriorityLevelConfiguration(pl)
	l := pl.Spec.Limited
	if *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || *l.LimitResponse.Queuing != (flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50}) {
		t.Errorf("limited defaults: %+v %+v", l, l.LimitResponse.Queuing)
	}
	zero := &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: new(int32(0))}}}
	DefaultPriorityLevelConfiguration(zero)
	if *zero.Spec.Limited.NominalConcurrencyShares != 0 {
		t.Errorf("an explicit 0 share was overwritten")
	}
	fs := &flowcontrolv1.FlowSchema{}
	DefaultFlowSchema(fs)
	if fs.Spec.MatchingPrecedence != 1000 {
		t.Errorf("matchingPrecedence = %d", fs.Spec.MatchingPrecedence)
	}
}

func validFS() *flowcontrolv1.FlowSchema {
	fs := newFS("mine", "workload-low", 500, flowcontrolv1.FlowDistinguisherMethodByUserType, users("alice"), allResources(), allNonResources())
	fs.Annotations = nil
	return fs
}

func TestValidateFlowSchema(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*flowcontrolv1.FlowSchema)
		want   []string
		msg    string
	}{
		{name: "valid", mutate: func(*flowcontrolv1.FlowSchema) {}},
		{name: "precedence zero", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 0 },
			want: []string{"spec.matchingPrecedence: Invalid value"}, msg: "spec.matchingPrecedence: Invalid value: 0: must be a positive value"},
		{name: "precedence too high", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 10001 },
			want: []string{"spec.matchingPrecedence: Invalid value"}, msg: "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"},
		{name: "precedence 1 reserved", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 1 },
			want: []string{"spec.matchingPrecedence: Invalid value"}, msg: "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"},
		{name: "no level", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.PriorityLevelConfiguration.Name = "" },
			want: []string{"spec.priorityLevelConfiguration.name: Required value"}},
		{name: "bad distinguisher", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.DistinguisherMethod.Type = "ByColor" },
			want: []string{"spec.distinguisherMethod.type: Unsupported value"}},
		{name: "no subjects", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.Rules[0].Subjects = nil },
			want: []string{"spec.rules[0].subjects: Required value"}},
		{name: "no rules", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].ResourceRules, fs.Spec.Rules[0].NonResourceRules = nil, nil
		}, want: []string{"spec.rules[0]: Required value"}},
		{name: "user subject with group", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].Subjects[0].Group = &flowcontrolv1.GroupSubject{Name: "g"}
		}, want: []string{"spec.rules[0].subjects[0].group: Forbidden"}},
		{name: "service account without namespace", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].Subjects = []flowcontrolv1.Subject{{Kind: "ServiceAccount", ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "*"}}}
		}, want: []string{"spec.rules[0].subjects[0].serviceAccount.namespace: Required value"}},
		{name: "unknown kind", mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.Rules[0].Subjects[0].Kind = "Robot" },
			want: []string{"spec.rules[0].subjects[0].kind: Unsupported value"}},
		{name: "wildcard verb with others", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].ResourceRules[0].Verbs = []string{"*", "get"}
		}, want: []string{"spec.rules[0].resourceRules[0].verbs: Invalid value"}},
		{name: "unsupported verb", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].ResourceRules[0].Verbs = []string{"escalate"}
		}, want: []string{"spec.rules[0].resourceRules[0].verbs: Unsupported value"}},
		{name: "namespaced rule without namespaces", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].ResourceRules[0].Namespaces, fs.Spec.Rules[0].ResourceRules[0].ClusterScope = nil, false
		}, want: []string{"spec.rules[0].resourceRules[0].namespaces: Required value"}},
		{name: "bad namespace", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].ResourceRules[0].Namespaces = []string{"Kube_System"}
		}, want: []string{"spec.rules[0].resourceRules[0].namespaces[0]: Invalid value"}},
		{name: "url without slash", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].NonResourceRules[0].NonResourceURLs = []string{"healthz"}
		}, want: []string{"spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value"},
			msg: `spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "healthz": must start with slash`},
		{name: "url with inner wildcard", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].NonResourceRules[0].NonResourceURLs = []string{"/a*b"}
		}, want: []string{"spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value"}},
		{name: "mandatory spec changed", mutate: func(fs *flowcontrolv1.FlowSchema) {
			*fs = *MandatoryFlowSchemas()[1]
			fs.Spec.MatchingPrecedence = 9999
		}, want: []string{"spec: Invalid value"}},
		{name: "duplicate condition", mutate: func(fs *flowcontrolv1.FlowSchema) {
			fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling"}, {Type: "Dangling"}}
		}, want: []string{"status.conditions[1].type: Duplicate value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := validFS()
			tt.mutate(fs)
			errs := ValidateFlowSchema(fs)
			registrytest.ExpectErrors(t, errs, tt.want...)
			if tt.msg != "" && (len(errs) == 0 || errs[0].Error() != tt.msg) {
				t.Errorf("got %v, want %q", errs, tt.msg)
			}
		})
	}
}

func validPL() *flowcontrolv1.PriorityLevelConfiguration {
	pl := newPL("mine", limited(10, 0, queuing(64, 6)))
	pl.Annotations = nil
	return pl
}

func TestValidatePriorityLevelConfiguration(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*flowcontrolv1.PriorityLevelConfiguration)
		want   []string
		msg    string
	}{
		{name: "valid", mutate: func(*flowcontrolv1.PriorityLevelConfiguration) {}},
		{name: "reject", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec = limited(1, 0, nil) }},
		{name: "zero shares allowed in v1", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Limited.NominalConcurrencyShares = new(int32(0))
		}},
		{name: "negative shares", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Limited.NominalConcurrencyShares = new(int32(-1))
		},
			want: []string{"spec.limited.nominalConcurrencyShares: Invalid value"}},
		{name: "exempt type for other name", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec = flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Exempt"}
		}, want: []string{"spec.type: Invalid value"}, msg: `spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'`},
		{name: "unknown type", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Type = "Unlimited" },
			want: []string{"spec.type: Unsupported value"}},
		{name: "limited missing", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Limited = nil },
			want: []string{"spec.limited: Required value"}},
		{name: "exempt set on limited", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Exempt = &flowcontrolv1.ExemptPriorityLevelConfiguration{}
		}, want: []string{"spec.exempt: Forbidden"}},
		{name: "lendable over 100", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Limited.LendablePercent = new(int32(101)) },
			want: []string{"spec.limited.lendablePercent: Invalid value"}, msg: "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive"},
		{name: "queue without queuing", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Limited.LimitResponse.Queuing = nil },
			want: []string{"spec.limited.limitResponse.queuing: Required value"}},
		{name: "reject with queuing", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Limited.LimitResponse.Type = "Reject" },
			want: []string{"spec.limited.limitResponse.queuing: Forbidden"}},
		{name: "hand larger than deck", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Limited.LimitResponse.Queuing.HandSize = 65
		}, want: []string{"spec.limited.limitResponse.queuing.handSize: Invalid value"},
			msg: "spec.limited.limitResponse.queuing.handSize: Invalid value: 65: should not be greater than queues (64)"},
		{name: "too much entropy", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Limited.LimitResponse.Queuing.Queues, pl.Spec.Limited.LimitResponse.Queuing.HandSize = 128, 10
		}, want: []string{"spec.limited.limitResponse.queuing.handSize: Invalid value"},
			msg: "spec.limited.limitResponse.queuing.handSize: Invalid value: 10: required entropy bits of deckSize 128 and handSize 10 should not be greater than 60"},
		{name: "zero queue length", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Spec.Limited.LimitResponse.Queuing.QueueLengthLimit = 0
		},
			want: []string{"spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value"}},
		{name: "exempt tuned", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			*pl = *MandatoryPriorityLevelConfigurations()[1]
			pl.Spec.Exempt.NominalConcurrencyShares = new(int32(7))
		}},
		{name: "catch-all changed", mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			*pl = *MandatoryPriorityLevelConfigurations()[0]
			pl.Spec.Limited.NominalConcurrencyShares = new(int32(7))
		}, want: []string{"spec: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := validPL()
			tt.mutate(pl)
			errs := ValidatePriorityLevelConfiguration(pl)
			registrytest.ExpectErrors(t, errs, tt.want...)
			if tt.msg != "" && (len(errs) == 0 || errs[0].Error() != tt.msg) {
				t.Errorf("got %v, want %q", errs, tt.msg)
			}
		})
	}
}

func TestUpdateBootstrap(t *testing.T) {
	want := SuggestedFlowSchemas()[0]
	cur := want.DeepCopy()
	if UpdateFlowSchema(cur, want, false) != nil {
		t.Errorf("unchanged object updated")
	}
	cur.Spec.MatchingPrecedence = 600
	if out := UpdateFlowSchema(cur, want, false); out == nil || out.Spec.MatchingPrecedence != want.Spec.MatchingPrecedence {
		t.Errorf("autoupdate object not brought back: %v", out)
	}
	cur.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
	if UpdateFlowSchema(cur, want, false) != nil {
		t.Errorf("suggested object with autoupdate false was rewritten")
	}
	if out := UpdateFlowSchema(cur, want, true); out == nil || !IsAutoUpdate(out) {
		t.Errorf("mandatory object not rewritten: %v", out)
	}
	exempt := MandatoryPriorityLevelConfigurations()[1]
	tuned := exempt.DeepCopy()
	tuned.Spec.Exempt.NominalConcurrencyShares = new(int32(9))
	if UpdatePriorityLevelConfiguration(tuned, exempt, true) != nil {
		t.Errorf("the exempt level's spec.exempt was reset")
	}
}

func TestSetDangling(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fs := SuggestedFlowSchemas()[0]
	if !SetDangling(fs, true, t0) {
		t.Fatal("no change reported")
	}
	c := fs.Status.Conditions[0]
	if c.Type != "Dangling" || c.Status != "False" || c.Reason != "Found" ||
		c.Message != `This FlowSchema references the PriorityLevelConfiguration object named "system" and it exists` {
		t.Errorf("condition = %+v", c)
	}
	later := metav1.NewTime(t0.Add(time.Hour))
	if SetDangling(fs, true, later) {
		t.Errorf("unchanged condition reported as changed")
	}
	if !SetDangling(fs, false, later) || fs.Status.Conditions[0].Status != "True" || fs.Status.Conditions[0].Reason != "NotFound" ||
		!fs.Status.Conditions[0].LastTransitionTime.Equal(&later) || len(fs.Status.Conditions) != 1 {
		t.Errorf("condition = %+v", fs.Status.Conditions)
	}
}

// Requests land in upstream's bootstrap schemas as upstream classifies
// them.
func TestClassify(t *testing.T) {
	fss := append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...)
	pls := append(MandatoryPriorityLevelConfigurations(), SuggestedPriorityLevelConfigurations()...)
	for _, pl := range pls {
		pl.UID = types.UID("pl-" + pl.Name)
	}
	c := NewClassifier(fss, pls)
	res := func(user string, groups []string, verb, group, resource, sub, ns string) *Request {
		return &Request{User: user, Groups: groups, IsResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns}
	}
	authed := []string{"system:authenticated"}
	tests := []struct {
		name   string
		req    *Request
		schema string
		level  string
	}{
		{"admin", res("admin", []string{"system:masters", "system:authenticated"}, "list", "", "pods", "", "default"), "exempt", "exempt"},
		{"probe", &Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/readyz"}, "probes", "exempt"},
		{"probe subpath is not a probe", &Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/readyz/etcd"}, "global-default", "global-default"},
		{"scheduler lease", res("system:kube-scheduler", authed, "update", "coordination.k8s.io", "leases", "", "kube-system"), "system-leader-election", "leader-election"},
		{"scheduler binding", res("system:kube-scheduler", authed, "create", "", "pods", "binding", "default"), "kube-scheduler", "workload-high"},
		{"node status", res("system:node:n1", []string{"system:nodes", "system:authenticated"}, "patch", "", "nodes", "status", ""), "system-node-high", "node-high"},
		{"node reads pods", res("system:node:n1", []string{"system:nodes", "system:authenticated"}, "list", "", "pods", "", ""), "system-nodes", "system"},
		{"kube-system SA", res("system:serviceaccount:kube-system:coredns", []string{"system:serviceaccounts", "system:authenticated"}, "list", "", "services", "", ""),
			"kube-system-service-accounts", "workload-high"},
		{"endpoint controller", res("system:serviceaccount:kube-system:endpoint-controller", []string{"system:serviceaccounts"}, "update", "", "endpoints", "", "default"),
			"endpoint-controller", "workload-high"},
		{"other SA", res("system:serviceaccount:default:app", []string{"system:serviceaccounts", "system:authenticated"}, "get", "", "configmaps", "", "default"),
			"service-accounts", "workload-low"},
		{"user", res("alice", authed, "get", "apps", "deployments", "", "default"), "global-default", "global-default"},
		{"nobody", res("x", nil, "get", "", "pods", "", "default"), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, level, ok := c.Classify(tt.req)
			if tt.schema == "" {
				if ok {
					t.Errorf("matched %s", fs.Name)
				}
				return
			}
			if !ok || fs.Name != tt.schema || level != types.UID("pl-"+tt.level) {
				t.Errorf("got %v %q, want %s %s", fs, level, tt.schema, tt.level)
			}
		})
	}
	// A schema whose level is missing is skipped.
	c = NewClassifier(fss, pls[:1])
	if fs, _, ok := c.Classify(res("alice", authed, "get", "", "pods", "", "default")); !ok || fs.Name != "catch-all" {
		t.Errorf("with only catch-all: %v", fs)
	}
}
