package apps

// Defaulting for the apps/v1 kinds, after upstream
// k8s.io/kubernetes/pkg/apis/apps/v1/defaults.go and its generated walker.
// Every workload's pod template gets the PodSpec defaults of the core group.

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/registry/core"
)

func ptrOf[T any](v T) *T { return &v }

// DefaultDeployment applies the defaults of a Deployment: one replica, a
// RollingUpdate strategy with 25% max unavailable and 25% max surge, ten
// old ReplicaSets kept, and a 600s progress deadline.
func DefaultDeployment(d *appsv1.Deployment) {
	spec := &d.Spec
	if spec.Replicas == nil {
		spec.Replicas = ptrOf(int32(1))
	}
	s := &spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptrOf(intstr.FromString("25%"))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptrOf(intstr.FromString("25%"))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptrOf(int32(10))
	}
	if spec.ProgressDeadlineSeconds == nil {
		spec.ProgressDeadlineSeconds = ptrOf(int32(600))
	}
	core.DefaultPodTemplateSpec(&spec.Template)
}

// DefaultReplicaSet applies the defaults of a ReplicaSet: one replica.
func DefaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptrOf(int32(1))
	}
	core.DefaultPodTemplateSpec(&rs.Spec.Template)
}

// DefaultDaemonSet applies the defaults of a DaemonSet: a RollingUpdate
// strategy replacing one node's pod at a time (maxUnavailable 1, maxSurge
// 0), and ten old revisions kept.
func DefaultDaemonSet(ds *appsv1.DaemonSet) {
	spec := &ds.Spec
	s := &spec.UpdateStrategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if s.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptrOf(intstr.FromInt32(1))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptrOf(intstr.FromInt32(0))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptrOf(int32(10))
	}
	core.DefaultPodTemplateSpec(&spec.Template)
}

// DefaultStatefulSet applies the defaults of a StatefulSet: OrderedReady pod
// management, a RollingUpdate strategy (partition 0, maxUnavailable 1 — the
// MaxUnavailableStatefulSet gate is on by default), PVCs retained on delete
// and scale-down, one replica, ten old revisions. Its volume claim templates
// get the PersistentVolumeClaim defaults, status.phase Pending included.
func DefaultStatefulSet(ss *appsv1.StatefulSet) {
	spec := &ss.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	s := &spec.UpdateStrategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	// Only a rollingUpdate the user (or the line above) set is filled in.
	if s.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.RollingUpdate != nil {
		if s.RollingUpdate.Partition == nil {
			s.RollingUpdate.Partition = ptrOf(int32(0))
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptrOf(intstr.FromInt32(1))
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = ptrOf(int32(1))
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptrOf(int32(10))
	}
	core.DefaultPodTemplateSpec(&spec.Template)
	for i := range spec.VolumeClaimTemplates {
		core.DefaultPersistentVolumeClaim(&spec.VolumeClaimTemplates[i])
	}
}

// DefaultControllerRevision applies the defaults of a ControllerRevision
// (upstream has none).
func DefaultControllerRevision(*appsv1.ControllerRevision) {}
