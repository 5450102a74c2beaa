package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/cluster"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// refusedComponents lists the refused requests of the controller manager,
// its controllers and the scheduler, but creates in the namespace
// terminating (admission's refusals).
func refusedComponents(all []testenv.Forbidden, terminating string) []string {
	var out []string
	for _, f := range all {
		if f.User != "system:kube-controller-manager" && f.User != "system:kube-scheduler" &&
			!strings.HasPrefix(f.User, "system:serviceaccount:kube-system:") {
			continue
		}
		if terminating != "" && f.Verb == "POST" && strings.Contains(f.URI, "/namespaces/"+terminating+"/") {
			// NamespaceLifecycle refusing a create in the terminating
			// namespace, of any group (a StatefulSet's ControllerRevision
			// as much as a Pod)
			continue
		}
		out = append(out, f.String())
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (last: %s)", what, last)
}

// `skiff up` with upstream's authorization (Node,RBAC): the in-process
// controller manager (system:kube-controller-manager, each controller as
// its kube-system service account) and scheduler (system:kube-scheduler)
// do their work with exactly upstream's bootstrap permissions — no request
// of theirs is refused.
func TestUpComponentsWorkWithBootstrapPolicy(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logs, forbidden := testenv.RecordForbidden(slog.DiscardHandler)
	var out bytes.Buffer
	up, err := cluster.NewUp(cluster.UpConfig{DataDir: dir, Storage: "memory", SecurePort: port, Out: &out,
		AuthorizationMode: "Node,RBAC", AnonymousAuth: true, Logger: slog.New(logs),
		// The test plays the kubelet of its node n1 (node_test.go has skiff
		// up's own).
		Disable: []string{"kubelet"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- up.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("up returned %v", err)
		}
	}()
	var c *client.Client
	waitFor(t, "the cluster", func() (bool, string) {
		if _, err := os.Stat(cluster.KubeconfigPath(dir)); err != nil {
			return false, err.Error()
		}
		cfg, err := client.LoadKubeconfig(cluster.KubeconfigPath(dir), "")
		if err != nil {
			return false, err.Error()
		}
		cfg.QPS = -1
		if c, err = client.New(cfg); err != nil {
			return false, err.Error()
		}
		_, err = client.For[*corev1.Namespace, *corev1.NamespaceList](c).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})

	// A node for the scheduler (no kubelet: the test plays it).
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	node, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"kubernetes.io/hostname": "n1"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	node.Status = corev1.NodeStatus{
		Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}},
	}
	if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	ns := "app"
	if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sas := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c).Namespace(ns)
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace(ns)
	waitFor(t, "the namespace's default service account and kube-root-ca.crt", func() (bool, string) {
		_, err1 := sas.Get(ctx, "default", metav1.GetOptions{})
		_, err2 := cms.Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err1 == nil && err2 == nil, fmt.Sprint(err1, err2)
	})

	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(ns)
	// playKubelet marks the pods bound to n1 Running and Ready, and the
	// succeeded job's pods Succeeded.
	playKubelet := func() {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for i := range l.Items {
			p := &l.Items[i]
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded {
				continue
			}
			if p.Labels["app"] == "batch" {
				p.Status.Phase = corev1.PodSucceeded
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}
			} else {
				if p.Status.Phase == corev1.PodRunning {
					continue
				}
				p.Status.Phase = corev1.PodRunning
				p.Status.PodIP = "10.1.0.1"
				p.Status.PodIPs = []corev1.PodIP{{IP: "10.1.0.1"}}
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			}
			_, _ = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
	}
	template := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}
	}
	selector := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}

	deployments := client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace(ns)
	if _, err := deployments.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: selector("web"), Template: template("web")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
		Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}}
	if _, err := client.For[*corev1.Service, *corev1.ServiceList](c).Namespace(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c).Namespace(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: selector("web")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](c).Namespace(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: selector("db"), Template: template("db"), ServiceName: "web"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*appsv1.DaemonSet, *appsv1.DaemonSetList](c).Namespace(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: selector("agent"), Template: template("agent")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	jobs := client.For[*batchv1.Job, *batchv1.JobList](c).Namespace(ns)
	if _, err := jobs.Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: batchv1.JobSpec{TTLSecondsAfterFinished: ptr.To[int32](0), Template: func() corev1.PodTemplateSpec {
			t := template("batch")
			t.Spec.RestartPolicy = corev1.RestartPolicyNever
			return t
		}()}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](c).Namespace(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("100")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, "the workloads running: deployment available, statefulset and daemonset pods, job done and collected", func() (bool, string) {
		playKubelet()
		d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
		if err != nil || d.Status.AvailableReplicas != 2 {
			return false, fmt.Sprint("deployment ", err)
		}
		l, _ := pods.List(ctx, metav1.ListOptions{})
		apps := map[string]int{}
		for _, p := range l.Items {
			if p.Spec.NodeName == "n1" {
				apps[p.Labels["app"]]++
			}
		}
		if apps["db"] != 1 || apps["agent"] != 1 {
			return false, fmt.Sprint("pods on n1 ", apps)
		}
		if _, err := jobs.Get(ctx, "once", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Sprint("job ", err)
		}
		return true, ""
	})
	slices := client.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](c).Namespace(ns)
	waitFor(t, "the service's endpoints, the PDB's and quota's status", func() (bool, string) {
		l, err := slices.List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
		if err != nil || len(l.Items) == 0 || len(l.Items[0].Endpoints) != 2 {
			return false, fmt.Sprint("slices ", err)
		}
		ep, err := client.For[*corev1.Endpoints, *corev1.EndpointsList](c).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(ep.Subsets) == 0 {
			return false, fmt.Sprint("endpoints ", err)
		}
		pdb, err := client.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || pdb.Status.ExpectedPods != 2 {
			return false, fmt.Sprint("pdb ", err)
		}
		q, err := client.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](c).Namespace(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil || q.Status.Used.Pods().IsZero() {
			return false, fmt.Sprint("quota ", err)
		}
		return true, ""
	})
	admin, err := client.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c).Get(ctx, "admin", metav1.GetOptions{})
	if err != nil || len(admin.Rules) == 0 {
		t.Errorf("the admin role was not aggregated: %v %v", err, admin)
	}

	if refused := refusedComponents(forbidden(), ""); len(refused) > 0 {
		t.Errorf("components were refused %d requests:\n%s", len(refused), strings.Join(refused, "\n"))
	}

	// Deleting the namespace: the namespace controller empties it (the
	// garbage collector removes what the workloads own), then it is gone.
	if err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the namespace gone", func() (bool, string) {
		// The kubelet's part: terminating pods go away.
		if l, err := pods.List(ctx, metav1.ListOptions{}); err == nil {
			for _, p := range l.Items {
				if p.DeletionTimestamp != nil {
					_ = pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
				}
			}
		}
		_, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	// Controllers still creating in the terminating namespace are refused
	// by NamespaceLifecycle admission (403 too), as upstream's are.
	refused := refusedComponents(forbidden(), ns)
	if len(refused) > 0 {
		t.Errorf("components were refused %d requests in all:\n%s", len(refused), strings.Join(refused, "\n"))
	}
}
