package v1

// Documentation and schema extensions the OpenAPI documents carry for
// these types, as upstream's generated ones do.

// SwaggerDoc documents APIService.
func (APIService) SwaggerDoc() map[string]string {
	return map[string]string{
		"":         "APIService represents a server for a particular GroupVersion. Name must be \"version.group\".",
		"metadata": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		"spec":     "Spec contains information for locating and communicating with a server",
		"status":   "Status contains derived information about an API server",
	}
}

// SwaggerDoc documents APIServiceList.
func (APIServiceList) SwaggerDoc() map[string]string {
	return map[string]string{
		"":         "APIServiceList is a list of APIService objects.",
		"metadata": "Standard list metadata More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		"items":    "Items is the list of APIService",
	}
}

// SwaggerDoc documents ServiceReference.
func (ServiceReference) SwaggerDoc() map[string]string {
	return map[string]string{
		"":          "ServiceReference holds a reference to Service.legacy.k8s.io",
		"namespace": "Namespace is the namespace of the service",
		"name":      "Name is the name of the service",
		"port":      "If specified, the port on the service that hosting webhook. Default to 443 for backward compatibility. `port` should be a valid port number (1-65535, inclusive).",
	}
}

// SwaggerDoc documents APIServiceSpec.
func (APIServiceSpec) SwaggerDoc() map[string]string {
	return map[string]string{
		"":                      "APIServiceSpec contains information for locating and communicating with a server. Only https is supported, though you are able to disable certificate verification.",
		"service":               "Service is a reference to the service for this API server.  It must communicate on port 443. If the Service is nil, that means the handling for the API groupversion is handled locally on this server. The call will simply delegate to the normal handler chain to be fulfilled.",
		"group":                 "Group is the API group name this server hosts",
		"version":               "Version is the API version this server hosts.  For example, \"v1\"",
		"insecureSkipTLSVerify": "InsecureSkipTLSVerify disables TLS certificate verification when communicating with this server. This is strongly discouraged.  You should use the CABundle instead.",
		"caBundle":              "CABundle is a PEM encoded CA bundle which will be used to validate an API server's serving certificate. If unspecified, system trust roots on the apiserver are used.",
		"groupPriorityMinimum":  "GroupPriorityMinimum is the priority this group should have at least. Higher priority means that the group is preferred by clients over lower priority ones. Note that other versions of this group might specify even higher GroupPriorityMinimum values such that the whole group gets a higher priority. The primary sort is based on GroupPriorityMinimum, ordered highest number to lowest (20 before 10). The secondary sort is based on the alphabetical comparison of the name of the object.  (v1.bar before v1.foo) We'd recommend something like: *.k8s.io (except extensions) at 18000 and PaaSes (OpenShift, Deis) are recommended to be in the 2000s",
		"versionPriority":       "VersionPriority controls the ordering of this API version inside of its group.  Must be greater than zero. The primary sort is based on VersionPriority, ordered highest to lowest (20 before 10). Since it's inside of a group, the number can be small, probably in the 10s. In case of equal version priorities, the version string will be used to compute the order inside a group. If the version string is \"kube-like\", it will sort above non \"kube-like\" version strings, which are ordered lexicographically. \"Kube-like\" versions start with a \"v\", then are followed by a number (the major version), then optionally the string \"alpha\" or \"beta\" and another number (the minor version). These are sorted first by GA > beta > alpha (where GA is a version with no suffix such as beta or alpha), and then by comparing major version, then minor version. An example sorted list of versions: v10, v2, v1, v11beta2, v10beta3, v3beta1, v12alpha1, v11alpha2, foo1, foo10.",
	}
}

// SwaggerDoc documents APIServiceCondition.
func (APIServiceCondition) SwaggerDoc() map[string]string {
	return map[string]string{
		"":                   "APIServiceCondition describes the state of an APIService at a particular point",
		"type":               "Type is the type of the condition.",
		"status":             "Status is the status of the condition. Can be True, False, Unknown.",
		"lastTransitionTime": "Last time the condition transitioned from one status to another.",
		"reason":             "Unique, one-word, CamelCase reason for the condition's last transition.",
		"message":            "Human-readable message indicating details about last transition.",
	}
}

// SwaggerDoc documents APIServiceStatus.
func (APIServiceStatus) SwaggerDoc() map[string]string {
	return map[string]string{
		"":           "APIServiceStatus contains derived information about an API server",
		"conditions": "Current service state of apiService.",
	}
}

// OpenAPIFieldExtensions: conditions are a map keyed by type, as upstream's
// +listType=map +listMapKey=type markers make them.
func (APIServiceStatus) OpenAPIFieldExtensions() map[string]map[string]any {
	return map[string]map[string]any{"conditions": {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []string{"type"}}}
}
