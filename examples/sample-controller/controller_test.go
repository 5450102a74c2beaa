package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// eventually polls cond until it holds or the deadline passes.
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

func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
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

func TestSampleControllerAgainstAPIServer(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	kube := informers.NewSharedInformerFactory(c, 0)
	foos := informers.NewSharedInformerFactory(c, 0, informers.WithTweakListOptions(FooSelector))
	b := record.NewBroadcaster(record.WithLogger(logger))
	b.StartRecordingToSink(record.NewClientSink(c))
	ctl, err := NewController(c,
		informers.InformerFor[*appsv1.Deployment, *appsv1.DeploymentList](kube),
		informers.InformerFor[*corev1.ConfigMap, *corev1.ConfigMapList](foos),
		b.NewRecorder(corev1.EventSource{Component: controllerAgentName}),
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second), nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	kube.Start(ctx)
	foos.Start(ctx)
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx, 2) }()
	t.Cleanup(func() {
		cancel()
		<-done
		kube.Shutdown()
		foos.Shutdown()
		b.Shutdown()
	})

	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	deps := client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace("default")
	foo := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "example-foo", Labels: map[string]string{fooLabel: "true"}},
		Data:       map[string]string{"deploymentName": "example-foo", "replicas": "1"},
	}
	foo, err = cms.Create(ctx, foo, metav1.CreateOptions{})
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
	eventually(t, "deployment created with 1 replica, owned by the Foo", wantReplicas(1))
	eventually(t, "Foo annotated with available replicas", func() (bool, string) {
		f, err := cms.Get(ctx, "example-foo", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return f.Annotations[availableAnnotation] == "0", f.String()
	})

	// Changing the Foo changes the Deployment.
	if _, err := cms.Patch(ctx, "example-foo", types.MergePatchType, []byte(`{"data":{"replicas":"3"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deployment scaled to 3", wantReplicas(3))
	// The log says how many replicas, not where they live in memory.
	if out := logs.String(); !strings.Contains(out, "from=1 to=3") || strings.Contains(out, "0x") {
		t.Errorf("scaling log line lacks the replica counts:\n%s", out)
	}

	// Changing the Deployment behind the controller's back is undone.
	if _, err := deps.Patch(ctx, "example-foo", types.MergePatchType, []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deployment restored to 3", wantReplicas(3))

	// A Deployment the Foo does not own is left alone, with a warning event.
	other := newDeployment(foo, "taken", 1)
	other.OwnerReferences = nil
	if _, err := deps.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "greedy", Labels: map[string]string{fooLabel: "true"}},
		Data:       map[string]string{"deploymentName": "taken"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	events := client.For[*corev1.Event, *corev1.EventList](c).Namespace("default")
	eventually(t, "ErrResourceExists and Synced events", func() (bool, string) {
		l, err := events.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var warned, synced bool
		for _, e := range l.Items {
			warned = warned || (e.Reason == ErrResourceExists && e.InvolvedObject.Name == "greedy" && e.Type == corev1.EventTypeWarning)
			synced = synced || (e.Reason == SuccessSynced && e.InvolvedObject.Name == "example-foo")
		}
		return warned && synced, l.String()
	})
	if d, err := deps.Get(ctx, "taken", metav1.GetOptions{}); err != nil || len(d.OwnerReferences) != 0 {
		t.Fatalf("unowned deployment was changed: %v %v", err, d.OwnerReferences)
	}
}
