package dynamicresources_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last error: %v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSchedulerWithResourceClaims runs skiff's scheduler against an
// in-process API server: a pod whose ResourceClaim does not exist waits
// (PreEnqueue); once the claim appears, allocated by somebody else with
// a node selector, the pod is placed on that node and the claim is
// reserved for it before the binding. A pod whose claim is not
// allocated stays unschedulable with the reason saying skiff cannot
// allocate devices.
func TestSchedulerWithResourceClaims(t *testing.T) {
	// With RBAC: the scheduler as system:kube-scheduler, with upstream's
	// bootstrap permissions only.
	env := testenv.StartT(t, testenv.Config{RBAC: true, Scheduler: scheduler.InProcess(nil, scheduler.Config{})})
	t.Cleanup(func() {
		for _, f := range env.Forbidden() {
			if f.User == "system:kube-scheduler" {
				t.Errorf("the scheduler was refused: %s", f)
			}
		}
	})
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	for _, name := range []string{"node-1", "node-2"} {
		res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
		created, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status = corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
		if created, err = nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		created.Spec.Taints = nil // no node lifecycle controller here
		if _, err := nodes.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	claims := client.For[*resourcev1.ResourceClaim, *resourcev1.ResourceClaimList](c).Namespace("default")
	podWithClaim := func(name, claim string) {
		t.Helper()
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
				ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(claim)}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	newClaim := func(name string) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}}}}}}
	}
	podWithClaim("waiting", "gpu-claim")
	podWithClaim("unallocated", "pending-claim")
	if _, err := claims.Create(ctx, newClaim("pending-claim"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*resourcev1.DeviceClass, *resourcev1.DeviceClassList](c).Create(ctx, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the unallocated claim's pod unschedulable", func() (bool, error) {
		p, err := pods.Get(ctx, "unallocated", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && strings.Contains(cond.Message, "skiff cannot allocate devices yet") {
				return true, nil
			}
		}
		return false, nil
	})
	if p, err := pods.Get(ctx, "waiting", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("pod with a missing claim: %v, node %q", err, p.Spec.NodeName)
	}

	created, err := claims.Create(ctx, newClaim("gpu-claim"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{Request: "req", Driver: "gpu.example.com", Pool: "node-2", Device: "gpu-0"}}},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-2"}}}}}},
	}
	if _, err := claims.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pod bound to node-2", func() (bool, error) {
		p, err := pods.Get(ctx, "waiting", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "node-2", err
	})
	got, err := claims.Get(ctx, "gpu-claim", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.ReservedFor) != 1 || got.Status.ReservedFor[0].Name != "waiting" || got.Status.ReservedFor[0].Resource != "pods" {
		t.Errorf("reservedFor = %+v, want the pod", got.Status.ReservedFor)
	}
}
