package flowcontrol

import (
	"slices"
	"sort"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Request is what classification looks at: the requesting user and what
// the request does.
type Request struct {
	User   string
	Groups []string
	// IsResourceRequest: Verb, APIGroup, Resource, Subresource and
	// Namespace describe it; otherwise Verb (the lower-case method) and
	// Path.
	IsResourceRequest                                      bool
	Verb, APIGroup, Resource, Subresource, Namespace, Path string
}

// Classifier assigns requests to a FlowSchema and its priority level, as
// upstream's API Priority and Fairness filter does (skiff reports the
// match in upstream's response headers; it does not queue or reject by
// it). It is immutable; build a new one when the configuration changes.
type Classifier struct {
	schemas []classified
}

type classified struct {
	fs      *flowcontrolv1.FlowSchema
	levelID types.UID
}

// NewClassifier orders the schemas as upstream does (matchingPrecedence,
// then name), leaving out those whose priority level does not exist.
func NewClassifier(schemas []*flowcontrolv1.FlowSchema, levels []*flowcontrolv1.PriorityLevelConfiguration) *Classifier {
	uids := map[string]types.UID{}
	for _, pl := range levels {
		uids[pl.Name] = pl.UID
	}
	c := &Classifier{}
	for _, fs := range schemas {
		if uid, ok := uids[fs.Spec.PriorityLevelConfiguration.Name]; ok {
			c.schemas = append(c.schemas, classified{fs: fs, levelID: uid})
		}
	}
	sort.SliceStable(c.schemas, func(i, j int) bool {
		a, b := c.schemas[i].fs, c.schemas[j].fs
		if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
			return a.Spec.MatchingPrecedence < b.Spec.MatchingPrecedence
		}
		return a.Name < b.Name
	})
	return c
}

// Classify returns the first matching schema and its level's UID.
func (c *Classifier) Classify(r *Request) (schema *flowcontrolv1.FlowSchema, levelUID types.UID, ok bool) {
	if c == nil {
		return nil, "", false
	}
	for _, s := range c.schemas {
		for i := range s.fs.Spec.Rules {
			if matchesRule(r, &s.fs.Spec.Rules[i]) {
				return s.fs, s.levelID, true
			}
		}
	}
	return nil, "", false
}

func matchesRule(r *Request, rule *flowcontrolv1.PolicyRulesWithSubjects) bool {
	if !slices.ContainsFunc(rule.Subjects, func(s flowcontrolv1.Subject) bool { return matchesSubject(r, &s) }) {
		return false
	}
	if r.IsResourceRequest {
		return slices.ContainsFunc(rule.ResourceRules, func(rr flowcontrolv1.ResourcePolicyRule) bool { return matchesResourceRule(r, &rr) })
	}
	return slices.ContainsFunc(rule.NonResourceRules, func(nr flowcontrolv1.NonResourcePolicyRule) bool {
		return contains(nr.Verbs, r.Verb, flowcontrolv1.VerbAll) && matchesURL(nr.NonResourceURLs, r.Path)
	})
}

const serviceAccountPrefix = "system:serviceaccount:"

func matchesSubject(r *Request, s *flowcontrolv1.Subject) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == r.User)
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(r.Groups, s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		ns, name, ok := strings.Cut(strings.TrimPrefix(r.User, serviceAccountPrefix), ":")
		if !ok || !strings.HasPrefix(r.User, serviceAccountPrefix) || ns != s.ServiceAccount.Namespace {
			return false
		}
		return s.ServiceAccount.Name == flowcontrolv1.NameAll || s.ServiceAccount.Name == name
	}
	return false
}

func matchesResourceRule(r *Request, rule *flowcontrolv1.ResourcePolicyRule) bool {
	resource := r.Resource
	if r.Subresource != "" {
		resource += "/" + r.Subresource
	}
	if !contains(rule.Verbs, r.Verb, flowcontrolv1.VerbAll) || !contains(rule.Resources, resource, flowcontrolv1.ResourceAll) ||
		!contains(rule.APIGroups, r.APIGroup, flowcontrolv1.APIGroupAll) {
		return false
	}
	if r.Namespace == "" {
		return rule.ClusterScope
	}
	return contains(rule.Namespaces, r.Namespace, flowcontrolv1.NamespaceEvery)
}

// matchesURL: "*", the path itself, or a "/prefix/*" covering it.
func matchesURL(rules []string, path string) bool {
	for _, u := range rules {
		if u == flowcontrolv1.NonResourceAll || u == path {
			return true
		}
		if prefix, ok := strings.CutSuffix(u, "*"); ok && strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

func contains(list []string, s, all string) bool {
	return slices.Contains(list, s) || slices.Contains(list, all)
}
