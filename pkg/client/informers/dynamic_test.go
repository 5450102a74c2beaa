package informers_test

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
)

// TestForResourceCustomResource: a dynamic informer lists and watches the
// objects of a custom resource defined by a CRD.
func TestForResourceCustomResource(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "foos.stable.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "foos", Singular: "foo", Kind: "Foo", ListKind: "FooList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr(true)}}}},
		},
	}
	if _, err := client.For[*apiextensionsv1.CustomResourceDefinition, *apiextensionsv1.CustomResourceDefinitionList](c).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := client.Resource{Group: "stable.example.com", Version: "v1alpha1", Resource: "foos", Namespaced: true}
	foos := client.NewDynamic(c, res)
	newFoo := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("stable.example.com/v1alpha1")
		u.SetKind("Foo")
		u.SetNamespace("default")
		u.SetName(name)
		return u
	}
	eventually(t, "the CRD served", func() bool {
		_, err := foos.Create(ctx, newFoo("first"), metav1.CreateOptions{})
		return err == nil
	})
	f := informers.NewSharedInformerFactory(c, 0)
	t.Cleanup(f.Shutdown)
	inf := f.ForResource(res)
	if f.ForResource(res) != inf {
		t.Fatal("two informers for one resource")
	}
	added := make(chan string, 10)
	if _, err := inf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(u *unstructured.Unstructured, _ bool) { added <- u.GetName() },
	}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	waitSync(t, f)
	if got := <-added; got != "first" {
		t.Fatalf("first add %q", got)
	}
	settle(t, foos, newFoo("second"), func() bool {
		u, err := inf.Lister().Namespace("default").Get("second")
		return err == nil && u.GetKind() == "Foo"
	})
}

func ptr[T any](v T) *T { return &v }
