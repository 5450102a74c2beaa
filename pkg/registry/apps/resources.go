package apps

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// Definitions are the apps/v1 resources.
func Definitions() []*registry.Definition {
	deploy := registry.NewDefinition("apps", "v1", "deployments", "Deployment", true,
		func() runtime.Object { return &appsv1.Deployment{} }, func() runtime.Object { return &appsv1.DeploymentList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultDeployment), Validate: registry.Validate(ValidateDeployment),
			ValidateUpdate: registry.ValidateUpdate(ValidateDeploymentUpdate), Generation: true, HasStatus: true,
		})
	deploy.ShortNames, deploy.Categories = []string{"deploy"}, []string{"all"}
	deploy.ValidateStatus = registry.ValidateUpdate(ValidateDeploymentStatusUpdate)
	deploy.Scale = &registry.ScaleFuncs{
		Get: func(obj runtime.Object) (*autoscalingv1.Scale, error) {
			d := obj.(*appsv1.Deployment)
			return registry.ScaleOf(d, d.Spec.Replicas, d.Status.Replicas, d.Spec.Selector), nil
		},
		SetReplicas: func(obj runtime.Object, n int32) { obj.(*appsv1.Deployment).Spec.Replicas = &n },
	}

	rs := registry.NewDefinition("apps", "v1", "replicasets", "ReplicaSet", true,
		func() runtime.Object { return &appsv1.ReplicaSet{} }, func() runtime.Object { return &appsv1.ReplicaSetList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultReplicaSet), Validate: registry.Validate(ValidateReplicaSet),
			ValidateUpdate: registry.ValidateUpdate(ValidateReplicaSetUpdate), Generation: true, HasStatus: true,
			Fields: registry.Fields(func(rs *appsv1.ReplicaSet) map[string]string {
				return map[string]string{"status.replicas": itoa(rs.Status.Replicas)}
			}),
		})
	rs.ShortNames, rs.Categories = []string{"rs"}, []string{"all"}
	rs.ValidateStatus = registry.ValidateUpdate(ValidateReplicaSetStatusUpdate)
	rs.Scale = &registry.ScaleFuncs{
		Get: func(obj runtime.Object) (*autoscalingv1.Scale, error) {
			r := obj.(*appsv1.ReplicaSet)
			return registry.ScaleOf(r, r.Spec.Replicas, r.Status.Replicas, r.Spec.Selector), nil
		},
		SetReplicas: func(obj runtime.Object, n int32) { obj.(*appsv1.ReplicaSet).Spec.Replicas = &n },
	}

	sts := registry.NewDefinition("apps", "v1", "statefulsets", "StatefulSet", true,
		func() runtime.Object { return &appsv1.StatefulSet{} }, func() runtime.Object { return &appsv1.StatefulSetList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultStatefulSet), Validate: registry.Validate(ValidateStatefulSet),
			ValidateUpdate: registry.ValidateUpdate(ValidateStatefulSetUpdate), Generation: true, HasStatus: true,
		})
	sts.ShortNames, sts.Categories = []string{"sts"}, []string{"all"}
	sts.ValidateStatus = registry.ValidateUpdate(ValidateStatefulSetStatusUpdate)
	sts.Scale = &registry.ScaleFuncs{
		Get: func(obj runtime.Object) (*autoscalingv1.Scale, error) {
			s := obj.(*appsv1.StatefulSet)
			return registry.ScaleOf(s, s.Spec.Replicas, s.Status.Replicas, s.Spec.Selector), nil
		},
		SetReplicas: func(obj runtime.Object, n int32) { obj.(*appsv1.StatefulSet).Spec.Replicas = &n },
	}

	ds := registry.NewDefinition("apps", "v1", "daemonsets", "DaemonSet", true,
		func() runtime.Object { return &appsv1.DaemonSet{} }, func() runtime.Object { return &appsv1.DaemonSetList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultDaemonSet), Validate: registry.Validate(ValidateDaemonSet),
			ValidateUpdate: registry.ValidateUpdate(ValidateDaemonSetUpdate), Generation: true, HasStatus: true,
			PrepareForCreate: registry.Prepare(PrepareDaemonSetForCreate), PrepareForUpdate: registry.PrepareUpdate(PrepareDaemonSetForUpdate),
		})
	ds.ShortNames, ds.Categories = []string{"ds"}, []string{"all"}
	ds.ValidateStatus = registry.ValidateUpdate(ValidateDaemonSetStatusUpdate)

	cr := registry.NewDefinition("apps", "v1", "controllerrevisions", "ControllerRevision", true,
		func() runtime.Object { return &appsv1.ControllerRevision{} }, func() runtime.Object { return &appsv1.ControllerRevisionList{} },
		&registry.Strategy{
			Default: registry.Default(DefaultControllerRevision), Validate: registry.Validate(ValidateControllerRevision),
			ValidateUpdate: registry.ValidateUpdate(ValidateControllerRevisionUpdate),
		})
	return []*registry.Definition{deploy, rs, sts, ds, cr}
}

func itoa(n int32) string {
	return strconv.Itoa(int(n))
}
