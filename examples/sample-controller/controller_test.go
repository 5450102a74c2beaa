package main

import (
	"bytes"
	"context"
	_ "embed"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	samplev1alpha1 "github.com/skiff-sh/skiff/examples/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

//go:embed artifacts/examples/crd.yaml
var crdYAML []byte

//go:embed artifacts/examples/example-foo.yaml
var exampleFooYAML []byte

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached; last: %s", what, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// startEnv starts an API server with the controller manager's controllers
// a Foo needs: Deployments make ReplicaSets, ReplicaSets make pods (which
// need the default service account), and the garbage collector deletes a
// deleted Foo's Deployment. The Foo CRD (artifacts/examples/crd.yaml) is
// installed and Established.
func startEnv(t *testing.T) (*testenv.Environment, *client.Client) {
	t.Helper()
	env := testenv.StartT(t, testenv.Config{ControllerManager: controllermanager.InProcess(controllermanager.Config{
		Controllers: []string{"serviceaccount-controller", "deployment-controller", "replicaset-controller", "garbage-collector-controller"},
	})})
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(crdYAML, crd); err != nil {
		t.Fatal(err)
	}
	crds := client.For[*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionList](c)
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Foo CRD Established", func() (bool, string) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, "not Established"
	})
	eventually(t, "the default service account", func() (bool, string) {
		_, err := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c).Namespace("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, errString(err)
	})
	return env, c
}

func exampleFoo(t *testing.T) *samplev1alpha1.Foo {
	t.Helper()
	foo := &samplev1alpha1.Foo{}
	if err := yaml.UnmarshalStrict(exampleFooYAML, foo); err != nil {
		t.Fatal(err)
	}
	foo.Namespace = "default"
	return foo
}

// markPodsReady plays the kubelet (skiff has none yet): every pod of the
// namespace becomes Running and Ready through the status API.
func markPodsReady(ctx context.Context, t *testing.T, c *client.Client) int {
	t.Helper()
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	l, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for i := range l.Items {
		p := &l.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase != corev1.PodRunning {
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
		ready++
	}
	return ready
}

// TestSampleController runs the Foo controller beside the controller
// manager: a Foo gets its Deployment (controlled by the Foo), whose
// ReplicaSet and pods the controller manager makes; once the pods are
// Ready the Foo's status says so. Changing the Foo scales the Deployment,
// scaling the Deployment behind the controller's back is undone, a
// Deployment the Foo does not own is left alone (ErrResourceExists), and
// deleting the Foo deletes its Deployment (garbage collection).
func TestSampleController(t *testing.T) {
	_, c := startEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	kube := informers.NewSharedInformerFactory(c, 0)
	fooFactory := informers.NewSharedInformerFactory(c, 0)
	scheme := runtime.NewScheme()
	if err := samplev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := record.NewBroadcaster(record.WithLogger(logger), record.WithScheme(scheme))
	b.StartRecordingToSink(record.NewClientSink(c))
	ctl, err := NewController(c,
		informers.InformerFor[*appsv1.Deployment, *appsv1.DeploymentList](kube),
		informers.InformerForResource[*samplev1alpha1.Foo, *samplev1alpha1.FooList](fooFactory, samplev1alpha1.FoosResource),
		b.NewRecorder(corev1.EventSource{Component: controllerAgentName}),
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second), nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	kube.Start(ctx)
	fooFactory.Start(ctx)
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx, 2) }()
	t.Cleanup(func() {
		cancel()
		<-done
		kube.Shutdown()
		fooFactory.Shutdown()
		b.Shutdown()
		if t.Failed() {
			t.Logf("controller log:\n%s", logs.String())
		}
	})

	foos := client.NewTyped[*samplev1alpha1.Foo, *samplev1alpha1.FooList](c, samplev1alpha1.FoosResource).Namespace("default")
	deps := client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace("default")
	foo, err := foos.Create(ctx, exampleFoo(t), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantReplicas := func(n int32) func() (bool, string) {
		return func() (bool, string) {
			d, err := deps.Get(ctx, "example-foo", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return d.Spec.Replicas != nil && *d.Spec.Replicas == n && metav1.IsControlledBy(d, foo), d.String()
		}
	}
	eventually(t, "deployment created with 1 replica, controlled by the Foo", wantReplicas(1))
	d, _ := deps.Get(ctx, "example-foo", metav1.GetOptions{})
	if ref := metav1.GetControllerOf(d); ref.APIVersion != "samplecontroller.k8s.io/v1alpha1" || ref.Kind != "Foo" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("controller reference %+v", ref)
	}

	// The controller manager makes the ReplicaSet and the pod; once the
	// pod is Ready, the Foo's status reports one available replica.
	eventually(t, "the Foo's status.availableReplicas = 1", func() (bool, string) {
		markPodsReady(ctx, t, c)
		f, err := foos.Get(ctx, "example-foo", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return f.Status.AvailableReplicas == 1, "availableReplicas " + ptrString(&f.Status.AvailableReplicas)
	})

	// Changing the Foo changes the Deployment.
	if _, err := foos.Patch(ctx, "example-foo", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deployment scaled to 3", wantReplicas(3))
	if out := logs.String(); !strings.Contains(out, "currentReplicas=1 desiredReplicas=3") {
		t.Errorf("scaling log line lacks the replica counts:\n%s", out)
	}
	eventually(t, "the Foo's status.availableReplicas = 3", func() (bool, string) {
		markPodsReady(ctx, t, c)
		f, err := foos.Get(ctx, "example-foo", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return f.Status.AvailableReplicas == 3, "availableReplicas " + ptrString(&f.Status.AvailableReplicas)
	})

	// Changing the Deployment behind the controller's back is undone.
	if _, err := deps.Patch(ctx, "example-foo", types.MergePatchType, []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deployment restored to 3", wantReplicas(3))

	// A Deployment the Foo does not own is left alone, with a warning event.
	other := newDeployment(&samplev1alpha1.Foo{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"},
		Spec: samplev1alpha1.FooSpec{DeploymentName: "taken"}})
	other.OwnerReferences = nil
	if _, err := deps.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := foos.Create(ctx, &samplev1alpha1.Foo{TypeMeta: metav1.TypeMeta{APIVersion: "samplecontroller.k8s.io/v1alpha1", Kind: "Foo"}, ObjectMeta: metav1.ObjectMeta{Name: "greedy", Namespace: "default"},
		Spec: samplev1alpha1.FooSpec{DeploymentName: "taken"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	events := client.For[*corev1.Event, *corev1.EventList](c).Namespace("default")
	eventually(t, "ErrResourceExists and Synced events on the Foos", func() (bool, string) {
		l, err := events.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var warned, synced bool
		for _, e := range l.Items {
			isFoo := e.InvolvedObject.Kind == "Foo" && e.InvolvedObject.APIVersion == "samplecontroller.k8s.io/v1alpha1"
			warned = warned || (isFoo && e.Reason == ErrResourceExists && e.InvolvedObject.Name == "greedy" && e.Type == corev1.EventTypeWarning &&
				e.Message == `Resource "taken" already exists and is not managed by Foo`)
			synced = synced || (isFoo && e.Reason == SuccessSynced && e.InvolvedObject.Name == "example-foo" && e.Message == MessageResourceSynced)
		}
		return warned && synced, l.String()
	})
	if d, err := deps.Get(ctx, "taken", metav1.GetOptions{}); err != nil || len(d.OwnerReferences) != 0 {
		t.Fatalf("unowned deployment was changed: %v %v", err, d.OwnerReferences)
	}

	// Deleting the Foo deletes its Deployment (the garbage collector
	// follows the owner reference); the unowned one stays.
	if err := foos.Delete(ctx, "example-foo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Foo's deployment garbage-collected", func() (bool, string) {
		_, err := deps.Get(ctx, "example-foo", metav1.GetOptions{})
		return apierrors.IsNotFound(err), errString(err)
	})
	if _, err := deps.Get(ctx, "taken", metav1.GetOptions{}); err != nil {
		t.Errorf("the unowned deployment: %v", err)
	}
}
