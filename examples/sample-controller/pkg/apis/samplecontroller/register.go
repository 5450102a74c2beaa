// Package samplecontroller names the API group of the Foo resource.
package samplecontroller

// GroupName is the API group of Foo (as upstream's sample-controller).
const GroupName = "samplecontroller.k8s.io"
