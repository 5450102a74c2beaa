package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	"github.com/skiff-sh/skiff/pkg/auth/rbac"
)

// Authorization, as upstream's: after authentication and impersonation
// every request is authorized by the configured authorizers
// (--authorization-mode), system:masters first; a request no authorizer
// allows gets 403 with upstream's message. The RBAC authorizer reads an
// index the server keeps in step with the watch caches of the four RBAC
// resources, so a role or binding change applies within milliseconds.

// setupAuthorization builds the authorizer of cfg (Authorizer, or the
// AuthorizationModes; neither: everything allowed) and the RBAC index.
func (s *Server) setupAuthorization() error {
	s.rbacIndex = rbac.NewIndex()
	s.rbac = rbac.New(s.rbacIndex)
	s.authzSynced = make(chan struct{})
	switch {
	case s.cfg.Authorizer != nil:
		s.authorizer = s.cfg.Authorizer
		if rr, ok := s.cfg.Authorizer.(authorizer.RuleResolver); ok {
			s.ruleResolver = rr
		} else {
			s.ruleResolver = authorizer.UnionRuleResolver{}
		}
	case len(s.cfg.AuthorizationModes) > 0:
		union := authorizer.Union{authorizer.PrivilegedGroups{authorizer.SystemPrivilegedGroup}}
		var rules authorizer.UnionRuleResolver
		seen := map[string]bool{}
		for _, m := range s.cfg.AuthorizationModes {
			if seen[m] {
				return fmt.Errorf("authorization-mode %q has mode specified more than once", m)
			}
			seen[m] = true
			switch m {
			case "AlwaysAllow":
				union, rules = append(union, authorizer.AlwaysAllow{}), append(rules, authorizer.AlwaysAllow{})
			case "AlwaysDeny":
				union, rules = append(union, authorizer.AlwaysDeny{}), append(rules, authorizer.AlwaysDeny{})
			case "Node":
				union, rules = append(union, s.nodeAuthorizer()), append(rules, s.nodeAuthorizer())
			case "RBAC":
				union, rules = append(union, s.rbac), append(rules, s.rbac)
			default:
				return fmt.Errorf("authorization-mode %q is not a valid mode", m)
			}
		}
		s.authorizer, s.ruleResolver = union, rules
	default:
		s.ruleResolver = authorizer.AlwaysAllow{}
	}
	return nil
}

// rbacResources are what the RBAC index holds.
var rbacResources = []struct {
	gr      schema.GroupResource
	example runtime.Object
}{
	{schema.GroupResource{Group: rbacv1.GroupName, Resource: "roles"}, &rbacv1.Role{}},
	{schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"}, &rbacv1.ClusterRole{}},
	{schema.GroupResource{Group: rbacv1.GroupName, Resource: "rolebindings"}, &rbacv1.RoleBinding{}},
	{schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterrolebindings"}, &rbacv1.ClusterRoleBinding{}},
}

// startRBACIndex fills the RBAC index from the watch caches, then keeps
// it in step in the background; requests wait for the fill (authzSynced).
func (s *Server) startRBACIndex(ctx context.Context) error {
	defer close(s.authzSynced)
	for _, r := range rbacResources {
		st := s.stores[r.gr]
		if st == nil {
			continue // RBAC not served: the index stays empty
		}
		rv, err := relistInto(ctx, st, r.example, s.rbacIndex)
		if err != nil {
			return fmt.Errorf("initial list of %s: %w", r.gr, err)
		}
		go s.feedIndex(ctx, st, r.example, s.rbacIndex, rv)
	}
	return s.startNodeGraph(ctx)
}

// requestAttributes are the authorization attributes of a request, as
// upstream's GetAuthorizerAttributes: a list or watch selecting one name
// (fieldSelector=metadata.name=x) is authorized for that name.
func requestAttributes(r *http.Request, info *RequestInfo, u *authenticationv1.UserInfo) authorizer.Attributes {
	a := authorizer.Attributes{User: u, Verb: info.Verb, Path: r.URL.Path}
	if !info.IsResourceRequest {
		return a
	}
	a.ResourceRequest = true
	a.APIGroup, a.APIVersion = info.APIGroup, info.APIVersion
	a.Namespace, a.Resource, a.Subresource, a.Name = info.Namespace, info.Resource, info.Subresource, info.Name
	if (a.Verb == "list" || a.Verb == "watch" || a.Verb == "deletecollection") && r.URL.RawQuery != "" {
		a.FieldSelector = r.URL.Query().Get("fieldSelector")
	}
	if (a.Verb == "list" || a.Verb == "watch") && a.Name == "" && r.URL.RawQuery != "" {
		if fs := r.URL.Query().Get("fieldSelector"); fs != "" {
			if sel, err := fields.ParseSelector(fs); err == nil {
				if name, ok := sel.RequiresExactMatch("metadata.name"); ok && validPathSegment(name) {
					a.Name = name
				}
			}
		}
	}
	return a
}

// validPathSegment is upstream's IsValidPathSegmentName.
func validPathSegment(name string) bool {
	return name != "." && name != ".." && !strings.ContainsAny(name, "/%")
}

// authorize decides a request; a refusal is upstream's 403.
func (s *Server) authorize(ctx context.Context, a authorizer.Attributes) error {
	select {
	case <-s.authzSynced:
	case <-ctx.Done():
		return ctx.Err()
	}
	d, reason, err := s.authorizer.Authorize(ctx, a)
	if d == authorizer.DecisionAllow {
		return nil
	}
	if err != nil {
		return &authzInternalError{err: err}
	}
	return forbiddenError(a, reason)
}

// authzInternalError is an authorizer failure: upstream answers it with a
// plain-text 500.
type authzInternalError struct{ err error }

func (e *authzInternalError) Error() string { return e.err.Error() }

// writeAuthzError writes what authorize or impersonate returned.
func (s *Server) writeAuthzError(w http.ResponseWriter, r *http.Request, err error) {
	var ie *authzInternalError
	if errors.As(err, &ie) {
		http.Error(w, htmlSanitizer.Replace(fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, ie.err)), http.StatusInternalServerError)
		return
	}
	s.writeError(w, r, err)
}

var htmlSanitizer = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// forbiddenError is upstream's ForbiddenStatusError:
//
//	pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "y"
//	forbidden: User "x" cannot get path "/foo"
//
// with ": <reason>" when the authorizers gave one.
func forbiddenError(a authorizer.Attributes, reason string) error {
	msg := htmlSanitizer.Replace(forbiddenMessage(a))
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, errors.New(msg))
}

func forbiddenMessage(a authorizer.Attributes) string {
	name := ""
	if a.User != nil {
		name = a.User.Username
	}
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", name, a.Verb, a.Path)
	}
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, a.Verb, resource, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, a.Verb, resource, a.APIGroup)
}

// Authorizer returns the server's authorizer (nil: everything allowed).
func (s *Server) Authorizer() authorizer.Authorizer { return s.authorizer }
