package compat

import (
	"context"
	"net/http"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// TestClientGoApplyConfigurations: client-go's typed Apply with apply
// configurations creates, updates, conflicts (409 with upstream's message)
// and forces against skiff; ApplyStatus is owned through the status
// subresource; Extract* rebuilds a manager's configuration from skiff's
// managedFields.
func TestClientGoApplyConfigurations(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "apply")

	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Apply(ctx, corev1ac.ConfigMap("cfg", ns).WithData(map[string]string{"a": "1", "b": "2"}),
		metav1.ApplyOptions{FieldManager: "team-a"})
	must(t, err, "apply creates the configmap")
	if !mapsEqual(cm.Data, map[string]string{"a": "1", "b": "2"}) || len(cm.ManagedFields) != 1 ||
		cm.ManagedFields[0].Manager != "team-a" || cm.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("applied configmap: data %v managedFields %+v", cm.Data, cm.ManagedFields)
	}

	_, err = cms.Apply(ctx, corev1ac.ConfigMap("cfg", ns).WithData(map[string]string{"a": "other"}),
		metav1.ApplyOptions{FieldManager: "team-b"})
	if !apierrors.IsConflict(err) || statusCode(err) != http.StatusConflict ||
		err.Error() != `Apply failed with 1 conflict: conflict with "team-a": .data.a` {
		t.Fatalf("conflicting apply: %v", err)
	}
	var se apierrors.APIStatus
	if s, ok := err.(apierrors.APIStatus); ok {
		se = s
	}
	if se == nil || se.Status().Details == nil || len(se.Status().Details.Causes) != 1 ||
		se.Status().Details.Causes[0].Type != metav1.CauseTypeFieldManagerConflict {
		t.Errorf("conflict details: %+v", se)
	}
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("cfg", ns).WithData(map[string]string{"a": "other"}),
		metav1.ApplyOptions{FieldManager: "team-b", Force: true})
	must(t, err, "forced apply")
	if !mapsEqual(cm.Data, map[string]string{"a": "other", "b": "2"}) {
		t.Errorf("data after forced apply %v", cm.Data)
	}
	ext, err := corev1ac.ExtractConfigMap(cm, "team-a")
	must(t, err, "extract team-a")
	if ext.Data == nil || len(ext.Data) != 1 || ext.Data["b"] != "2" {
		t.Errorf("team-a owns %v after losing a, want only b", ext.Data)
	}

	deps := cs.AppsV1().Deployments(ns)
	labels := map[string]string{"app": "web"}
	web := func(image string, replicas int32) *appsv1ac.DeploymentApplyConfiguration {
		return appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
				WithContainers(corev1ac.Container().WithName("web").WithImage(image)))))
	}
	d, err := deps.Apply(ctx, web("nginx:1.25", 1), metav1.ApplyOptions{FieldManager: "deployer"})
	must(t, err, "apply creates the deployment")
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Generation != 1 {
		t.Errorf("applied deployment not defaulted: strategy %q generation %d", d.Spec.Strategy.Type, d.Generation)
	}
	d, err = deps.Apply(ctx, web("nginx:1.26", 1), metav1.ApplyOptions{FieldManager: "deployer"})
	must(t, err, "re-apply with a new image")
	if d.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" || d.Generation != 2 {
		t.Errorf("re-applied deployment: image %q generation %d", d.Spec.Template.Spec.Containers[0].Image, d.Generation)
	}
	// A no-op apply changes nothing.
	again, err := deps.Apply(ctx, web("nginx:1.26", 1), metav1.ApplyOptions{FieldManager: "deployer"})
	must(t, err, "no-op apply")
	if again.ResourceVersion != d.ResourceVersion {
		t.Errorf("a no-op apply wrote: resourceVersion %s -> %s", d.ResourceVersion, again.ResourceVersion)
	}
	extd, err := appsv1ac.ExtractDeployment(d, "deployer")
	must(t, err, "extract deployer")
	if extd.Spec == nil || extd.Spec.Replicas == nil || *extd.Spec.Replicas != 1 || extd.Spec.Strategy != nil ||
		len(extd.Spec.Template.Spec.Containers) != 1 || *extd.Spec.Template.Spec.Containers[0].Image != "nginx:1.26" {
		t.Errorf("deployer's extracted configuration: %+v", extd.Spec)
	}

	d, err = deps.ApplyStatus(ctx, appsv1ac.Deployment("web", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(1).WithObservedGeneration(2)),
		metav1.ApplyOptions{FieldManager: "status-controller", Force: true})
	must(t, err, "apply status")
	if d.Status.Replicas != 1 || d.Status.ObservedGeneration != 2 {
		t.Errorf("status after ApplyStatus: %+v", d.Status)
	}
	found := false
	for _, f := range d.ManagedFields {
		if f.Manager == "status-controller" {
			found = f.Subresource == "status" && f.Operation == metav1.ManagedFieldsOperationApply
		}
	}
	if !found {
		t.Errorf("no status-controller Apply entry for the status subresource: %+v", d.ManagedFields)
	}
	exts, err := appsv1ac.ExtractDeploymentStatus(d, "status-controller")
	must(t, err, "extract status")
	if exts.Status == nil || exts.Status.Replicas == nil || *exts.Status.Replicas != 1 {
		t.Errorf("extracted status %+v", exts.Status)
	}
}
