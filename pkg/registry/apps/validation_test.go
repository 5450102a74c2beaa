package apps

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// expectErrs fails unless errs are exactly want ("<field>: <type>").

func objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default"}
}

func webSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
}

func validDeployment() *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: objectMeta("web"), Spec: appsv1.DeploymentSpec{Selector: webSelector(), Template: podTemplate()}}
	DefaultDeployment(d)
	return d
}

func TestValidateDeployment(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(d *appsv1.Deployment)
		want   []string
	}{
		{name: "valid"},
		// As upstream, a nil selector also matches no template labels.
		{name: "no selector", mutate: func(d *appsv1.Deployment) { d.Spec.Selector = nil },
			want: []string{"spec.selector: Required value", "spec.template.metadata.labels: Invalid value"}},
		{name: "empty selector", mutate: func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} }, want: []string{"spec.selector: Invalid value"}},
		{name: "selector does not match", mutate: func(d *appsv1.Deployment) { d.Spec.Template.Labels = map[string]string{"app": "api"} },
			want: []string{"spec.template.metadata.labels: Invalid value"}},
		{name: "negative replicas", mutate: func(d *appsv1.Deployment) { d.Spec.Replicas = ptrOf(int32(-1)) }, want: []string{"spec.replicas: Invalid value"}},
		{name: "restartPolicy Never", mutate: func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			want: []string{"spec.template.spec.restartPolicy: Unsupported value"}},
		{name: "container without image", mutate: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "" },
			want: []string{"spec.template.spec.containers[0].image: Required value"}},
		{name: "writable GCE PD with 2 replicas", mutate: func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptrOf(int32(2))
			d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "pd", VolumeSource: corev1.VolumeSource{
				GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "disk", FSType: "ext4"}}}}
		}, want: []string{"spec.template.spec.volumes[0].gcePersistentDisk.readOnly: Invalid value"}},
		{name: "read-only GCE PD with 2 replicas", mutate: func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptrOf(int32(2))
			d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "pd", VolumeSource: corev1.VolumeSource{
				GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "disk", FSType: "ext4", ReadOnly: true}}}}
		}},
		{name: "both zero", mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = ptrOf(intstr.FromInt32(0))
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptrOf(intstr.FromString("0%"))
		}, want: []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value"}},
		{name: "bad percent", mutate: func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptrOf(intstr.FromString("lots")) },
			want: []string{"spec.strategy.rollingUpdate.maxSurge: Invalid value"}},
		{name: "over 100%", mutate: func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptrOf(intstr.FromString("110%"))
		},
			want: []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value"}},
		{name: "recreate with rollingUpdate", mutate: func(d *appsv1.Deployment) { d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType },
			want: []string{"spec.strategy.rollingUpdate: Forbidden"}},
		{name: "progress deadline", mutate: func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 600 },
			want: []string{"spec.progressDeadlineSeconds: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeployment()
			if tc.mutate != nil {
				tc.mutate(d)
			}
			registrytest.ExpectErrors(t, ValidateDeployment(d), tc.want...)
		})
	}

	d := validDeployment()
	d.Spec.Template.Labels = map[string]string{"app": "api"}
	errs := ValidateDeployment(d)
	want := "spec.template.metadata.labels: Invalid value: {\"app\":\"api\"}: `selector` does not match template `labels`"
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("got %v, want %s", errs, want)
	}
}

func TestValidateDeploymentUpdate(t *testing.T) {
	old := validDeployment()
	old.ResourceVersion = "1"

	d := old.DeepCopy()
	d.Spec.Replicas = ptrOf(int32(5))
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	registrytest.ExpectErrors(t, ValidateDeploymentUpdate(d, old))

	d = old.DeepCopy()
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "x"}}
	d.Spec.Template.Labels["tier"] = "x"
	registrytest.ExpectErrors(t, ValidateDeploymentUpdate(d, old), "spec.selector: Invalid value")

	st := old.DeepCopy()
	st.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 2, CollisionCount: nil}
	old.Status.CollisionCount = ptrOf(int32(2))
	registrytest.ExpectErrors(t, ValidateDeploymentStatusUpdate(st, old), "status.readyReplicas: Invalid value", "status.collisionCount: Invalid value")
}

func TestValidateReplicaSet(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: objectMeta("web-1234"), Spec: appsv1.ReplicaSetSpec{Selector: webSelector(), Template: podTemplate()}}
	DefaultReplicaSet(rs)
	registrytest.ExpectErrors(t, ValidateReplicaSet(rs))

	rs.Spec.Template.Spec.ActiveDeadlineSeconds = ptrOf(int64(10))
	registrytest.ExpectErrors(t, ValidateReplicaSet(rs), "spec.template.spec.activeDeadlineSeconds: Forbidden")

	old := rs.DeepCopy()
	old.Spec.Template.Spec.ActiveDeadlineSeconds = nil
	old.ResourceVersion = "1"
	upd := old.DeepCopy()
	upd.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}
	registrytest.ExpectErrors(t, ValidateReplicaSetUpdate(upd, old), "spec.selector: Invalid value")

	st := old.DeepCopy()
	st.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, FullyLabeledReplicas: 2}
	registrytest.ExpectErrors(t, ValidateReplicaSetStatusUpdate(st, old))
}

func validStatefulSet() *appsv1.StatefulSet {
	ss := &appsv1.StatefulSet{ObjectMeta: objectMeta("db"), Spec: appsv1.StatefulSetSpec{
		Selector: webSelector(), Template: podTemplate(), ServiceName: "db",
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}},
	}}
	DefaultStatefulSet(ss)
	return ss
}

func TestValidateStatefulSet(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *appsv1.StatefulSet)
		want   []string
	}{
		{name: "valid"},
		{name: "name must be a DNS label", mutate: func(s *appsv1.StatefulSet) { s.Name = "db.primary" }, want: []string{"metadata.name: Invalid value"}},
		{name: "no selector", mutate: func(s *appsv1.StatefulSet) { s.Spec.Selector = nil },
			want: []string{"spec.selector: Required value", "spec.template.metadata.labels: Invalid value"}},
		{name: "mismatch", mutate: func(s *appsv1.StatefulSet) { s.Spec.Template.Labels = nil }, want: []string{"spec.template.metadata.labels: Invalid value"}},
		{name: "bad pod management", mutate: func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "Random" }, want: []string{"spec.podManagementPolicy: Invalid value"}},
		{name: "OnDelete with rollingUpdate", mutate: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType },
			want: []string{"spec.updateStrategy.rollingUpdate: Invalid value"}},
		{name: "maxUnavailable 0", mutate: func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptrOf(intstr.FromInt32(0))
		},
			want: []string{"spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value"}},
		{name: "retention policy", mutate: func(s *appsv1.StatefulSet) { s.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = "Keep" },
			want: []string{"spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value"}},
		{name: "restart policy", mutate: func(s *appsv1.StatefulSet) { s.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			want: []string{"spec.template.spec.restartPolicy: Unsupported value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validStatefulSet()
			if tc.mutate != nil {
				tc.mutate(s)
			}
			registrytest.ExpectErrors(t, ValidateStatefulSet(s), tc.want...)
		})
	}
}

func TestValidateStatefulSetUpdate(t *testing.T) {
	old := validStatefulSet()
	old.ResourceVersion = "1"

	s := old.DeepCopy()
	s.Spec.Replicas = ptrOf(int32(3))
	s.Spec.Template.Spec.Containers[0].Image = "postgres:17"
	s.Spec.MinReadySeconds = 5
	registrytest.ExpectErrors(t, ValidateStatefulSetUpdate(s, old))

	s = old.DeepCopy()
	s.Spec.ServiceName = "other"
	errs := ValidateStatefulSetUpdate(s, old)
	registrytest.ExpectErrors(t, errs, "spec: Forbidden")
	want := "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
	if len(errs) == 1 && errs[0].Error() != want {
		t.Errorf("got %q", errs[0].Error())
	}

	st := old.DeepCopy()
	st.Status = appsv1.StatefulSetStatus{Replicas: 1, CurrentReplicas: 2}
	registrytest.ExpectErrors(t, ValidateStatefulSetStatusUpdate(st, old), "status.currentReplicas: Invalid value")
}

func TestValidateDaemonSet(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: objectMeta("agent"), Spec: appsv1.DaemonSetSpec{Selector: webSelector(), Template: podTemplate()}}
	DefaultDaemonSet(ds)
	registrytest.ExpectErrors(t, ValidateDaemonSet(ds))

	both := ds.DeepCopy()
	both.Spec.UpdateStrategy.RollingUpdate.MaxSurge = ptrOf(intstr.FromString("10%"))
	registrytest.ExpectErrors(t, ValidateDaemonSet(both), "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value")

	noSel := ds.DeepCopy()
	noSel.Spec.Selector = nil
	registrytest.ExpectErrors(t, ValidateDaemonSet(noSel), "spec.template.metadata.labels: Invalid value")

	badType := ds.DeepCopy()
	badType.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: "Rolling"}
	registrytest.ExpectErrors(t, ValidateDaemonSet(badType), "spec.updateStrategy: Unsupported value")

	old := ds.DeepCopy()
	old.ResourceVersion = "1"
	upd := old.DeepCopy()
	upd.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	upd.Spec.Template.Labels = map[string]string{"app": "agent"}
	registrytest.ExpectErrors(t, ValidateDaemonSetUpdate(upd, old), "spec.selector: Invalid value")

	st := old.DeepCopy()
	st.Status.NumberReady = -1
	registrytest.ExpectErrors(t, ValidateDaemonSetStatusUpdate(st, old), "status.numberReady: Invalid value")
}

func TestValidateControllerRevision(t *testing.T) {
	cr := &appsv1.ControllerRevision{ObjectMeta: objectMeta("web-7d4b9c"), Data: runtime.RawExtension{Raw: []byte(`{"spec":{}}`)}, Revision: 2}
	registrytest.ExpectErrors(t, ValidateControllerRevision(cr))

	empty := cr.DeepCopy()
	empty.Data = runtime.RawExtension{}
	empty.Revision = -1
	registrytest.ExpectErrors(t, ValidateControllerRevision(empty), "data: Required value", "revision: Invalid value")

	old := cr.DeepCopy()
	old.ResourceVersion = "1"
	upd := old.DeepCopy()
	upd.Data = runtime.RawExtension{Raw: []byte(`{"spec":{"x":1}}`)}
	registrytest.ExpectErrors(t, ValidateControllerRevisionUpdate(upd, old), "data: Invalid value")
}
