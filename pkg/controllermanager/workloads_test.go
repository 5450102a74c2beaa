package controllermanager_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// markReady plays the kubelet: every pending pod becomes Running and Ready.
func markReady(ctx context.Context, t *testing.T, pods *client.Typed[*corev1.Pod, *corev1.PodList]) {
	l, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		p := &l.Items[i]
		if p.Status.Phase == corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		_, _ = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	}
}

// The workload controllers run in the manager: a Deployment gets a
// ReplicaSet and pods, and an image change rolls out to completion.
func TestManagerRunsWorkloadControllers(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	// Pods need their service account; the serviceaccount controller is
	// not among the controllers run here.
	if err := env.EnsureServiceAccount(context.Background(), "default", "default"); err != nil {
		t.Fatal(err)
	}
	m, err := controllermanager.New(controllermanager.Config{ClientConfig: managerClientConfig(t, env), UseServiceAccountCredentials: true,
		Controllers: []string{"deployment", "replicaset", "replicationcontroller"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	c := mustClient(t, env)
	ds := client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace("default")
	rss := client.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](c).Namespace("default")
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	l := map[string]string{"app": "web"}
	if _, err := ds.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	complete := func(revision string) func() bool {
		return func() bool {
			markReady(ctx, t, pods)
			d, err := ds.Get(ctx, "web", metav1.GetOptions{})
			if err != nil || d.Annotations["deployment.kubernetes.io/revision"] != revision || d.Status.ObservedGeneration != d.Generation {
				return false
			}
			for _, c := range d.Status.Conditions {
				if c.Type == appsv1.DeploymentProgressing && c.Reason == "NewReplicaSetAvailable" {
					return d.Status.UpdatedReplicas == 2 && d.Status.AvailableReplicas == 2 && d.Status.Replicas == 2
				}
			}
			return false
		}
	}
	eventually(t, "the first rollout", complete("1"))
	d, _ := ds.Get(ctx, "web", metav1.GetOptions{})
	d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	if _, err := ds.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second rollout", complete("2"))
	eventually(t, "the old ReplicaSet at zero and its pods gone", func() bool {
		l, _ := rss.List(ctx, metav1.ListOptions{})
		ps, _ := pods.List(ctx, metav1.ListOptions{})
		var live int
		for _, p := range ps.Items {
			if p.DeletionTimestamp == nil {
				live++
			}
		}
		return len(l.Items) == 2 && live == 2
	})
}
