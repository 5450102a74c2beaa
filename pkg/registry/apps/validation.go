package apps

// Validation of the apps/v1 kinds, after upstream
// k8s.io/kubernetes/pkg/apis/apps/validation and the apps/v1 registry
// strategies (which add "the selector is immutable").

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry/core"
)

func metaPath() *field.Path { return field.NewPath("metadata") }
func specPath() *field.Path { return field.NewPath("spec") }

func nonneg(v int64, p *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(v, p)
}

func derefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func derefIntOrString(p *intstr.IntOrString) intstr.IntOrString {
	if p == nil {
		return intstr.FromInt32(0)
	}
	return *p
}

// validateSelector checks a workload selector: required, valid, not empty.
// kind is used in the message ("empty selector is invalid for deployment").
func validateSelector(sel *metav1.LabelSelector, kind string, p *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	allErrs := metavalidation.ValidateLabelSelector(sel, metavalidation.LabelSelectorValidationOptions{}, p)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		allErrs = append(allErrs, field.Invalid(p, sel, "empty selector is invalid for "+kind))
	}
	return allErrs
}

// validateSelectorMatchesTemplate: the pods a workload creates must match
// its own selector, or it would never see them.
func validateSelectorMatchesTemplate(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || selector.Empty() {
		return nil
	}
	if !selector.Matches(labels.Set(t.Labels)) {
		return field.ErrorList{field.Invalid(p.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`")}
	}
	return nil
}

// validateReplicaSetTemplate is upstream's ValidatePodTemplateSpecForReplicaSet,
// used by Deployments and ReplicaSets.
func validateReplicaSetTemplate(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, replicas *int32, kind string, p *field.Path) field.ErrorList {
	allErrs := validateSelectorMatchesTemplate(sel, t, p)
	allErrs = append(allErrs, core.ValidatePodTemplateSpec(t, p)...)
	if replicas != nil && *replicas > 1 {
		allErrs = append(allErrs, core.ValidateReadOnlyPersistentDisks(t.Spec.Volumes, p.Child("spec", "volumes"))...)
	}
	allErrs = append(allErrs, validateTemplateRestartPolicy(t, kind, p.Child("spec"))...)
	return allErrs
}

// validateTemplateRestartPolicy: long-running workloads restart their pods'
// containers Always and never set a deadline.
func validateTemplateRestartPolicy(t *corev1.PodTemplateSpec, kind string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(p.Child("restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(p.Child("activeDeadlineSeconds"), fmt.Sprintf("activeDeadlineSeconds in %s is not Supported", kind)))
	}
	return allErrs
}

// validatePositiveIntOrPercent: a non-negative integer or a percentage such
// as "25%".
func validatePositiveIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			allErrs = append(allErrs, field.Invalid(p, v, msg))
		}
	case intstr.Int:
		allErrs = append(allErrs, nonneg(int64(v.IntValue()), p)...)
	default:
		allErrs = append(allErrs, field.Invalid(p, v, "must be an integer or percentage (e.g '5%%')"))
	}
	return allErrs
}

// percentValue returns the number of a valid percentage ("25%" -> 25).
func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

func notMoreThan100Percent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	if n, ok := percentValue(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
	}
	return nil
}

func validateCollisionCount(newCount, oldCount *int32, p *field.Path) field.ErrorList {
	if (newCount == nil && oldCount != nil) || (newCount != nil && oldCount != nil && *newCount < *oldCount) {
		return field.ErrorList{field.Invalid(p, derefInt32(newCount), "cannot be decremented")}
	}
	return nil
}

// replicaCount is one status counter.
type replicaCount struct {
	name  string
	value int32
}

// validateReplicaCounts validates status counters: all non-negative, and
// none larger than status.replicas.
func validateReplicaCounts(replicas int32, counts []replicaCount, p *field.Path) field.ErrorList {
	allErrs := nonneg(int64(replicas), p.Child("replicas"))
	for _, c := range counts {
		allErrs = append(allErrs, nonneg(int64(c.value), p.Child(c.name))...)
	}
	for _, c := range counts {
		if c.value > replicas {
			allErrs = append(allErrs, field.Invalid(p.Child(c.name), c.value, "cannot be greater than status.replicas"))
		}
	}
	return allErrs
}

// ----- Deployment -----

// ValidateDeployment validates a Deployment being created.
func ValidateDeployment(d *appsv1.Deployment) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&d.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metaPath())
	return append(allErrs, validateDeploymentSpec(&d.Spec, specPath())...)
}

func validateDeploymentSpec(spec *appsv1.DeploymentSpec, p *field.Path) field.ErrorList {
	allErrs := nonneg(int64(derefInt32(spec.Replicas)), p.Child("replicas"))
	allErrs = append(allErrs, validateSelector(spec.Selector, "deployment", p.Child("selector"))...)
	if _, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		allErrs = append(allErrs, field.Invalid(p.Child("selector"), spec.Selector, "invalid label selector"))
	} else {
		allErrs = append(allErrs, validateReplicaSetTemplate(spec.Selector, &spec.Template, spec.Replicas, "ReplicaSet", p.Child("template"))...)
	}
	allErrs = append(allErrs, validateDeploymentStrategy(&spec.Strategy, p.Child("strategy"))...)
	allErrs = append(allErrs, nonneg(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, nonneg(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	if pds := spec.ProgressDeadlineSeconds; pds != nil {
		allErrs = append(allErrs, nonneg(int64(*pds), p.Child("progressDeadlineSeconds"))...)
		if *pds <= spec.MinReadySeconds {
			allErrs = append(allErrs, field.Invalid(p.Child("progressDeadlineSeconds"), *pds, "must be greater than minReadySeconds"))
		}
	}
	return allErrs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			allErrs = append(allErrs, field.Required(p.Child("rollingUpdate"), "this should be defaulted and never be nil"))
			break
		}
		rp := p.Child("rollingUpdate")
		maxUnavailable, maxSurge := derefIntOrString(s.RollingUpdate.MaxUnavailable), derefIntOrString(s.RollingUpdate.MaxSurge)
		allErrs = append(allErrs, validatePositiveIntOrPercent(maxUnavailable, rp.Child("maxUnavailable"))...)
		allErrs = append(allErrs, validatePositiveIntOrPercent(maxSurge, rp.Child("maxSurge"))...)
		if intOrPercentValue(maxUnavailable) == 0 && intOrPercentValue(maxSurge) == 0 {
			allErrs = append(allErrs, field.Invalid(rp.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
		}
		allErrs = append(allErrs, notMoreThan100Percent(maxUnavailable, rp.Child("maxUnavailable"))...)
	default:
		allErrs = append(allErrs, field.NotSupported(p, s, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}))
	}
	return allErrs
}

// ValidateDeploymentUpdate validates an update of a Deployment. In apps/v1
// the selector is immutable.
func ValidateDeploymentUpdate(d, old *appsv1.Deployment) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metaPath())
	allErrs = append(allErrs, validateDeploymentSpec(&d.Spec, specPath())...)
	return append(allErrs, apivalidation.ValidateImmutableField(d.Spec.Selector, old.Spec.Selector, specPath().Child("selector"))...)
}

// ValidateDeploymentStatusUpdate validates an update through
// deployments/status.
func ValidateDeploymentStatusUpdate(d, old *appsv1.Deployment) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, metaPath())
	st := d.Status
	p := field.NewPath("status")
	allErrs = append(allErrs, nonneg(st.ObservedGeneration, p.Child("observedGeneration"))...)
	allErrs = append(allErrs, validateReplicaCounts(st.Replicas, []replicaCount{
		{"updatedReplicas", st.UpdatedReplicas}, {"readyReplicas", st.ReadyReplicas}, {"availableReplicas", st.AvailableReplicas},
	}, p)...)
	allErrs = append(allErrs, nonneg(int64(st.UnavailableReplicas), p.Child("unavailableReplicas"))...)
	if st.TerminatingReplicas != nil {
		allErrs = append(allErrs, nonneg(int64(*st.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	if st.CollisionCount != nil {
		allErrs = append(allErrs, nonneg(int64(*st.CollisionCount), p.Child("collisionCount"))...)
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return append(allErrs, validateCollisionCount(st.CollisionCount, old.Status.CollisionCount, p.Child("collisionCount"))...)
}

// ----- ReplicaSet -----

// ValidateReplicaSet validates a ReplicaSet being created.
func ValidateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&rs.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metaPath())
	return append(allErrs, validateReplicaSetSpec(&rs.Spec, specPath())...)
}

func validateReplicaSetSpec(spec *appsv1.ReplicaSetSpec, p *field.Path) field.ErrorList {
	allErrs := nonneg(int64(derefInt32(spec.Replicas)), p.Child("replicas"))
	allErrs = append(allErrs, nonneg(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	// Upstream says "deployment" here too.
	allErrs = append(allErrs, validateSelector(spec.Selector, "deployment", p.Child("selector"))...)
	if _, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		allErrs = append(allErrs, field.Invalid(p.Child("selector"), spec.Selector, "invalid label selector"))
	} else {
		allErrs = append(allErrs, validateReplicaSetTemplate(spec.Selector, &spec.Template, spec.Replicas, "ReplicaSet", p.Child("template"))...)
	}
	return allErrs
}

// ValidateReplicaSetUpdate validates an update of a ReplicaSet (selector
// immutable in apps/v1).
func ValidateReplicaSetUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, metaPath())
	allErrs = append(allErrs, validateReplicaSetSpec(&rs.Spec, specPath())...)
	return append(allErrs, apivalidation.ValidateImmutableField(rs.Spec.Selector, old.Spec.Selector, specPath().Child("selector"))...)
}

// ValidateReplicaSetStatusUpdate validates an update through
// replicasets/status.
func ValidateReplicaSetStatusUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, metaPath())
	st := rs.Status
	p := field.NewPath("status")
	allErrs = append(allErrs, validateReplicaCounts(st.Replicas, []replicaCount{
		{"fullyLabeledReplicas", st.FullyLabeledReplicas}, {"readyReplicas", st.ReadyReplicas}, {"availableReplicas", st.AvailableReplicas},
	}, p)...)
	allErrs = append(allErrs, nonneg(st.ObservedGeneration, p.Child("observedGeneration"))...)
	if st.TerminatingReplicas != nil {
		allErrs = append(allErrs, nonneg(int64(*st.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return allErrs
}

// ----- StatefulSet -----

// ValidateStatefulSet validates a StatefulSet being created. StatefulSet
// names are DNS labels: they become part of pod host names ("web-0").
//
// As upstream, the pod template's spec is not validated here (its volumes
// may refer to volumeClaimTemplates); only its labels and annotations.
func ValidateStatefulSet(ss *appsv1.StatefulSet) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&ss.ObjectMeta, true, apivalidation.NameIsDNSLabel, metaPath())
	return append(allErrs, validateStatefulSetSpec(&ss.Spec, specPath())...)
}

func validateStatefulSetSpec(spec *appsv1.StatefulSetSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch spec.PodManagementPolicy {
	case "":
		allErrs = append(allErrs, field.Required(p.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		allErrs = append(allErrs, field.Invalid(p.Child("podManagementPolicy"), spec.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	us := spec.UpdateStrategy
	usPath := p.Child("updateStrategy")
	switch us.Type {
	case "":
		allErrs = append(allErrs, field.Required(usPath, ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if us.RollingUpdate != nil {
			allErrs = append(allErrs, field.Invalid(usPath.Child("rollingUpdate"), us.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := us.RollingUpdate; ru != nil {
			rp := usPath.Child("rollingUpdate")
			allErrs = append(allErrs, nonneg(int64(derefInt32(ru.Partition)), rp.Child("partition"))...)
			if ru.MaxUnavailable != nil {
				mp := rp.Child("maxUnavailable")
				allErrs = append(allErrs, validatePositiveIntOrPercent(*ru.MaxUnavailable, mp)...)
				if intOrPercentValue(*ru.MaxUnavailable) == 0 {
					allErrs = append(allErrs, field.Invalid(mp, *ru.MaxUnavailable, "cannot be 0"))
				}
				allErrs = append(allErrs, notMoreThan100Percent(*ru.MaxUnavailable, mp)...)
			}
		}
	default:
		allErrs = append(allErrs, field.Invalid(usPath, us,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}
	if pol := spec.PersistentVolumeClaimRetentionPolicy; pol != nil {
		pp := p.Child("persistentVolumeClaimRetentionPolicy")
		valid := []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}
		for _, f := range []struct {
			name  string
			value appsv1.PersistentVolumeClaimRetentionPolicyType
		}{{"whenDeleted", pol.WhenDeleted}, {"whenScaled", pol.WhenScaled}} {
			if f.value != appsv1.RetainPersistentVolumeClaimRetentionPolicyType && f.value != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
				allErrs = append(allErrs, field.NotSupported(pp.Child(f.name), f.value, valid))
			}
		}
	}
	allErrs = append(allErrs, nonneg(int64(derefInt32(spec.Replicas)), p.Child("replicas"))...)
	allErrs = append(allErrs, nonneg(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	if spec.Ordinals != nil {
		allErrs = append(allErrs, nonneg(int64(spec.Ordinals.Start), p.Child("ordinals.start"))...)
	}
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, nonneg(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	allErrs = append(allErrs, validateSelector(spec.Selector, "statefulset", p.Child("selector"))...)
	if _, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		allErrs = append(allErrs, field.Invalid(p.Child("selector"), spec.Selector, ""))
	} else {
		tp := p.Child("template")
		allErrs = append(allErrs, validateSelectorMatchesTemplate(spec.Selector, &spec.Template, tp)...)
		allErrs = append(allErrs, core.ValidatePodTemplateMetadata(&spec.Template, tp)...)
	}
	allErrs = append(allErrs, validateTemplateRestartPolicy(&spec.Template, "StatefulSet", p.Child("template", "spec"))...)
	return allErrs
}

// ValidateStatefulSetUpdate validates an update of a StatefulSet: only a
// handful of spec fields may change (selector, serviceName, volume claim
// templates and pod management policy are fixed at creation).
func ValidateStatefulSetUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	// The name is not re-validated: old objects may predate the DNS label
	// rule and must stay updatable (e.g. to remove finalizers).
	allErrs := core.ValidateObjectMetaUpdate(&ss.ObjectMeta, &old.ObjectMeta, metaPath())
	allErrs = append(allErrs, validateStatefulSetSpec(&ss.Spec, specPath())...)

	clone := ss.Spec.DeepCopy()
	clone.Replicas = old.Spec.Replicas
	clone.Template = old.Spec.Template
	clone.UpdateStrategy = old.Spec.UpdateStrategy
	clone.MinReadySeconds = old.Spec.MinReadySeconds
	clone.Ordinals = old.Spec.Ordinals
	clone.RevisionHistoryLimit = old.Spec.RevisionHistoryLimit
	clone.PersistentVolumeClaimRetentionPolicy = old.Spec.PersistentVolumeClaimRetentionPolicy
	if !apiequality.Semantic.DeepEqual(*clone, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath(), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return allErrs
}

// ValidateStatefulSetStatusUpdate validates an update through
// statefulsets/status.
func ValidateStatefulSetStatusUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	st := ss.Status
	p := field.NewPath("status")
	allErrs := validateReplicaCounts(st.Replicas, []replicaCount{
		{"readyReplicas", st.ReadyReplicas}, {"currentReplicas", st.CurrentReplicas},
		{"updatedReplicas", st.UpdatedReplicas}, {"availableReplicas", st.AvailableReplicas},
	}, p)
	allErrs = append(allErrs, nonneg(st.ObservedGeneration, p.Child("observedGeneration"))...)
	if st.CollisionCount != nil {
		allErrs = append(allErrs, nonneg(int64(*st.CollisionCount), p.Child("collisionCount"))...)
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than status.readyReplicas"))
	}
	allErrs = append(allErrs, core.ValidateObjectMetaUpdate(&ss.ObjectMeta, &old.ObjectMeta, metaPath())...)
	return append(allErrs, validateCollisionCount(st.CollisionCount, old.Status.CollisionCount, p.Child("collisionCount"))...)
}

// ----- DaemonSet -----

// ValidateDaemonSet validates a DaemonSet being created.
func ValidateDaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&ds.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metaPath())
	return append(allErrs, validateDaemonSetSpec(&ds.Spec, specPath())...)
}

func validateDaemonSetSpec(spec *appsv1.DaemonSetSpec, p *field.Path) field.ErrorList {
	// Upstream does not report a missing selector as "Required": a nil
	// selector matches nothing, so the template labels check fails instead.
	allErrs := metavalidation.ValidateLabelSelector(spec.Selector, metavalidation.LabelSelectorValidationOptions{}, p.Child("selector"))
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !selector.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(p.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	if spec.Selector != nil && len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("selector"), spec.Selector, "empty selector is invalid for daemonset"))
	}
	allErrs = append(allErrs, core.ValidatePodTemplateSpec(&spec.Template, p.Child("template"))...)
	allErrs = append(allErrs, validateTemplateRestartPolicy(&spec.Template, "DaemonSet", p.Child("template", "spec"))...)
	allErrs = append(allErrs, nonneg(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)

	us := spec.UpdateStrategy
	usPath := p.Child("updateStrategy")
	switch us.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if us.RollingUpdate == nil {
			allErrs = append(allErrs, field.Required(usPath.Child("rollingUpdate"), ""))
			break
		}
		rp := usPath.Child("rollingUpdate")
		maxUnavailable, maxSurge := derefIntOrString(us.RollingUpdate.MaxUnavailable), derefIntOrString(us.RollingUpdate.MaxSurge)
		allErrs = append(allErrs, validatePositiveIntOrPercent(maxUnavailable, rp.Child("maxUnavailable"))...)
		allErrs = append(allErrs, validatePositiveIntOrPercent(maxSurge, rp.Child("maxSurge"))...)
		allErrs = append(allErrs, notMoreThan100Percent(maxUnavailable, rp.Child("maxUnavailable"))...)
		allErrs = append(allErrs, notMoreThan100Percent(maxSurge, rp.Child("maxSurge"))...)
		// Exactly one of the two is non-zero.
		hasUnavailable, hasSurge := intOrPercentValue(maxUnavailable) != 0, intOrPercentValue(maxSurge) != 0
		switch {
		case hasUnavailable && hasSurge:
			allErrs = append(allErrs, field.Invalid(rp.Child("maxSurge"), maxSurge, "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			allErrs = append(allErrs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(usPath, us, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)}))
	}
	if spec.RevisionHistoryLimit != nil {
		allErrs = append(allErrs, nonneg(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	return allErrs
}

// ValidateDaemonSetUpdate validates an update of a DaemonSet (selector
// immutable in apps/v1).
func ValidateDaemonSetUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta, metaPath())
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(ds.Spec.Selector, old.Spec.Selector, specPath().Child("selector"))...)
	return append(allErrs, validateDaemonSetSpec(&ds.Spec, specPath())...)
}

// ValidateDaemonSetStatusUpdate validates an update through
// daemonsets/status.
func ValidateDaemonSetStatusUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta, metaPath())
	st := ds.Status
	p := field.NewPath("status")
	for _, c := range []replicaCount{
		{"currentNumberScheduled", st.CurrentNumberScheduled}, {"numberMisscheduled", st.NumberMisscheduled},
		{"desiredNumberScheduled", st.DesiredNumberScheduled}, {"numberReady", st.NumberReady},
		{"updatedNumberScheduled", st.UpdatedNumberScheduled}, {"numberAvailable", st.NumberAvailable},
		{"numberUnavailable", st.NumberUnavailable},
	} {
		allErrs = append(allErrs, nonneg(int64(c.value), p.Child(c.name))...)
	}
	allErrs = append(allErrs, nonneg(st.ObservedGeneration, p.Child("observedGeneration"))...)
	if st.CollisionCount != nil {
		allErrs = append(allErrs, nonneg(int64(*st.CollisionCount), p.Child("collisionCount"))...)
	}
	return append(allErrs, validateCollisionCount(st.CollisionCount, old.Status.CollisionCount, p.Child("collisionCount"))...)
}

// ----- ControllerRevision -----

// ValidateControllerRevision validates a ControllerRevision being created.
func ValidateControllerRevision(cr *appsv1.ControllerRevision) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&cr.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metaPath())
	if cr.Data.Raw == nil && cr.Data.Object == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("data"), "data is mandatory"))
	}
	return append(allErrs, nonneg(cr.Revision, field.NewPath("revision"))...)
}

// ValidateControllerRevisionUpdate validates an update of a
// ControllerRevision: its data never changes.
func ValidateControllerRevisionUpdate(cr, old *appsv1.ControllerRevision) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&cr.ObjectMeta, &old.ObjectMeta, metaPath())
	allErrs = append(allErrs, ValidateControllerRevision(cr)...)
	return append(allErrs, apivalidation.ValidateImmutableField(cr.Data, old.Data, field.NewPath("data"))...)
}
