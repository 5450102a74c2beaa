package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func podTemplate() corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{}
	t.Labels = map[string]string{"app": "web"}
	t.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx:1.27"}}
	return t
}

type check struct {
	name      string
	got, want any
}

func runChecks(t *testing.T, checks []check) {
	t.Helper()
	for _, c := range checks {
		if !apiequality.Semantic.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestDefaultDeployment(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: podTemplate()}}
	DefaultDeployment(d)
	s := d.Spec
	runChecks(t, []check{
		{"replicas", *s.Replicas, int32(1)},
		{"strategy", s.Strategy.Type, appsv1.RollingUpdateDeploymentStrategyType},
		{"maxUnavailable", *s.Strategy.RollingUpdate.MaxUnavailable, intstr.FromString("25%")},
		{"maxSurge", *s.Strategy.RollingUpdate.MaxSurge, intstr.FromString("25%")},
		{"revisionHistoryLimit", *s.RevisionHistoryLimit, int32(10)},
		{"progressDeadlineSeconds", *s.ProgressDeadlineSeconds, int32(600)},
		{"template restartPolicy", s.Template.Spec.RestartPolicy, corev1.RestartPolicyAlways},
		{"template pull policy", s.Template.Spec.Containers[0].ImagePullPolicy, corev1.PullIfNotPresent},
		{"template enableServiceLinks (pod-only default)", s.Template.Spec.EnableServiceLinks == nil, true},
	})

	// Recreate gets no rollingUpdate block.
	r := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}
	DefaultDeployment(r)
	if r.Spec.Strategy.RollingUpdate != nil {
		t.Errorf("Recreate strategy got a rollingUpdate")
	}
}

func TestDefaultReplicaSetAndDaemonSet(t *testing.T) {
	rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: podTemplate()}}
	DefaultReplicaSet(rs)
	ds := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: podTemplate()}}
	DefaultDaemonSet(ds)
	runChecks(t, []check{
		{"rs replicas", *rs.Spec.Replicas, int32(1)},
		{"rs template dnsPolicy", rs.Spec.Template.Spec.DNSPolicy, corev1.DNSClusterFirst},
		{"ds strategy", ds.Spec.UpdateStrategy.Type, appsv1.RollingUpdateDaemonSetStrategyType},
		{"ds maxUnavailable", *ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable, intstr.FromInt32(1)},
		{"ds maxSurge", *ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge, intstr.FromInt32(0)},
		{"ds revisionHistoryLimit", *ds.Spec.RevisionHistoryLimit, int32(10)},
	})
}

func TestDefaultStatefulSet(t *testing.T) {
	ss := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
		Template:             podTemplate(),
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{}},
	}}
	ss.Spec.VolumeClaimTemplates[0].Name = "data"
	DefaultStatefulSet(ss)
	s := ss.Spec
	runChecks(t, []check{
		{"replicas", *s.Replicas, int32(1)},
		{"podManagementPolicy", s.PodManagementPolicy, appsv1.OrderedReadyPodManagement},
		{"updateStrategy", s.UpdateStrategy.Type, appsv1.RollingUpdateStatefulSetStrategyType},
		{"partition", *s.UpdateStrategy.RollingUpdate.Partition, int32(0)},
		{"maxUnavailable", *s.UpdateStrategy.RollingUpdate.MaxUnavailable, intstr.FromInt32(1)},
		{"whenDeleted", s.PersistentVolumeClaimRetentionPolicy.WhenDeleted, appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
		{"whenScaled", s.PersistentVolumeClaimRetentionPolicy.WhenScaled, appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
		{"revisionHistoryLimit", *s.RevisionHistoryLimit, int32(10)},
		{"claim volumeMode", *s.VolumeClaimTemplates[0].Spec.VolumeMode, corev1.PersistentVolumeFilesystem},
		{"claim phase", s.VolumeClaimTemplates[0].Status.Phase, corev1.ClaimPending},
	})

	// OnDelete: no rollingUpdate block is invented.
	od := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}}
	DefaultStatefulSet(od)
	if od.Spec.UpdateStrategy.RollingUpdate != nil {
		t.Errorf("OnDelete strategy got a rollingUpdate")
	}
}
