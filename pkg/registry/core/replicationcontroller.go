package core

import (
	"strconv"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// replicationControllers: core/v1 ReplicationControllers, with status and
// scale subresources and the status.replicas field selector. A delete that
// names no propagation policy orphans the controller's pods, as upstream
// keeps for core/v1 (kubectl sends Background and deletes them).
func replicationControllers() *registry.Definition {
	d := def("replicationcontrollers", "ReplicationController", true,
		func() runtime.Object { return &corev1.ReplicationController{} },
		func() runtime.Object { return &corev1.ReplicationControllerList{} },
		&registry.Strategy{
			Default:            registry.Default(DefaultReplicationController),
			Validate:           registry.Validate(ValidateReplicationController),
			ValidateUpdate:     registry.ValidateUpdate(ValidateReplicationControllerUpdate),
			Generation:         true,
			HasStatus:          true,
			DefaultPropagation: metav1.DeletePropagationOrphan,
			Fields: registry.Fields(func(rc *corev1.ReplicationController) map[string]string {
				return map[string]string{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))}
			}),
		})
	d.ShortNames, d.Categories = []string{"rc"}, []string{"all"}
	d.ValidateStatus = registry.ValidateUpdate(ValidateReplicationControllerStatusUpdate)
	d.Scale = &registry.ScaleFuncs{
		Get: func(obj runtime.Object) (*autoscalingv1.Scale, error) {
			rc := obj.(*corev1.ReplicationController)
			return registry.ScaleOf(rc, rc.Spec.Replicas, rc.Status.Replicas, &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}), nil
		},
		SetReplicas: func(obj runtime.Object, n int32) { obj.(*corev1.ReplicationController).Spec.Replicas = &n },
	}
	return d
}

// DefaultReplicationController applies the core/v1 defaults: without a
// selector the controller selects its template's labels, without labels it
// takes them too, replicas default to 1, and the template gets the pod
// defaults.
func DefaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = t.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = t.Labels
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptrOf(int32(1))
	}
	if rc.Spec.Template != nil {
		DefaultPodTemplateSpec(rc.Spec.Template)
	}
}

// ValidateReplicationController validates a new ReplicationController.
func ValidateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	allErrs := ValidateObjectMeta(&rc.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
}

// ValidateReplicationControllerUpdate validates an update; unlike a
// ReplicaSet's, the selector may change.
func ValidateReplicationControllerUpdate(rc, old *corev1.ReplicationController) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
}

func validateReplicationControllerSpec(spec *corev1.ReplicationControllerSpec, p *field.Path) field.ErrorList {
	allErrs := validateNonnegative(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))
	selector := labels.Set(spec.Selector).AsSelector()
	if selector.Empty() {
		allErrs = append(allErrs, field.Required(p.Child("selector"), ""))
	}
	if spec.Replicas != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*spec.Replicas), p.Child("replicas"))...)
	}
	tp := p.Child("template")
	t := spec.Template
	if t == nil {
		return append(allErrs, field.Required(tp, ""))
	}
	if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
		allErrs = append(allErrs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	allErrs = append(allErrs, ValidatePodTemplateSpec(t, tp)...)
	if spec.Replicas != nil && *spec.Replicas > 1 {
		allErrs = append(allErrs, ValidateReadOnlyPersistentDisks(t.Spec.Volumes, tp.Child("spec", "volumes"))...)
	}
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(tp.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return allErrs
}

// ValidateReplicationControllerStatusUpdate validates an update through
// replicationcontrollers/status: counts are non-negative and no count
// exceeds status.replicas.
func ValidateReplicationControllerStatusUpdate(rc, old *corev1.ReplicationController) field.ErrorList {
	allErrs := ValidateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, p := rc.Status, field.NewPath("status")
	allErrs = append(allErrs, validateNonnegative(int64(st.Replicas), p.Child("replicas"))...)
	allErrs = append(allErrs, validateNonnegative(int64(st.FullyLabeledReplicas), p.Child("fullyLabeledReplicas"))...)
	allErrs = append(allErrs, validateNonnegative(int64(st.ReadyReplicas), p.Child("readyReplicas"))...)
	allErrs = append(allErrs, validateNonnegative(int64(st.AvailableReplicas), p.Child("availableReplicas"))...)
	allErrs = append(allErrs, validateNonnegative(st.ObservedGeneration, p.Child("observedGeneration"))...)
	const msg = "cannot be greater than status.replicas"
	for _, c := range []struct {
		name string
		n    int32
	}{{"fullyLabeledReplicas", st.FullyLabeledReplicas}, {"readyReplicas", st.ReadyReplicas}, {"availableReplicas", st.AvailableReplicas}} {
		if c.n > st.Replicas {
			allErrs = append(allErrs, field.Invalid(p.Child(c.name), c.n, msg))
		}
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return allErrs
}

// ValidateReadOnlyPersistentDisks: a GCE persistent disk can be mounted on
// several machines only read-only, so a template for more than one replica
// must mount it so.
func ValidateReadOnlyPersistentDisks(volumes []corev1.Volume, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i := range volumes {
		if pd := volumes[i].GCEPersistentDisk; pd != nil && !pd.ReadOnly {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("gcePersistentDisk", "readOnly"), false,
				"must be true for replicated pods > 1; GCE PD can only be mounted on multiple machines if it is read-only"))
		}
	}
	return allErrs
}
