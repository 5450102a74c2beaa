package resourcequota

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// A quota counting a custom resource monitors it with a metadata
// informer; once the CRD is deleted, the next discovery check stops that
// informer instead of letting it fail its list and watch forever.
func TestMonitorsFollowDiscovery(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(h.ctx)
	fake := clock.NewFake(time.Now())
	f := informers.NewSharedInformerFactory(h.c, 0)
	ctrl, err := New(Config{Client: h.c, Informers: f, Clock: fake})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	f.Start(ctx)
	defer func() {
		cancel()
		<-done
		f.Shutdown()
	}()
	yes := true
	crds := client.For[*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionList](h.c)
	if _, err := crds.Create(h.ctx, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	widgets := client.NewDynamic(h.c, client.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Namespaced: true}).Namespace("default")
	waitFor(t, "widgets served", func() bool { _, err := widgets.List(h.ctx, metav1.ListOptions{}); return err == nil })
	h.quota("q", rl("count/widgets.example.com", "3"), nil)
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	monitored := func() bool {
		ctrl.mu.Lock()
		defer ctrl.mu.Unlock()
		_, ok := ctrl.monitors[gvr]
		return ok
	}
	waitFor(t, "the quota's usage", func() bool { return show(h.getQuota("q").Status.Used) == "count/widgets.example.com=0" })
	waitFor(t, "widgets monitored", monitored)

	// Still served: a discovery check keeps the monitor.
	fake.Step(DiscoveryPeriod)
	ctrl.pruneMonitors(h.ctx)
	if !monitored() {
		t.Fatal("a served resource's monitor was stopped")
	}
	if err := crds.Delete(h.ctx, "widgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "widgets no longer served", func() bool { _, err := widgets.List(h.ctx, metav1.ListOptions{}); return err != nil })
	waitFor(t, "the monitor stopped by the periodic discovery check", func() bool {
		fake.Step(DiscoveryPeriod)
		return !monitored()
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
