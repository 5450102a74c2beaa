package compat

// A dynamic client (and a dynamic informer) on a custom resource served by
// skiff.

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

func TestDynamicClientCustomResource(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cfg := restConfig(t, env)
	dyn, err := dynamic.NewForConfig(cfg)
	must(t, err, "dynamic.NewForConfig")
	ctx := context.Background()
	ns := createNamespace(t, clientset(t, cfg), "dyncr")

	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "foos.compat.skiff.sh"},
		"spec": map[string]any{
			"group": "compat.skiff.sh", "scope": "Namespaced",
			"names": map[string]any{"plural": "foos", "kind": "Foo"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{"spec": map[string]any{"type": "object", "properties": map[string]any{
						"size":  map[string]any{"type": "integer", "default": int64(1)},
						"color": map[string]any{"type": "string"},
					}}},
				}},
			}},
		},
	}}
	_, err = crds.Create(ctx, crd, metav1.CreateOptions{})
	must(t, err, "create CRD")
	eventually(t, "CRD Established", func() bool {
		got, err := crds.Get(ctx, "foos.compat.skiff.sh", metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true
			}
		}
		return false
	})

	foos := dyn.Resource(schema.GroupVersionResource{Group: "compat.skiff.sh", Version: "v1", Resource: "foos"}).Namespace(ns)
	eventually(t, "foos served", func() bool {
		_, err := foos.List(ctx, metav1.ListOptions{})
		return err == nil
	})
	w, err := foos.Watch(ctx, metav1.ListOptions{})
	must(t, err, "watch")
	defer w.Stop()

	informers := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	inf := informers.ForResource(schema.GroupVersionResource{Group: "compat.skiff.sh", Version: "v1", Resource: "foos"})
	stop := make(chan struct{})
	defer close(stop)
	go inf.Informer().Run(stop)
	if !cache.WaitForCacheSync(stop, inf.Informer().HasSynced) {
		t.Fatal("informer did not sync")
	}

	foo := func(name, color string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "compat.skiff.sh/v1", "kind": "Foo",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"color": color}},
			"spec":     map[string]any{"color": color},
		}}
	}
	created, err := foos.Create(ctx, foo("a", "red"), metav1.CreateOptions{})
	must(t, err, "create")
	if size, _, _ := unstructured.NestedInt64(created.Object, "spec", "size"); size != 1 || created.GetUID() == "" {
		t.Errorf("created: size %d uid %q", size, created.GetUID())
	}
	_, err = foos.Create(ctx, foo("b", "blue"), metav1.CreateOptions{})
	must(t, err, "create b")

	l, err := foos.List(ctx, metav1.ListOptions{LabelSelector: "color=blue"})
	must(t, err, "list")
	if len(l.Items) != 1 || l.Items[0].GetName() != "b" || l.GetKind() != "FooList" {
		t.Errorf("list: kind %q items %d", l.GetKind(), len(l.Items))
	}
	created.Object["spec"].(map[string]any)["size"] = int64(5)
	updated, err := foos.Update(ctx, created, metav1.UpdateOptions{})
	must(t, err, "update")
	if updated.GetGeneration() != 2 {
		t.Errorf("generation after spec update = %d", updated.GetGeneration())
	}
	must(t, foos.Delete(ctx, "b", metav1.DeleteOptions{}), "delete")
	if _, err := foos.Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}

	want := []watch.EventType{watch.Added, watch.Added, watch.Modified, watch.Deleted}
	deadline := time.After(15 * time.Second)
	for i, typ := range want {
		select {
		case ev := <-w.ResultChan():
			u, ok := ev.Object.(*unstructured.Unstructured)
			if ev.Type != typ || !ok || u.GetKind() != "Foo" {
				t.Fatalf("event %d: %s %T, want %s", i, ev.Type, ev.Object, typ)
			}
		case <-deadline:
			t.Fatalf("timed out waiting for watch event %d (%s)", i, typ)
		}
	}
	eventually(t, "informer sees a only", func() bool {
		items, err := inf.Lister().List(labels.Everything())
		return err == nil && len(items) == 1
	})
}
