package apiserver

import (
	"net/http"
	"strings"
)

// RequestInfo is what a resource URL says: which group/version/resource,
// namespace, name and subresource, and the verb the method and query imply.
type RequestInfo struct {
	IsResourceRequest bool
	// Path parts of an /api or /apis request.
	APIPrefix   string // "api" or "apis"
	APIGroup    string
	APIVersion  string
	Namespace   string
	Resource    string
	Name        string
	Subresource string
	// Verb is get, list, watch, create, update, patch, delete or
	// deletecollection for resource requests; the lower-case method otherwise.
	Verb string
	Path string
}

// parseRequestInfo splits a request path as upstream's RequestInfoFactory
// does:
//
//	/api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
//	/apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
//	/api/v1/watch/... and /apis/.../watch/... (the legacy watch form)
func parseRequestInfo(r *http.Request) *RequestInfo {
	info := &RequestInfo{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) < 2 || (parts[0] != "api" && parts[0] != "apis") {
		return info
	}
	info.APIPrefix = parts[0]
	parts = parts[1:]
	if info.APIPrefix == "apis" {
		info.APIGroup, parts = parts[0], parts[1:]
		if len(parts) == 0 {
			return info // group discovery
		}
	}
	info.APIVersion, parts = parts[0], parts[1:]
	watchPath := false
	if len(parts) > 0 && parts[0] == "watch" {
		watchPath, parts = true, parts[1:]
	}
	if len(parts) == 0 {
		return info // group/version discovery
	}
	info.IsResourceRequest = true
	// /namespaces/{ns}/{resource}/... is relative to the namespace, except
	// the namespace's own subresources (status, finalize).
	if parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	info.Resource = parts[0]
	if len(parts) > 1 {
		info.Name = parts[1]
	}
	if len(parts) > 2 {
		info.Subresource = parts[2]
	}
	// Only a proxy subresource has a path of its own after it
	// (nodes/<name>/proxy/<path>).
	if len(parts) > 3 && info.Subresource != "proxy" {
		info.IsResourceRequest = false
		return info
	}

	q := r.URL.Query()
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case watchPath, info.Name == "" && isTrue(q.Get("watch")):
			info.Verb = "watch"
		case info.Name == "":
			info.Verb = "list"
		default:
			info.Verb = "get"
		}
	case http.MethodPost:
		info.Verb = "create"
	case http.MethodPut:
		info.Verb = "update"
	case http.MethodPatch:
		info.Verb = "patch"
	case http.MethodDelete:
		if info.Name == "" {
			info.Verb = "deletecollection"
		} else {
			info.Verb = "delete"
		}
	}
	return info
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func isTrue(s string) bool { return s == "true" || s == "1" }
