package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateNodeSelector checks a NodeSelector as node affinity does (other
// groups embed it: resource.k8s.io's ResourceSlice, storage's topology).
func ValidateNodeSelector(ns *corev1.NodeSelector, fldPath *field.Path) field.ErrorList {
	return validateNodeSelector(ns, false, fldPath)
}

// ValidateTemplateObjectMeta checks the metadata of an embedded object
// template (a ResourceClaimTemplate's claim): only labels and annotations
// may be set.
func ValidateTemplateObjectMeta(meta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	return validateTemplateObjectMeta(meta, fldPath)
}
