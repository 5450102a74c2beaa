// Package v1alpha1 holds the Go types of the Foo custom resource
// (samplecontroller.k8s.io/v1alpha1), the schema of which is
// artifacts/examples/crd.yaml. A Foo asks for a Deployment named
// spec.deploymentName with spec.replicas replicas; its status reports the
// Deployment's available replicas.
//
// deepcopy.go is written by hand here (upstream generates it with
// deepcopy-gen): every type that is a runtime.Object needs DeepCopyObject,
// and controllers copy before they modify an object from a cache.
package v1alpha1
