package core

// The pods/ephemeralcontainers subresource (kubectl debug): an update
// through it adds ephemeral containers to a pod and changes nothing else.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PrepareEphemeralContainersUpdate keeps everything of the stored pod but
// spec.ephemeralContainers, as upstream's dropNonEphemeralContainerUpdates
// (metadata as a status update resets it: labels, annotations, finalizers
// and owner references stay as stored); a change of the ephemeral
// containers bumps metadata.generation, as every spec change does.
func PrepareEphemeralContainersUpdate(pod, old *corev1.Pod) {
	ecs := pod.Spec.EphemeralContainers
	pod.Spec = *old.Spec.DeepCopy()
	pod.Spec.EphemeralContainers = ecs
	pod.Status = *old.Status.DeepCopy()
	om := old.ObjectMeta.DeepCopy()
	pod.Labels, pod.Annotations, pod.Finalizers, pod.OwnerReferences = om.Labels, om.Annotations, om.Finalizers, om.OwnerReferences
	pod.Generation = old.Generation
	if !apiequality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		pod.Generation = old.Generation + 1
	}
}

// ValidatePodEphemeralContainersUpdate validates an update through the
// pods/ephemeralcontainers subresource, as upstream's: the pod as a whole
// (names unique across all containers, no ports, probes, lifecycle or
// resources for ephemeral containers, targetContainerName naming a
// container of the pod), no ephemeral containers for static pods, and
// existing ephemeral containers neither removed nor changed.
func ValidatePodEphemeralContainersUpdate(pod, old *corev1.Pod) field.ErrorList {
	metaPath := field.NewPath("metadata")
	allErrs := ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, metaPath)
	allErrs = append(allErrs, validatePodMetadataAndSpec(pod)...)
	allErrs = append(allErrs, validatePodAnnotationUpdates(pod, old, metaPath.Child("annotations"))...)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	// Patches do not keep the order: match by name.
	byName := make(map[string]*corev1.EphemeralContainer, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	specPath := field.NewPath("spec", "ephemeralContainers")
	for _, o := range old.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		switch {
		case !ok:
			allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		case !apiequality.Semantic.DeepEqual(o, *n):
			allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", o.Name, diff.Diff(o, *n))))
		}
	}
	return allErrs
}
