// Package apiregistration defines the apiregistration.k8s.io/v1
// apiservices (types in pkg/apis/apiregistration/v1): upstream's
// defaulting and validation, the registry Definition with its status
// subresource, and the local APIServices upstream's API server registers
// for the group/versions it serves itself (with upstream's priority
// table) and for custom resource group/versions.
//
// Invariants: an APIService is named version.group; local APIServices
// (spec.service nil) carry no CA bundle; the local objects built here are
// fresh, valid and already defaulted. An APIService naming a service is
// served by the API server's proxy (pkg/apiserver/aggregator.go); its
// Available condition (SetRemoteAvailable) carries upstream's reasons.
package apiregistration
