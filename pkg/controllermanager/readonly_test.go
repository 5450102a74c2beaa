package controllermanager_test

import (
	"context"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// Every controller treats cached pods as read-only, which the interning
// of the shared informers relies on (pods of one template share their
// parts): each pod the informers cache is snapshot when cached and
// compared after a run of every default controller over Deployments
// rolled out and scaled, a StatefulSet, a DaemonSet, a Job run to
// completion, a Service, a PodDisruptionBudget, a ResourceQuota and a
// cascading delete.
func TestControllersLeaveCachedPodsUnchanged(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := controllermanager.New(controllermanager.Config{ClientConfig: managerClientConfig(t, env), UseServiceAccountCredentials: true})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	snapshots := map[*corev1.Pod]*corev1.Pod{}
	controllermanager.SetTransformHook(m, func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			mu.Lock()
			snapshots[p] = p.DeepCopy()
			mu.Unlock()
		}
	})
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	c := mustClient(t, env)
	if _, err := client.For[*corev1.Node, *corev1.NodeList](c).Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"kubernetes.io/hostname": "n1"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the default service account", func() bool {
		_, err := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c).Namespace("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	ds := client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace("default")
	web := map[string]string{"app": "web"}
	spec := func(image string) corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}},
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}}
	}
	if _, err := ds.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: web},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}, Spec: spec("nginx:1")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*corev1.Service, *corev1.ServiceList](c).Namespace("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: web, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c).Namespace("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: web}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](c).Namespace("default").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("100"),
			corev1.ResourceRequestsCPU: resource.MustParse("10")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	db := map[string]string{"app": "db"}
	if _, err := client.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](c).Namespace("default").Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), ServiceName: "web", PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector: &metav1.LabelSelector{MatchLabels: db}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: db}, Spec: spec("db:1")}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	agent := map[string]string{"app": "agent"}
	if _, err := client.For[*appsv1.DaemonSet, *appsv1.DaemonSetList](c).Namespace("default").Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: agent}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: agent}, Spec: spec("agent:1")}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	jobSpec := spec("job:1")
	jobSpec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := client.For[*batchv1.Job, *batchv1.JobList](c).Namespace("default").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "batch"},
		Spec: batchv1.JobSpec{Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2), CompletionMode: ptr.To(batchv1.IndexedCompletion), Template: corev1.PodTemplateSpec{Spec: jobSpec}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Play the kubelet until the workloads settle: pods Running and Ready
	// on n1, job pods Succeeded.
	kubelet := func() {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			p := &l.Items[i]
			if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || (p.Status.Phase == corev1.PodRunning && p.Labels["batch.kubernetes.io/job-name"] == "") {
				continue
			}
			p.Status.Phase = corev1.PodRunning
			if p.Labels["batch.kubernetes.io/job-name"] != "" {
				p.Status.Phase = corev1.PodSucceeded
			}
			p.Status.PodIP = "10.0.0.1"
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			_, _ = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
	}
	settled := func(image string, replicas int32) func() bool {
		return func() bool {
			kubelet()
			d, err := ds.Get(ctx, "web", metav1.GetOptions{})
			if err != nil || d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != replicas || d.Status.AvailableReplicas != replicas || d.Status.Replicas != replicas {
				return false
			}
			j, err := client.For[*batchv1.Job, *batchv1.JobList](c).Namespace("default").Get(ctx, "batch", metav1.GetOptions{})
			if err != nil || j.Status.Succeeded != 2 {
				return false
			}
			l, err := pods.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			var db, agent int
			for _, p := range l.Items {
				switch p.Labels["app"] {
				case "db":
					db++
				case "agent":
					agent++
				}
			}
			return db == 2 && agent == 1
		}
	}
	eventually(t, "the first rollout", settled("nginx:1", 3))
	d, err := ds.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	d.Spec.Replicas = ptr.To[int32](2)
	if _, err := ds.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second rollout", settled("nginx:2", 2))
	if err := ds.Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "web's pods gone", func() bool {
		l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(l.Items) == 0
	})

	mu.Lock()
	defer mu.Unlock()
	if len(snapshots) < 10 {
		t.Fatalf("only %d pods cached", len(snapshots))
	}
	for p, snap := range snapshots {
		if !equality.Semantic.DeepEqual(p, snap) {
			t.Errorf("cached pod %s/%s (resourceVersion %s) was changed after it was cached", snap.Namespace, snap.Name, snap.ResourceVersion)
		}
	}
}
