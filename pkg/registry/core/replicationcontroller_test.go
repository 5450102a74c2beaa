package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

func rcTemplate(labels map[string]string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}
}

func TestDefaultReplicationController(t *testing.T) {
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: rcTemplate(map[string]string{"app": "web"})}}
	DefaultReplicationController(rc)
	if rc.Spec.Selector["app"] != "web" || rc.Labels["app"] != "web" {
		t.Errorf("selector %v labels %v, want the template's labels", rc.Spec.Selector, rc.Labels)
	}
	if rc.Spec.Replicas == nil || *rc.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1", rc.Spec.Replicas)
	}
	if rc.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || rc.Spec.Template.Spec.TerminationGracePeriodSeconds == nil {
		t.Errorf("template not defaulted: %+v", rc.Spec.Template.Spec)
	}
	rc = &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "x"}},
		Spec: corev1.ReplicationControllerSpec{Replicas: new(int32(0)), Selector: map[string]string{"app": "web"},
			Template: rcTemplate(map[string]string{"app": "web", "v": "2"})}}
	DefaultReplicationController(rc)
	if len(rc.Spec.Selector) != 1 || rc.Labels["own"] != "x" || len(rc.Labels) != 1 || *rc.Spec.Replicas != 0 {
		t.Errorf("user values overwritten: labels %v spec %+v", rc.Labels, rc.Spec)
	}
	rc = &corev1.ReplicationController{}
	DefaultReplicationController(rc) // no template: only replicas
	if *rc.Spec.Replicas != 1 || rc.Spec.Selector != nil {
		t.Errorf("without a template: %+v", rc.Spec)
	}
}

func TestValidateReplicationController(t *testing.T) {
	valid := func() *corev1.ReplicationController {
		rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"},
			Spec: corev1.ReplicationControllerSpec{Template: rcTemplate(map[string]string{"app": "web"})}}
		DefaultReplicationController(rc)
		return rc
	}
	tests := []struct {
		name   string
		mutate func(*corev1.ReplicationController)
		want   []string
	}{
		{"valid", func(*corev1.ReplicationController) {}, nil},
		{"no namespace", func(rc *corev1.ReplicationController) { rc.Namespace = "" }, []string{"metadata.namespace: Required value"}},
		{"no selector", func(rc *corev1.ReplicationController) { rc.Spec.Selector = nil }, []string{"spec.selector: Required value"}},
		{"selector does not match", func(rc *corev1.ReplicationController) { rc.Spec.Selector = map[string]string{"app": "db"} },
			[]string{"spec.template.metadata.labels: Invalid value"}},
		{"negative replicas", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = new(int32(-1)) }, []string{"spec.replicas: Invalid value"}},
		{"negative minReadySeconds", func(rc *corev1.ReplicationController) { rc.Spec.MinReadySeconds = -1 },
			[]string{"spec.minReadySeconds: Invalid value"}},
		{"no template", func(rc *corev1.ReplicationController) { rc.Spec.Template = nil }, []string{"spec.template: Required value"}},
		{"restartPolicy", func(rc *corev1.ReplicationController) {
			rc.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		},
			[]string{"spec.template.spec.restartPolicy: Unsupported value"}},
		{"activeDeadlineSeconds", func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.ActiveDeadlineSeconds = new(int64(10)) },
			[]string{"spec.template.spec.activeDeadlineSeconds: Forbidden"}},
		{"writable GCE PD with 2 replicas", func(rc *corev1.ReplicationController) {
			rc.Spec.Replicas = new(int32(2))
			rc.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "pd", VolumeSource: corev1.VolumeSource{
				GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "disk", FSType: "ext4"}}}}
		}, []string{"spec.template.spec.volumes[0].gcePersistentDisk.readOnly: Invalid value"}},
		{"writable GCE PD with 1 replica", func(rc *corev1.ReplicationController) {
			rc.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "pd", VolumeSource: corev1.VolumeSource{
				GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "disk", FSType: "ext4"}}}}
		}, nil},
		{"no containers", func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.Containers = nil },
			[]string{"spec.template.spec.containers: Required value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := valid()
			tc.mutate(rc)
			registrytest.ExpectErrors(t, ValidateReplicationController(rc), tc.want...)
		})
	}
	t.Run("update may change the selector", func(t *testing.T) {
		old := valid()
		rc := old.DeepCopy()
		rc.Spec.Selector = map[string]string{"app": "web", "v": "2"}
		rc.Spec.Template.Labels = map[string]string{"app": "web", "v": "2"}
		registrytest.ExpectErrors(t, ValidateReplicationControllerUpdate(rc, old))
		rc.Spec.Replicas = new(int32(-2))
		registrytest.ExpectErrors(t, ValidateReplicationControllerUpdate(rc, old), "spec.replicas: Invalid value")
	})
}

func TestValidateReplicationControllerStatusUpdate(t *testing.T) {
	tests := []struct {
		name   string
		status corev1.ReplicationControllerStatus
		want   []string
	}{
		{"valid", corev1.ReplicationControllerStatus{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 2}, nil},
		{"negative", corev1.ReplicationControllerStatus{Replicas: -1, ObservedGeneration: -1},
			// as upstream, the zero counts are then "greater than" -1 too
			[]string{"status.replicas: Invalid value", "status.observedGeneration: Invalid value", "status.fullyLabeledReplicas: Invalid value",
				"status.readyReplicas: Invalid value", "status.availableReplicas: Invalid value"}},
		{"ready above replicas", corev1.ReplicationControllerStatus{Replicas: 1, ReadyReplicas: 2, FullyLabeledReplicas: 2},
			[]string{"status.readyReplicas: Invalid value", "status.fullyLabeledReplicas: Invalid value"}},
		{"available above ready", corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 1, AvailableReplicas: 2},
			[]string{"status.availableReplicas: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "1"}}
			rc := old.DeepCopy()
			rc.Status = tc.status
			registrytest.ExpectErrors(t, ValidateReplicationControllerStatusUpdate(rc, old), tc.want...)
		})
	}
}
