package batch

// Validation of the batch/v1 kinds, after upstream
// k8s.io/kubernetes/pkg/apis/batch/validation and the Job/CronJob
// strategies (which choose the validation options from the old object).

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // CronJob time zones must resolve even without a system tz database.

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry/core"
)

const (
	// Indexed Jobs track indexes in status strings; these caps keep them short.
	maxParallelismForIndexedJob             = 100000
	maxFailedIndexesForIndexedJob           = 100_000
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000

	maxPodFailurePolicyRules                   = 20
	maxPodFailurePolicyOnExitCodesValues       = 255
	maxPodFailurePolicyOnPodConditionsPatterns = 20
	maxManagedByLength                         = 63
	maxSuccessPolicySucceededIndexesLength     = 64 * 1024
	maxSuccessPolicyRules                      = 20

	// The unprefixed labels the Job controller historically used.
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

func nonneg(v int64, p *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(v, p)
}

func isTrue(b *bool) bool { return b != nil && *b }

// ----- Job -----

// ValidateJob validates a Job being created.
//
// Unless spec.manualSelector is true, the strategy must already have
// generated the selector and the template labels from metadata.uid
// (controller-uid, job-name and their batch.kubernetes.io/ variants), as
// upstream's PrepareForCreate does; they are checked here.
func ValidateJob(job *batchv1.Job) field.ErrorList {
	return validateJob(job, true)
}

func validateJob(job *batchv1.Job, requirePrefixedLabels bool) field.ErrorList {
	// Jobs share the name rule of ReplicationControllers.
	allErrs := core.ValidateObjectMeta(&job.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateGeneratedSelector(job, requirePrefixedLabels)...)
	allErrs = append(allErrs, validateJobSpecWithSelector(&job.Spec, field.NewPath("spec"))...)
	// Pods of an Indexed Job get the hostname "<job>-<index>", which must be
	// a DNS label.
	if isIndexed(&job.Spec) && job.Spec.Completions != nil && *job.Spec.Completions > 0 {
		host := fmt.Sprintf("%s-%d", job.Name, *job.Spec.Completions-1)
		if errs := validation.IsDNS1123Label(host); len(errs) > 0 {
			allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), job.Name, fmt.Sprintf("will not able to create pod with invalid DNS label: %s", host)))
		}
	}
	return allErrs
}

func isIndexed(spec *batchv1.JobSpec) bool {
	return spec.CompletionMode != nil && *spec.CompletionMode == batchv1.IndexedCompletion
}

// validateGeneratedSelector checks the selector and labels the API server
// generates for Jobs without a manual selector.
func validateGeneratedSelector(job *batchv1.Job, requirePrefixedLabels bool) field.ErrorList {
	if isTrue(job.Spec.ManualSelector) || job.Spec.Selector == nil {
		return nil
	}
	var allErrs field.ErrorList
	// An unset uid would make the selector "controller-uid=".
	if job.UID == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	tp := field.NewPath("spec", "template", "metadata")
	expected := map[string]string{legacyControllerUIDLabel: string(job.UID), legacyJobNameLabel: job.Name}
	keys := []string{legacyControllerUIDLabel, legacyJobNameLabel}
	if requirePrefixedLabels {
		expected[batchv1.ControllerUidLabel] = string(job.UID)
		expected[batchv1.JobNameLabel] = job.Name
		keys = append(keys, batchv1.ControllerUidLabel, batchv1.JobNameLabel)
	}
	for _, key := range keys {
		want := expected[key]
		got, ok := job.Spec.Template.Labels[key]
		if !ok {
			allErrs = append(allErrs, field.Required(tp.Child("labels").Key(key), fmt.Sprintf("must be '%s'", want)))
		} else if got != want {
			allErrs = append(allErrs, field.Invalid(tp.Child("labels").Key(key), job.Spec.Template.Labels, fmt.Sprintf("must be '%s'", want)))
		}
	}
	if sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !sel.Matches(labels.Set(expected)) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "selector"), job.Spec.Selector, "`selector` not auto-generated"))
	}
	return allErrs
}

// validateJobSpecWithSelector adds the selector rules to validateJobSpec.
func validateJobSpecWithSelector(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	allErrs := validateJobSpec(spec, p)
	if spec.Selector == nil {
		allErrs = append(allErrs, field.Required(p.Child("selector"), ""))
	} else {
		allErrs = append(allErrs, metavalidation.ValidateLabelSelector(spec.Selector, metavalidation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !sel.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(p.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return allErrs
}

// validateJobSpec checks a JobSpec (of a Job or of a CronJob's template).
func validateJobSpec(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, f := range []struct {
		name  string
		value *int32
	}{{"parallelism", spec.Parallelism}, {"completions", spec.Completions}, {"backoffLimit", spec.BackoffLimit},
		{"ttlSecondsAfterFinished", spec.TTLSecondsAfterFinished}, {"backoffLimitPerIndex", spec.BackoffLimitPerIndex}} {
		if f.value != nil {
			allErrs = append(allErrs, nonneg(int64(*f.value), p.Child(f.name))...)
		}
	}
	if spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, nonneg(*spec.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	if spec.MaxFailedIndexes != nil {
		allErrs = append(allErrs, nonneg(int64(*spec.MaxFailedIndexes), p.Child("maxFailedIndexes"))...)
		if spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if mb := spec.ManagedBy; mb != nil {
		allErrs = append(allErrs, validation.IsDomainPrefixedPath(p.Child("managedBy"), *mb)...)
		if len(*mb) > maxManagedByLength {
			allErrs = append(allErrs, field.TooLong(p.Child("managedBy"), *mb, maxManagedByLength))
		}
	}
	if cm := spec.CompletionMode; cm != nil {
		if *cm != batchv1.NonIndexedCompletion && *cm != batchv1.IndexedCompletion {
			allErrs = append(allErrs, field.NotSupported(p.Child("completionMode"), *cm, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
		}
		if *cm == batchv1.IndexedCompletion {
			allErrs = append(allErrs, validateIndexedJobLimits(spec, p)...)
		}
	}
	if !isIndexed(spec) {
		if spec.BackoffLimitPerIndex != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	if spec.PodFailurePolicy != nil {
		allErrs = append(allErrs, validatePodFailurePolicy(spec, p.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil {
		if !isIndexed(spec) {
			allErrs = append(allErrs, field.Invalid(p.Child("successPolicy"), *spec.SuccessPolicy, "requires indexed completion mode"))
		} else {
			allErrs = append(allErrs, validateSuccessPolicy(spec, p.Child("successPolicy"))...)
		}
	}
	if rp := spec.PodReplacementPolicy; rp != nil {
		if spec.PodFailurePolicy != nil {
			if *rp != batchv1.Failed {
				allErrs = append(allErrs, field.NotSupported(p.Child("podReplacementPolicy"), *rp, []batchv1.PodReplacementPolicy{batchv1.Failed}))
			}
		} else if *rp != batchv1.Failed && *rp != batchv1.TerminatingOrFailed {
			allErrs = append(allErrs, field.NotSupported(p.Child("podReplacementPolicy"), *rp, []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}))
		}
	}

	allErrs = append(allErrs, core.ValidatePodTemplateSpec(&spec.Template, p.Child("template"))...)
	// A Job's pods run to completion: restartPolicy must be OnFailure or
	// Never. (A template without one was defaulted to Always.)
	rpPath := p.Child("template", "spec", "restartPolicy")
	switch rp := spec.Template.Spec.RestartPolicy; {
	case rp == corev1.RestartPolicyAlways || rp == "":
		allErrs = append(allErrs, field.Required(rpPath, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	case rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever:
		allErrs = append(allErrs, field.NotSupported(rpPath, rp, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	case spec.PodFailurePolicy != nil && rp != corev1.RestartPolicyNever:
		allErrs = append(allErrs, field.Invalid(rpPath, rp, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	return allErrs
}

func validateIndexedJobLimits(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Completions == nil {
		allErrs = append(allErrs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
	}
	if spec.Parallelism != nil && *spec.Parallelism > maxParallelismForIndexedJob {
		allErrs = append(allErrs, field.Invalid(p.Child("parallelism"), *spec.Parallelism, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
	}
	if spec.Completions != nil && spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > *spec.Completions {
		allErrs = append(allErrs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "must be less than or equal to completions"))
	}
	if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesForIndexedJob {
		allErrs = append(allErrs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if spec.Completions != nil && *spec.Completions > completionsSoftLimit && spec.BackoffLimitPerIndex != nil {
		if spec.MaxFailedIndexes == nil {
			allErrs = append(allErrs, field.Required(p.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		}
		if spec.Parallelism != nil && *spec.Parallelism > parallelismLimitForHighCompletions {
			allErrs = append(allErrs, field.Invalid(p.Child("parallelism"), *spec.Parallelism, fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", parallelismLimitForHighCompletions, completionsSoftLimit)))
		}
		if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesLimitForHighCompletions {
			allErrs = append(allErrs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
		}
	}
	return allErrs
}

func validatePodFailurePolicy(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rulesPath := p.Child("rules")
	rules := spec.PodFailurePolicy.Rules
	if len(rules) > maxPodFailurePolicyRules {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(rules), maxPodFailurePolicyRules))
	}
	containers := map[string]bool{}
	for _, c := range append(append([]corev1.Container{}, spec.Template.Spec.Containers...), spec.Template.Spec.InitContainers...) {
		containers[c.Name] = true
	}
	actions := []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore}
	for i, rule := range rules {
		rp := rulesPath.Index(i)
		ap := rp.Child("action")
		switch {
		case rule.Action == "":
			allErrs = append(allErrs, field.Required(ap, fmt.Sprintf("valid values: %q", actions)))
		case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
			if spec.BackoffLimitPerIndex == nil {
				allErrs = append(allErrs, field.Invalid(ap, rule.Action, "requires the backoffLimitPerIndex to be set"))
			}
		case !slices.Contains(actions, rule.Action):
			allErrs = append(allErrs, field.NotSupported(ap, rule.Action, actions))
		}
		if ec := rule.OnExitCodes; ec != nil {
			allErrs = append(allErrs, validateOnExitCodes(ec, rp.Child("onExitCodes"), containers)...)
		}
		if len(rule.OnPodConditions) > 0 {
			cp := rp.Child("onPodConditions")
			if len(rule.OnPodConditions) > maxPodFailurePolicyOnPodConditionsPatterns {
				allErrs = append(allErrs, field.TooMany(cp, len(rule.OnPodConditions), maxPodFailurePolicyOnPodConditionsPatterns))
			}
			statuses := []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown}
			for j, pat := range rule.OnPodConditions {
				pp := cp.Index(j)
				allErrs = append(allErrs, core.ValidateQualifiedName(string(pat.Type), pp.Child("type"))...)
				if pat.Status == "" {
					allErrs = append(allErrs, field.Required(pp.Child("status"), fmt.Sprintf("valid values: %q", statuses)))
				} else if !slices.Contains(statuses, pat.Status) {
					allErrs = append(allErrs, field.NotSupported(pp.Child("status"), pat.Status, statuses))
				}
			}
		}
		if rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0 {
			allErrs = append(allErrs, field.Invalid(rp, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
		}
		if rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0 {
			allErrs = append(allErrs, field.Invalid(rp, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
	}
	return allErrs
}

func validateOnExitCodes(ec *batchv1.PodFailurePolicyOnExitCodesRequirement, p *field.Path, containers map[string]bool) field.ErrorList {
	var allErrs field.ErrorList
	ops := []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn}
	if ec.Operator == "" {
		allErrs = append(allErrs, field.Required(p.Child("operator"), fmt.Sprintf("valid values: %q", ops)))
	} else if !slices.Contains(ops, ec.Operator) {
		allErrs = append(allErrs, field.NotSupported(p.Child("operator"), ec.Operator, ops))
	}
	if ec.ContainerName != nil && !containers[*ec.ContainerName] {
		allErrs = append(allErrs, field.Invalid(p.Child("containerName"), *ec.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	vp := p.Child("values")
	if len(ec.Values) == 0 {
		allErrs = append(allErrs, field.Invalid(vp, ec.Values, "at least one value is required"))
	} else if len(ec.Values) > maxPodFailurePolicyOnExitCodesValues {
		allErrs = append(allErrs, field.TooMany(vp, len(ec.Values), maxPodFailurePolicyOnExitCodesValues))
	}
	seen := map[int32]bool{}
	for j, v := range ec.Values {
		if ec.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			allErrs = append(allErrs, field.Invalid(vp.Index(j), v, "must not be 0 for the In operator"))
		}
		if seen[v] {
			allErrs = append(allErrs, field.Duplicate(vp.Index(j), v))
		}
		seen[v] = true
	}
	if !slices.IsSorted(ec.Values) {
		allErrs = append(allErrs, field.Invalid(vp, ec.Values, "must be ordered"))
	}
	return allErrs
}

func validateSuccessPolicy(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rulesPath := p.Child("rules")
	rules := spec.SuccessPolicy.Rules
	if len(rules) == 0 {
		allErrs = append(allErrs, field.Required(rulesPath, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > maxSuccessPolicyRules {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(rules), maxSuccessPolicyRules))
	}
	completions := int32(0)
	if spec.Completions != nil {
		completions = *spec.Completions
	}
	for i, r := range rules {
		rp := rulesPath.Index(i)
		if r.SucceededCount == nil && r.SucceededIndexes == nil {
			allErrs = append(allErrs, field.Required(rp, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int32
		if r.SucceededIndexes != nil {
			ip := rp.Child("succeededIndexes")
			if len(*r.SucceededIndexes) > maxSuccessPolicySucceededIndexesLength {
				allErrs = append(allErrs, field.TooLong(ip, *r.SucceededIndexes, maxSuccessPolicySucceededIndexesLength))
			}
			var err error
			if total, err = parseIndexes(*r.SucceededIndexes, completions); err != nil {
				allErrs = append(allErrs, field.Invalid(ip, *r.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err.Error())))
			}
		}
		if c := r.SucceededCount; c != nil {
			cp := rp.Child("succeededCount")
			allErrs = append(allErrs, nonneg(int64(*c), cp)...)
			if *c > completions {
				allErrs = append(allErrs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if r.SucceededIndexes != nil && *c > total {
				allErrs = append(allErrs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return allErrs
}

// parseIndexes parses an index list such as "1,3-5,7" (increasing, all
// below completions) and returns how many indexes it holds.
func parseIndexes(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var total int32
	last := int32(-1)
	for _, interval := range strings.Split(s, ",") {
		x, y, err := parseIndexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, x)
		}
		total += y - x + 1
		last = y
	}
	return total, nil
}

func parseIndexInterval(s string, completions int32) (int32, int32, error) {
	parts := strings.Split(s, "-")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	var bounds [2]int32
	for i, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", part)
		}
		if n >= int(completions) {
			return 0, 0, fmt.Errorf("too large index: %q", part)
		}
		bounds[i] = int32(n)
	}
	if len(parts) == 1 {
		return bounds[0], bounds[0], nil
	}
	if bounds[0] >= bounds[1] {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", bounds[0], bounds[1])
	}
	return bounds[0], bounds[1], nil
}

// ValidateJobUpdate validates an update of a Job. Most of the spec is
// immutable: parallelism, activeDeadlineSeconds, suspend, backoffLimit and
// the like may change; completions only for Indexed Jobs together with
// parallelism; the pod template only its scheduling directives, and only
// while the Job is suspended and has never started.
func ValidateJobUpdate(job, old *batchv1.Job) field.ErrorList {
	// Jobs created before the prefixed labels existed keep validating.
	_, hadName := old.Spec.Template.Labels[batchv1.JobNameLabel]
	_, hadUID := old.Spec.Template.Labels[batchv1.ControllerUidLabel]
	allErrs := validateJob(job, hadName && hadUID)
	allErrs = append(allErrs, core.ValidateObjectMetaUpdate(&job.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)

	p := field.NewPath("spec")
	spec, oldSpec := &job.Spec, &old.Spec
	// Completions are immutable, except that an Indexed Job may scale by
	// changing completions and parallelism together (elastic Indexed Jobs).
	if !apiequality.Semantic.DeepEqual(spec.Completions, oldSpec.Completions) {
		if !isIndexed(spec) {
			allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.Completions, oldSpec.Completions, p.Child("completions"))...)
		} else if spec.Completions != nil && (spec.Parallelism == nil || *spec.Completions != *spec.Parallelism) {
			allErrs = append(allErrs, field.Invalid(p.Child("completions"), spec.Completions, "can only be modified in tandem with spec.parallelism"))
		}
	}
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.Selector, oldSpec.Selector, p.Child("selector"))...)

	oldTemplate := oldSpec.Template.DeepCopy()
	if isTrue(oldSpec.Suspend) && old.Status.StartTime == nil {
		// A suspended Job that never ran may still be steered: node
		// affinity, node selector, tolerations, labels, annotations and
		// scheduling gates may change.
		t := &spec.Template
		switch {
		case t.Spec.Affinity == nil && oldTemplate.Spec.Affinity != nil:
			oldTemplate.Spec.Affinity.NodeAffinity = nil
			if apiequality.Semantic.DeepEqual(*oldTemplate.Spec.Affinity, corev1.Affinity{}) {
				oldTemplate.Spec.Affinity = nil
			}
		case t.Spec.Affinity != nil && oldTemplate.Spec.Affinity == nil:
			oldTemplate.Spec.Affinity = &corev1.Affinity{NodeAffinity: t.Spec.Affinity.NodeAffinity}
		case t.Spec.Affinity != nil && oldTemplate.Spec.Affinity != nil:
			oldTemplate.Spec.Affinity.NodeAffinity = t.Spec.Affinity.NodeAffinity
		}
		oldTemplate.Spec.NodeSelector = t.Spec.NodeSelector
		oldTemplate.Spec.Tolerations = t.Spec.Tolerations
		oldTemplate.Annotations = t.Annotations
		oldTemplate.Labels = t.Labels
		oldTemplate.Spec.SchedulingGates = t.Spec.SchedulingGates
	}
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.Template, *oldTemplate, p.Child("template"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.CompletionMode, oldSpec.CompletionMode, p.Child("completionMode"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.PodFailurePolicy, oldSpec.PodFailurePolicy, p.Child("podFailurePolicy"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.BackoffLimitPerIndex, oldSpec.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.ManagedBy, oldSpec.ManagedBy, p.Child("managedBy"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.SuccessPolicy, oldSpec.SuccessPolicy, p.Child("successPolicy"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(spec.Scheduling, oldSpec.Scheduling, p.Child("scheduling"))...)
	return allErrs
}

// ValidateJobStatusUpdate validates an update through jobs/status.
//
// Simplified: upstream enables each of its status invariants only when the
// old status did not already break it; here the main invariants are always
// enforced and the rarer ones (finished jobs with active pods, completion
// and start times, success criteria conditions) are not checked.
func ValidateJobStatusUpdate(job, old *batchv1.Job) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&job.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st := job.Status
	p := field.NewPath("status")
	for _, c := range []struct {
		name  string
		value *int32
	}{{"active", &st.Active}, {"succeeded", &st.Succeeded}, {"failed", &st.Failed}, {"ready", st.Ready}, {"terminating", st.Terminating}} {
		if c.value != nil {
			allErrs = append(allErrs, nonneg(int64(*c.value), p.Child(c.name))...)
		}
	}
	if u := st.UncountedTerminatedPods; u != nil {
		up := p.Child("uncountedTerminatedPods")
		seen := map[types.UID]bool{}
		for _, list := range []struct {
			name string
			uids []types.UID
		}{{"succeeded", u.Succeeded}, {"failed", u.Failed}} {
			for i, uid := range list.uids {
				ip := up.Child(list.name).Index(i)
				switch {
				case uid == "":
					allErrs = append(allErrs, field.Invalid(ip, uid, "must not be empty"))
				case seen[uid]:
					allErrs = append(allErrs, field.Duplicate(ip, uid))
				}
				seen[uid] = true
			}
		}
	}
	if st.Ready != nil && *st.Ready > st.Active && (old.Status.Ready == nil || *old.Status.Ready <= old.Status.Active) {
		allErrs = append(allErrs, field.Invalid(p.Child("ready"), *st.Ready, "cannot set more ready pods than active"))
	}
	complete, failed := jobCondition(job, batchv1.JobComplete), jobCondition(job, batchv1.JobFailed)
	if complete && failed {
		allErrs = append(allErrs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set Complete=True and Failed=true conditions"))
	}
	if job.Spec.Completions != nil && st.CompletedIndexes != "" {
		if !isIndexed(&job.Spec) {
			allErrs = append(allErrs, field.Invalid(p.Child("completedIndexes"), st.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
		} else if _, err := parseIndexes(st.CompletedIndexes, *job.Spec.Completions); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("completedIndexes"), st.CompletedIndexes, fmt.Sprintf("error parsing completedIndexes: %s", err.Error())))
		}
	}
	if job.Spec.BackoffLimitPerIndex == nil && st.FailedIndexes != nil {
		allErrs = append(allErrs, field.Invalid(p.Child("failedIndexes"), *st.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
		if jobCondition(old, t) && !jobCondition(job, t) {
			allErrs = append(allErrs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
		}
	}
	if st.Failed < old.Status.Failed {
		allErrs = append(allErrs, field.Invalid(p.Child("failed"), st.Failed, "cannot decrease the failed counter"))
	}
	if st.Succeeded < old.Status.Succeeded {
		allErrs = append(allErrs, field.Invalid(p.Child("succeeded"), st.Succeeded, "cannot decrease the succeeded counter"))
	}
	return allErrs
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// ----- CronJob -----

// ValidateCronJob validates a CronJob being created. Its name is at most 52
// characters, because the controller names each Job "<cronjob>-<minute>"
// with an 11-character suffix and Job names are at most 63.
func ValidateCronJob(cj *batchv1.CronJob) field.ErrorList {
	allErrs := core.ValidateObjectMeta(&cj.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validateCronJobSpec(&cj.Spec, nil, field.NewPath("spec"))...)
	if len(cj.Name) > validation.DNS1035LabelMaxLength-11 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, "must be no more than 52 characters"))
	}
	return allErrs
}

// ValidateCronJobUpdate validates an update of a CronJob (the 52-character
// name limit is not re-checked, so older CronJobs stay updatable).
func ValidateCronJobUpdate(cj, old *batchv1.CronJob) field.ErrorList {
	allErrs := core.ValidateObjectMetaUpdate(&cj.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateCronJobSpec(&cj.Spec, &old.Spec, field.NewPath("spec"))...)
}

// ValidateCronJobStatusUpdate validates an update through cronjobs/status
// (upstream only checks the metadata).
func ValidateCronJobStatusUpdate(cj, old *batchv1.CronJob) field.ErrorList {
	return core.ValidateObjectMetaUpdate(&cj.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
}

func validateCronJobSpec(spec, oldSpec *batchv1.CronJobSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	sp := p.Child("schedule")
	if spec.Schedule == "" {
		allErrs = append(allErrs, field.Required(sp, ""))
	} else {
		if _, err := parseCronSchedule(spec.Schedule); err != nil {
			allErrs = append(allErrs, field.Invalid(sp, spec.Schedule, err.Error()))
		}
		// Time zones go in spec.timeZone; a TZ prefix is only tolerated on
		// objects that already had one.
		allowTZ := oldSpec != nil && strings.Contains(oldSpec.Schedule, "TZ")
		switch {
		case allowTZ && strings.Contains(spec.Schedule, "TZ") && spec.TimeZone != nil:
			allErrs = append(allErrs, field.Invalid(sp, spec.Schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
		case !allowTZ && strings.Contains(spec.Schedule, "TZ"):
			allErrs = append(allErrs, field.Invalid(sp, spec.Schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
		}
	}
	if spec.StartingDeadlineSeconds != nil {
		allErrs = append(allErrs, nonneg(*spec.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	if oldSpec == nil || !apiequality.Semantic.DeepEqual(spec.TimeZone, oldSpec.TimeZone) {
		allErrs = append(allErrs, validateTimeZone(spec.TimeZone, p.Child("timeZone"))...)
	}
	cp := p.Child("concurrencyPolicy")
	switch spec.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		allErrs = append(allErrs, field.Required(cp, ""))
	default:
		allErrs = append(allErrs, field.NotSupported(cp, spec.ConcurrencyPolicy, []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}))
	}
	jp := p.Child("jobTemplate")
	allErrs = append(allErrs, validateJobSpec(&spec.JobTemplate.Spec, jp.Child("spec"))...)
	// The Jobs' selectors are generated when they are created.
	if spec.JobTemplate.Spec.Selector != nil {
		allErrs = append(allErrs, field.Invalid(jp.Child("spec", "selector"), spec.JobTemplate.Spec.Selector, "`selector` will be auto-generated"))
	}
	if isTrue(spec.JobTemplate.Spec.ManualSelector) {
		allErrs = append(allErrs, field.NotSupported(jp.Child("spec", "manualSelector"), spec.JobTemplate.Spec.ManualSelector, []string{"nil", "false"}))
	}
	if spec.SuccessfulJobsHistoryLimit != nil {
		allErrs = append(allErrs, nonneg(int64(*spec.SuccessfulJobsHistoryLimit), p.Child("successfulJobsHistoryLimit"))...)
	}
	if spec.FailedJobsHistoryLimit != nil {
		allErrs = append(allErrs, nonneg(int64(*spec.FailedJobsHistoryLimit), p.Child("failedJobsHistoryLimit"))...)
	}
	return allErrs
}

// validTimeZoneComponent follows the IANA naming rules (letters, '.', '-',
// '_', plus digits and '+' for legacy names; at most 14 characters).
var validTimeZoneComponent = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

func validateTimeZone(tz *string, p *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(p, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneComponent.MatchString(part) {
			return field.ErrorList{field.Invalid(p, tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	var allErrs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		allErrs = append(allErrs, field.Invalid(p, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		allErrs = append(allErrs, field.Invalid(p, tz, err.Error()))
	}
	return allErrs
}
