package customresource

import (
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FindCondition returns crd's condition of type t, or nil.
func FindCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// IsTrue reports whether crd's condition t is True.
func IsTrue(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	c := FindCondition(crd, t)
	return c != nil && c.Status == apiextensionsv1.ConditionTrue
}

// SetCondition sets (or adds) a condition; lastTransitionTime changes only
// when the status does. It reports whether anything changed.
func SetCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition, now metav1.Time) bool {
	old := FindCondition(crd, c.Type)
	if old == nil {
		c.LastTransitionTime = now
		crd.Status.Conditions = append(crd.Status.Conditions, c)
		return true
	}
	if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
		return false
	}
	if old.Status != c.Status {
		old.LastTransitionTime = now
	}
	old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
	return true
}

// AcceptNames computes crd's accepted names and its NamesAccepted and
// Established conditions, as upstream's naming and establishing
// controllers do together: a requested name another CRD of the same group
// has already accepted is refused (PluralConflict, SingularConflict,
// ShortNamesConflict, KindConflict, ListKindConflict: "\"x\" is already in
// use"), the names that do not conflict are accepted, and a CRD whose names
// are all accepted is Established (and stays so).
func AcceptNames(crd *apiextensionsv1.CustomResourceDefinition, all []*apiextensionsv1.CustomResourceDefinition) (
	apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition, apiextensionsv1.CustomResourceDefinitionCondition) {
	resources, kinds := map[string]bool{}, map[string]bool{}
	for _, other := range all {
		if other.Spec.Group != crd.Spec.Group || other.Name == crd.Name {
			continue
		}
		n := other.Status.AcceptedNames
		resources[n.Plural], resources[n.Singular] = true, true
		for _, s := range n.ShortNames {
			resources[s] = true
		}
		kinds[n.Kind], kinds[n.ListKind] = true, true
	}
	// The CRD's own accepted names are taken too (by itself).
	own := crd.Status.AcceptedNames
	for _, s := range []string{own.Plural, own.Singular} {
		resources[s] = true
	}
	for _, s := range own.ShortNames {
		resources[s] = true
	}
	kinds[own.Kind], kinds[own.ListKind] = true, true
	delete(resources, "")
	delete(kinds, "")

	fresh := func(requested, accepted string, used map[string]bool) error {
		if requested == accepted || !used[requested] {
			return nil
		}
		return fmt.Errorf("%q is already in use", requested)
	}
	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	req := crd.Spec.Names
	names := *own.DeepCopy()
	if err := fresh(req.Plural, own.Plural, resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = req.Plural
	}
	if err := fresh(req.Singular, own.Singular, resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = req.Singular
	}
	if !slices.Equal(req.ShortNames, own.ShortNames) {
		var msgs []string
		for _, s := range req.ShortNames {
			if slices.Contains(own.ShortNames, s) {
				continue
			}
			if err := fresh(s, "", resources); err != nil {
				msgs = append(msgs, err.Error())
			}
		}
		switch len(msgs) {
		case 0:
			names.ShortNames = slices.Clone(req.ShortNames)
		case 1:
			conflict("ShortNamesConflict", fmt.Errorf("%s", msgs[0]))
		default:
			// utilerrors.NewAggregate's format.
			s := "["
			for i, m := range msgs {
				if i > 0 {
					s += ", "
				}
				s += m
			}
			conflict("ShortNamesConflict", fmt.Errorf("%s]", s))
		}
	}
	if err := fresh(req.Kind, own.Kind, kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = req.Kind
	}
	if err := fresh(req.ListKind, own.ListKind, kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = req.ListKind
	}
	names.Categories = slices.Clone(req.Categories)
	if cond.Status == apiextensionsv1.ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}

	established := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
		Reason: "NotAccepted", Message: "not all names are accepted",
	}
	if old := FindCondition(crd, apiextensionsv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextensionsv1.ConditionTrue && cond.Status == apiextensionsv1.ConditionTrue {
		established = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
		}
	}
	return names, cond, established
}

// MarkTerminating is what a first delete of a CRD does (upstream's CRD
// REST Delete): it adds the cleanup finalizer and the Terminating
// condition, unless the CRD was marked before (so that removing the
// finalizer later does not bring it back). It reports whether it changed crd.
func MarkTerminating(crd *apiextensionsv1.CustomResourceDefinition, now metav1.Time) bool {
	if FindCondition(crd, apiextensionsv1.Terminating) != nil {
		return false
	}
	if !slices.Contains(crd.Finalizers, CleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, CleanupFinalizer)
	}
	SetCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
		Reason: "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	}, now)
	return true
}
