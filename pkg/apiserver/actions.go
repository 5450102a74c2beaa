package apiserver

import (
	"fmt"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// actionFunc serves one action subresource (see registry.Action).
type actionFunc func(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error

// actionHandlers are the API server's handlers for the action subresources
// Definitions may declare, by resource and subresource.
func (s *Server) actionHandlers() map[string]actionFunc {
	return map[string]actionFunc{
		"pods/binding":          s.serveBinding,
		"pods/eviction":         s.serveEviction,
		"pods/log":              s.servePodStream,
		"pods/exec":             s.servePodStream,
		"pods/attach":           s.servePodStream,
		"pods/portforward":      s.servePodStream,
		"serviceaccounts/token": s.serveTokenRequest,
		"namespaces/finalize":   s.serveFinalize,
		"nodes/proxy":           s.serveNodeProxy,
	}
}

// installActions binds each endpoint's declared actions to their handlers
// (in the Definition's own version only, as upstream serves them), each
// refusing the verbs it does not declare.
func (s *Server) installActions() error {
	handlers := s.actionHandlers()
	for _, e := range s.endpoints {
		if e.def == nil || len(e.def.Actions) == 0 || e.version != nil {
			continue
		}
		e.actions = map[string]actionFunc{}
		for _, a := range e.def.Actions {
			h := handlers[e.qualified.Resource+"/"+a.Name]
			if h == nil || e.qualified.Group != "" {
				return fmt.Errorf("%s declares the %s subresource, which the API server has no handler for", e.qualified, a.Name)
			}
			verbs, sub := a.Verbs, a.Name
			e.actions[a.Name] = func(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
				if !slices.Contains(verbs, info.Verb) {
					return methodNotSupported(schema.GroupResource{Group: e.qualified.Group, Resource: e.qualified.Resource + "/" + sub}, info.Verb)
				}
				return h(w, r, info, e)
			}
		}
	}
	return nil
}
