package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/examples/sample-controller/pkg/apis/samplecontroller"
	"github.com/skiff-sh/skiff/pkg/client"
)

// SchemeGroupVersion is the group and version of the types here.
var SchemeGroupVersion = schema.GroupVersion{Group: samplecontroller.GroupName, Version: "v1alpha1"}

// FoosResource is the served resource of Foos, for pkg/client's typed
// clients and informers (client.NewTyped, informers.InformerForResource).
var FoosResource = client.Resource{Group: samplecontroller.GroupName, Version: "v1alpha1", Resource: "foos", Namespaced: true}

// Kind is the group-qualified kind of Foo.
func Kind(kind string) schema.GroupKind { return SchemeGroupVersion.WithKind(kind).GroupKind() }

// AddToScheme adds Foo and FooList to a scheme (the event recorder uses
// it to name the kind of the objects events are about).
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &Foo{}, &FooList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
