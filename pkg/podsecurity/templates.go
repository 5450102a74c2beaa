package podsecurity

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PodControllerResources are the resources upstream evaluates the pod
// template of (warn and audit only, never enforce).
var PodControllerResources = []schema.GroupResource{
	{Resource: "podtemplates"},
	{Resource: "replicationcontrollers"},
	{Group: "apps", Resource: "replicasets"},
	{Group: "apps", Resource: "deployments"},
	{Group: "apps", Resource: "statefulsets"},
	{Group: "apps", Resource: "daemonsets"},
	{Group: "batch", Resource: "jobs"},
	{Group: "batch", Resource: "cronjobs"},
}

// PodTemplate is the pod metadata and spec a workload object creates pods
// from (upstream's DefaultPodSpecExtractor); ok is false for other
// objects, and both are nil for a ReplicationController without template.
func PodTemplate(obj runtime.Object) (meta *metav1.ObjectMeta, spec *corev1.PodSpec, ok bool) {
	var t *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *corev1.Pod:
		return &o.ObjectMeta, &o.Spec, true
	case *corev1.PodTemplate:
		t = &o.Template
	case *corev1.ReplicationController:
		if o.Spec.Template == nil {
			return nil, nil, true
		}
		t = o.Spec.Template
	case *appsv1.ReplicaSet:
		t = &o.Spec.Template
	case *appsv1.Deployment:
		t = &o.Spec.Template
	case *appsv1.StatefulSet:
		t = &o.Spec.Template
	case *appsv1.DaemonSet:
		t = &o.Spec.Template
	case *batchv1.Job:
		t = &o.Spec.Template
	case *batchv1.CronJob:
		t = &o.Spec.JobTemplate.Spec.Template
	default:
		return nil, nil, false
	}
	return &t.ObjectMeta, &t.Spec, true
}
