package openapi

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// Resource describes one served resource.
type Resource struct {
	Group, Version, Resource, Kind string // e.g. "apps","v1","deployments","Deployment"; the core group is ""
	Namespaced                     bool
	// Verbs is a subset of get list watch create update patch delete deletecollection.
	Verbs []string
	// Object is an empty object of the kind, e.g. &corev1.Pod{}.
	Object runtime.Object
	// List is an empty list of the kind, e.g. &corev1.PodList{}.
	List         runtime.Object
	Subresources []Subresource

	// DeleteReturnsObject says that DELETE of one object answers with the
	// object (pods, namespaces, ...) rather than a Status.
	DeleteReturnsObject bool

	// Schema, when set, is the OpenAPI v3 schema of Kind as decoded JSON
	// (for example a CustomResourceDefinition version's openAPIV3Schema). It
	// is used instead of reflecting Object/List; apiVersion, kind and metadata
	// are added to it and a list schema is synthesized.
	Schema map[string]any
}

// Subresource describes a subresource of a Resource.
type Subresource struct {
	Name string // "status", "scale", "binding", "eviction", ...
	// Object is the type sent and received, e.g. &autoscalingv1.Scale{}, the
	// parent type for status, &corev1.Binding{}, &policyv1.Eviction{}.
	Object runtime.Object
	// Verbs: get, update, patch or create.
	Verbs []string
	// Group, Version and Kind name the kind of Object. They are derived when
	// Object is the parent's type or a k8s.io/api type; set them otherwise.
	Group, Version, Kind string
}

// Info is the info section of the documents.
type Info struct{ Title, Version string }

// Handler serves /openapi/v2, /openapi/v3 and /openapi/v3/<group-version path>.
// It is safe for concurrent use; Update swaps the documents atomically.
type Handler struct {
	info  Info
	state atomic.Pointer[state]
}

// New builds the documents for resources.
func New(info Info, resources []Resource) (*Handler, error) {
	if info.Title == "" {
		info.Title = "Kubernetes"
	}
	if info.Version == "" {
		info.Version = "unversioned"
	}
	h := &Handler{info: info}
	if err := h.Update(resources); err != nil {
		return nil, err
	}
	return h, nil
}

// Update rebuilds the documents for resources and atomically replaces the
// served ones. On error the served documents are unchanged.
func (h *Handler) Update(resources []Resource) error {
	st, err := build(h.info, resources)
	if err != nil {
		return err
	}
	st.modified = time.Now()
	h.state.Store(st)
	return nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.state.Load().serveHTTP(w, r)
}

func validate(r *Resource) error {
	if r.Version == "" || r.Resource == "" || r.Kind == "" {
		return fmt.Errorf("openapi: resource %q: group %q, version %q, resource and kind are required", r.Resource, r.Group, r.Version)
	}
	if r.Schema == nil {
		if r.Object == nil {
			return fmt.Errorf("openapi: resource %s.%s: no Object and no Schema", r.Resource, r.Group)
		}
	}
	for _, v := range r.Verbs {
		switch v {
		case "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection":
		default:
			return fmt.Errorf("openapi: resource %s.%s: unknown verb %q", r.Resource, r.Group, v)
		}
	}
	for _, s := range r.Subresources {
		if s.Name == "" {
			return fmt.Errorf("openapi: resource %s.%s: subresource without a name", r.Resource, r.Group)
		}
		for _, v := range s.Verbs {
			switch v {
			case "get", "update", "patch", "create", "delete":
			default:
				return fmt.Errorf("openapi: resource %s.%s/%s: unknown verb %q", r.Resource, r.Group, s.Name, v)
			}
		}
	}
	return nil
}
