package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of APIServices.
const GroupName = "apiregistration.k8s.io"

// SchemeGroupVersion is apiregistration.k8s.io/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// AddToScheme registers APIService and APIServiceList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &APIService{}, &APIServiceList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}

// openAPIPrefix is upstream's OpenAPI definition name prefix.
const openAPIPrefix = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1."

// APIServiceList is a list of APIService objects.
type APIServiceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items is the list of APIService
	Items []APIService `json:"items"`
}

// ServiceReference holds a reference to Service.legacy.k8s.io
type ServiceReference struct {
	// Namespace is the namespace of the service
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of the service
	Name string `json:"name,omitempty"`
	// If specified, the port on the service that hosting webhook.
	// Default to 443 for backward compatibility.
	// `port` should be a valid port number (1-65535, inclusive).
	Port *int32 `json:"port,omitempty"`
}

// APIServiceSpec contains information for locating and communicating with
// a server. Only https is supported, though you are able to disable
// certificate verification.
type APIServiceSpec struct {
	// Service is a reference to the service for this API server. It must
	// communicate on port 443. If the Service is nil, that means the
	// handling for the API groupversion is handled locally on this server.
	Service *ServiceReference `json:"service,omitempty"`
	// Group is the API group name this server hosts
	Group string `json:"group,omitempty"`
	// Version is the API version this server hosts.  For example, "v1"
	Version string `json:"version,omitempty"`
	// InsecureSkipTLSVerify disables TLS certificate verification when
	// communicating with this server.
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`
	// CABundle is a PEM encoded CA bundle which will be used to validate an
	// API server's serving certificate.
	CABundle []byte `json:"caBundle,omitempty"`
	// GroupPriorityMinimum is the priority this group should have at least.
	GroupPriorityMinimum int32 `json:"groupPriorityMinimum"`
	// VersionPriority controls the ordering of this API version inside of
	// its group.
	VersionPriority int32 `json:"versionPriority"`
}

// ConditionStatus indicates the status of a condition (true, false, or
// unknown).
type ConditionStatus string

// The condition statuses.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// APIServiceConditionType is a valid value for APIServiceCondition.Type
type APIServiceConditionType string

// Available indicates that the service exists and is reachable
const Available APIServiceConditionType = "Available"

// APIServiceCondition describes the state of an APIService at a
// particular point
type APIServiceCondition struct {
	// Type is the type of the condition.
	Type APIServiceConditionType `json:"type"`
	// Status is the status of the condition. Can be True, False, Unknown.
	Status ConditionStatus `json:"status"`
	// Last time the condition transitioned from one status to another.
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Unique, one-word, CamelCase reason for the condition's last
	// transition.
	Reason string `json:"reason,omitempty"`
	// Human-readable message indicating details about last transition.
	Message string `json:"message,omitempty"`
}

// APIServiceStatus contains derived information about an API server
type APIServiceStatus struct {
	// Current service state of apiService.
	Conditions []APIServiceCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// APIService represents a server for a particular GroupVersion. Name must
// be "version.group".
type APIService struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object's metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec contains information for locating and communicating with a
	// server
	Spec APIServiceSpec `json:"spec,omitempty"`
	// Status contains derived information about an API server
	Status APIServiceStatus `json:"status,omitempty"`
}

// OpenAPIModelName returns upstream's OpenAPI definition name.
func (APIService) OpenAPIModelName() string { return openAPIPrefix + "APIService" }

// OpenAPIModelName returns upstream's OpenAPI definition name.
func (APIServiceList) OpenAPIModelName() string { return openAPIPrefix + "APIServiceList" }

// OpenAPIModelName returns upstream's OpenAPI definition name.
func (APIServiceSpec) OpenAPIModelName() string { return openAPIPrefix + "APIServiceSpec" }

// OpenAPIModelName returns upstream's OpenAPI definition name.
func (APIServiceStatus) OpenAPIModelName() string { return openAPIPrefix + "APIServiceStatus" }

// OpenAPIModelName returns upstream's OpenAPI definition name.
func (APIServiceCondition) OpenAPIModelName() string { return openAPIPrefix + "APIServiceCondition" }

// OpenAPIModelName returns upstream's OpenAPI definition name.
func (ServiceReference) OpenAPIModelName() string { return openAPIPrefix + "ServiceReference" }
