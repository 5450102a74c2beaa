package flowcontrol

import (
	"fmt"
	"math"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	supportedVerbs                    = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
	supportedDistinguishers           = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
	supportedSubjectKinds             = []string{string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindUser)}
	supportedEnablements              = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}
	supportedLimitResponseTypes       = []string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}
	maxQueues                   int32 = 10 * 1000 * 1000
)

// maxHashBits is the entropy shuffle sharding can draw from one hash.
const maxHashBits = 60

const nsErrIntro = "each member of this list must be '*' or a DNS-1123 label; "

// ValidateFlowSchema validates a FlowSchema; the mandatory schemas' specs
// are fixed.
func ValidateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&fs.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateFlowSchemaSpec(fs.Name, &fs.Spec, specPath)...)
	for _, mand := range MandatoryFlowSchemas() {
		if mand.Name == fs.Name && !equality.Semantic.DeepEqual(fs.Spec, mand.Spec) {
			allErrs = append(allErrs, field.Invalid(specPath, fs.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
		}
	}
	return append(allErrs, validateFlowSchemaStatus(&fs.Status, field.NewPath("status"))...)
}

// ValidateFlowSchemaUpdate validates the new object as a new one.
func ValidateFlowSchemaUpdate(fs, old *flowcontrolv1.FlowSchema) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&fs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateFlowSchema(fs)...)
}

// ValidateFlowSchemaStatusUpdate validates the conditions.
func ValidateFlowSchemaStatusUpdate(fs, old *flowcontrolv1.FlowSchema) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&fs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateFlowSchemaStatus(&fs.Status, field.NewPath("status"))...)
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mp := fldPath.Child("matchingPrecedence")
	if spec.MatchingPrecedence <= 0 {
		allErrs = append(allErrs, field.Invalid(mp, spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		allErrs = append(allErrs, field.Invalid(mp, spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		allErrs = append(allErrs, field.Invalid(mp, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if dm := spec.DistinguisherMethod; dm != nil && !slices.Contains(supportedDistinguishers, string(dm.Type)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("distinguisherMethod", "type"), dm, supportedDistinguishers))
	}
	plPath := fldPath.Child("priorityLevelConfiguration", "name")
	if n := spec.PriorityLevelConfiguration.Name; n != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(n, false) {
			allErrs = append(allErrs, field.Invalid(plPath, n, msg))
		}
	} else {
		allErrs = append(allErrs, field.Required(plPath, "must reference a priority level"))
	}
	for i := range spec.Rules {
		allErrs = append(allErrs, validateRules(&spec.Rules[i], fldPath.Child("rules").Index(i))...)
	}
	return allErrs
}

func validateRules(rule *flowcontrolv1.PolicyRulesWithSubjects, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.Subjects) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rule.Subjects {
		allErrs = append(allErrs, validateSubject(&rule.Subjects[i], fldPath.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rule.ResourceRules {
		allErrs = append(allErrs, validateResourceRule(&rule.ResourceRules[i], fldPath.Child("resourceRules").Index(i))...)
	}
	for i := range rule.NonResourceRules {
		allErrs = append(allErrs, validateNonResourceRule(&rule.NonResourceRules[i], fldPath.Child("nonResourceRules").Index(i))...)
	}
	return allErrs
}

func validateSubject(s *flowcontrolv1.Subject, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	notUser := func() {
		if s.User != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("user"), "user is forbidden when subject kind is not 'User'"))
		}
	}
	notGroup := func() {
		if s.Group != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("group"), "group is forbidden when subject kind is not 'Group'"))
		}
	}
	notSA := func() {
		if s.ServiceAccount != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
		}
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		p := fldPath.Child("serviceAccount")
		if sa := s.ServiceAccount; sa == nil {
			allErrs = append(allErrs, field.Required(p, "serviceAccount is required when subject kind is 'ServiceAccount'"))
		} else {
			if sa.Name == "" {
				allErrs = append(allErrs, field.Required(p.Child("name"), ""))
			} else if sa.Name != flowcontrolv1.NameAll {
				for _, msg := range apimachineryvalidation.ValidateServiceAccountName(sa.Name, false) {
					allErrs = append(allErrs, field.Invalid(p.Child("name"), sa.Name, msg))
				}
			}
			if sa.Namespace == "" {
				allErrs = append(allErrs, field.Required(p.Child("namespace"), "must specify namespace for service account"))
			} else {
				for _, msg := range apimachineryvalidation.ValidateNamespaceName(sa.Namespace, false) {
					allErrs = append(allErrs, field.Invalid(p.Child("namespace"), sa.Namespace, msg))
				}
			}
		}
		notUser()
		notGroup()
	case flowcontrolv1.SubjectKindUser:
		p := fldPath.Child("user")
		if s.User == nil {
			allErrs = append(allErrs, field.Required(p, "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		notSA()
		notGroup()
	case flowcontrolv1.SubjectKindGroup:
		p := fldPath.Child("group")
		if s.Group == nil {
			allErrs = append(allErrs, field.Required(p, "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		notSA()
		notUser()
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), s.Kind, supportedSubjectKinds))
	}
	return allErrs
}

func validateVerbs(verbs []string, fldPath *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(fldPath, "verbs must contain at least one value")}
	case slices.Contains(verbs, "*"):
		if len(verbs) > 1 {
			return field.ErrorList{field.Invalid(fldPath, verbs, "if '*' is present, must not specify other verbs")}
		}
	default:
		for _, v := range verbs {
			if !slices.Contains(supportedVerbs, v) {
				return field.ErrorList{field.NotSupported(fldPath, verbs, supportedVerbs)}
			}
		}
	}
	return nil
}

func validateResourceRule(rule *flowcontrolv1.ResourcePolicyRule, fldPath *field.Path) field.ErrorList {
	allErrs := validateVerbs(rule.Verbs, fldPath.Child("verbs"))
	if len(rule.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	} else if len(rule.APIGroups) > 1 && slices.Contains(rule.APIGroups, "*") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroups"), rule.APIGroups, "if '*' is present, must not specify other api groups"))
	}
	if len(rule.Resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	} else if len(rule.Resources) > 1 && slices.Contains(rule.Resources, "*") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("resources"), rule.Resources, "if '*' is present, must not specify other resources"))
	}
	nsPath := fldPath.Child("namespaces")
	switch {
	case len(rule.Namespaces) == 0 && !rule.ClusterScope:
		allErrs = append(allErrs, field.Required(nsPath, "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(rule.Namespaces, "*"):
		if len(rule.Namespaces) > 1 {
			allErrs = append(allErrs, field.Invalid(nsPath, rule.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range rule.Namespaces {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
				allErrs = append(allErrs, field.Invalid(nsPath.Index(i), ns, nsErrIntro+msg))
			}
		}
	}
	return allErrs
}

func validateNonResourceRule(rule *flowcontrolv1.NonResourcePolicyRule, fldPath *field.Path) field.ErrorList {
	allErrs := validateVerbs(rule.Verbs, fldPath.Child("verbs"))
	p := fldPath.Child("nonResourceURLs")
	switch {
	case len(rule.NonResourceURLs) == 0:
		allErrs = append(allErrs, field.Required(p, "nonResourceURLs must contain at least one value"))
	case slices.Contains(rule.NonResourceURLs, "*"):
		if len(rule.NonResourceURLs) > 1 {
			allErrs = append(allErrs, field.Invalid(p, rule.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range rule.NonResourceURLs {
			if msg := nonResourceURLProblem(u); msg != "" {
				allErrs = append(allErrs, field.Invalid(p.Index(i), u, msg))
			}
		}
	}
	return allErrs
}

// nonResourceURLProblem: a path starting with a slash, without spaces or
// double slashes, with at most a trailing "/*" wildcard.
func nonResourceURLProblem(path string) string {
	switch {
	case path == "":
		return "must not be empty"
	case path == "/":
		return ""
	case !strings.HasPrefix(path, "/"):
		return "must start with slash"
	case strings.Contains(path, " "):
		return "must not contain white-space"
	case strings.Contains(path, "//"):
		return "must not contain double slash"
	}
	if n := strings.Count(path, "*"); n > 1 || (n == 1 && !strings.HasSuffix(path, "/*")) {
		return "wildcard can only do suffix matching"
	}
	return ""
}

func validateFlowSchemaStatus(status *flowcontrolv1.FlowSchemaStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[flowcontrolv1.FlowSchemaConditionType]bool{}
	for i, c := range status.Conditions {
		p := fldPath.Child("conditions").Index(i)
		if seen[c.Type] {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), c.Type))
		}
		seen[c.Type] = true
		if c.Type == "" {
			allErrs = append(allErrs, field.Required(p.Child("type"), "must not be empty"))
		}
	}
	return allErrs
}

// ValidatePriorityLevelConfiguration validates a priority level; the
// mandatory levels' specs are fixed, except the exempt level's
// spec.exempt, which administrators may tune.
func ValidatePriorityLevelConfiguration(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&pl.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validatePriorityLevelSpec(&pl.Spec, pl.Name, specPath)...)
	for _, mand := range MandatoryPriorityLevelConfigurations() {
		if mand.Name != pl.Name {
			continue
		}
		have := pl.Spec.DeepCopy()
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			have.Exempt = mand.Spec.Exempt
			if !equality.Semantic.DeepEqual(*have, mand.Spec) {
				allErrs = append(allErrs, field.Invalid(specPath, pl.Spec, fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)))
			}
		} else if !equality.Semantic.DeepEqual(*have, mand.Spec) {
			allErrs = append(allErrs, field.Invalid(specPath, pl.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)))
		}
	}
	return append(allErrs, validatePriorityLevelStatus(&pl.Status, field.NewPath("status"))...)
}

// ValidatePriorityLevelConfigurationUpdate validates the new object as a
// new one.
func ValidatePriorityLevelConfigurationUpdate(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&pl.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidatePriorityLevelConfiguration(pl)...)
}

// ValidatePriorityLevelConfigurationStatusUpdate validates the conditions.
func ValidatePriorityLevelConfigurationStatusUpdate(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&pl.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validatePriorityLevelStatus(&pl.Status, field.NewPath("status"))...)
}

func validatePriorityLevelSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec, name string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("type"), spec.Type, "type must be 'Exempt' if and only if name is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := spec.Exempt; e != nil {
			p := fldPath.Child("exempt")
			if e.NominalConcurrencyShares != nil && *e.NominalConcurrencyShares < 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("nominalConcurrencyShares"), *e.NominalConcurrencyShares, "must be a non-negative number"))
			}
			allErrs = append(allErrs, validatePercent(e.LendablePercent, p.Child("lendablePercent"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("exempt"), "must be nil if the type is Limited"))
		}
		if spec.Limited == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("limited"), "must not be empty when type is Limited"))
		} else {
			allErrs = append(allErrs, validateLimited(spec.Limited, fldPath.Child("limited"))...)
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), spec.Type, supportedEnablements))
	}
	return allErrs
}

func validatePercent(v *int32, fldPath *field.Path) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(fldPath, *v, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func validateLimited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
	}
	allErrs = append(allErrs, validateLimitResponse(l.LimitResponse, fldPath.Child("limitResponse"))...)
	allErrs = append(allErrs, validatePercent(l.LendablePercent, fldPath.Child("lendablePercent"))...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	return allErrs
}

func validateLimitResponse(lr flowcontrolv1.LimitResponse, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing == nil {
			allErrs = append(allErrs, field.Required(fldPath.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited"))
		} else {
			allErrs = append(allErrs, validateQueuing(lr.Queuing, fldPath.Child("queuing"))...)
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), lr.Type, supportedLimitResponseTypes))
	}
	return allErrs
}

func validateQueuing(q *flowcontrolv1.QueuingConfiguration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	hp := fldPath.Child("handSize")
	switch {
	case q.HandSize <= 0:
		allErrs = append(allErrs, field.Invalid(hp, q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		allErrs = append(allErrs, field.Invalid(hp, q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case requiredEntropyBits(q.Queues, q.HandSize) > maxHashBits:
		allErrs = append(allErrs, field.Invalid(hp, q.HandSize,
			fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, maxHashBits)))
	}
	return allErrs
}

// requiredEntropyBits is what shuffle sharding needs to deal a hand of
// handSize from deckSize cards.
func requiredEntropyBits(deckSize, handSize int32) int {
	return int(math.Ceil(math.Log2(float64(deckSize)) * float64(handSize)))
}

func validatePriorityLevelStatus(status *flowcontrolv1.PriorityLevelConfigurationStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[flowcontrolv1.PriorityLevelConfigurationConditionType]bool{}
	for i, c := range status.Conditions {
		p := fldPath.Child("conditions").Index(i)
		if seen[c.Type] {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), c.Type))
		}
		seen[c.Type] = true
		if c.Type == "" {
			allErrs = append(allErrs, field.Required(p.Child("type"), "must not be empty"))
		}
	}
	return allErrs
}
