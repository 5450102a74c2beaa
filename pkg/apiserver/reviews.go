package apiserver

import (
	"context"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A review is a create-only resource that is answered, not stored: "who am
// I" (SelfSubjectReview) and "may I" (the access reviews kubectl auth uses),
// and core/v1 bindings, which writes the pod it names.
type review struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	newObj     func() runtime.Object
	answer     func(ctx context.Context, u *User, obj runtime.Object) runtime.Object
	// serve, if set, answers the create itself (core/v1 bindings, which
	// writes a pod and answers with a Status).
	serve func(s *Server, w http.ResponseWriter, r *http.Request, info *RequestInfo) error
}

// allowAll is the decision every access review gets while skiff has no
// authorizer: any authenticated user may do anything (RBAC objects are
// stored but not enforced yet).
const allowAllReason = "skiff does not enforce authorization yet: every authenticated user is allowed"

func reviews() []*review {
	authn := func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: v}
	}
	authz := func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: v}
	}
	allowed := authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: allowAllReason}
	return []*review{
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "bindings"}, kind: "Binding", namespaced: true,
			newObj: func() runtime.Object { return &corev1.Binding{} },
			serve:  (*Server).serveBindings},
		{gvr: authn("selfsubjectreviews"), kind: "SelfSubjectReview",
			newObj: func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
			answer: func(_ context.Context, u *User, obj runtime.Object) runtime.Object {
				r := obj.(*authenticationv1.SelfSubjectReview)
				r.Status.UserInfo = authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
				return r
			}},
		{gvr: authn("tokenreviews"), kind: "TokenReview",
			newObj: func() runtime.Object { return &authenticationv1.TokenReview{} },
			answer: nil}, // answered in serveReview: it needs the authenticator
		{gvr: authz("selfsubjectaccessreviews"), kind: "SelfSubjectAccessReview",
			newObj: func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
			answer: func(_ context.Context, _ *User, obj runtime.Object) runtime.Object {
				r := obj.(*authorizationv1.SelfSubjectAccessReview)
				r.Status = allowed
				return r
			}},
		{gvr: authz("subjectaccessreviews"), kind: "SubjectAccessReview",
			newObj: func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
			answer: func(_ context.Context, _ *User, obj runtime.Object) runtime.Object {
				r := obj.(*authorizationv1.SubjectAccessReview)
				r.Status = allowed
				return r
			}},
		{gvr: authz("localsubjectaccessreviews"), kind: "LocalSubjectAccessReview", namespaced: true,
			newObj: func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
			answer: func(_ context.Context, _ *User, obj runtime.Object) runtime.Object {
				r := obj.(*authorizationv1.LocalSubjectAccessReview)
				r.Status = allowed
				return r
			}},
		{gvr: authz("selfsubjectrulesreviews"), kind: "SelfSubjectRulesReview",
			newObj: func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
			answer: func(_ context.Context, _ *User, obj runtime.Object) runtime.Object {
				r := obj.(*authorizationv1.SelfSubjectRulesReview)
				r.Status = authorizationv1.SubjectRulesReviewStatus{
					ResourceRules:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
					NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
				}
				return r
			}},
	}
}

// serveReview answers a POST to a review resource.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, info *RequestInfo, rv *review) error {
	if info.Verb != "create" || info.Name != "" || (info.Namespace != "") != rv.namespaced {
		return methodNotSupported(schema.GroupResource{Group: rv.gvr.Group, Resource: rv.gvr.Resource}, info.Verb)
	}
	if rv.serve != nil {
		return rv.serve(s, w, r, info)
	}
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	gvk := rv.gvr.GroupVersion().WithKind(rv.kind)
	obj, err := s.readTyped(w, r, gvk, rv.newObj(), nil)
	if err != nil {
		return err
	}
	u, _ := r.Context().Value(userKey).(*User)
	if u == nil {
		u = &User{}
	}
	var out runtime.Object
	if rv.answer == nil {
		out = s.tokenReview(r, obj.(*authenticationv1.TokenReview))
	} else {
		out = rv.answer(r.Context(), u, obj)
	}
	if a, ok := out.(metav1.Object); ok {
		a.SetCreationTimestamp(metav1.Time{})
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	s.writeObject(w, r, http.StatusCreated, m, out)
	return nil
}

// tokenReview checks a bearer token with the server's authenticator.
func (s *Server) tokenReview(r *http.Request, tr *authenticationv1.TokenReview) runtime.Object {
	if s.cfg.Authenticator == nil || tr.Spec.Token == "" {
		return tr
	}
	req, _ := http.NewRequestWithContext(r.Context(), "GET", "/", nil)
	req.Header.Set("Authorization", "Bearer "+tr.Spec.Token)
	u, ok, err := s.cfg.Authenticator.Authenticate(req)
	switch {
	case err != nil || !ok:
		tr.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
	default:
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true,
			User: authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: withAuthenticated(u.Groups)}}
	}
	return tr
}

// withAuthenticated adds the group every authenticated user is in.
func withAuthenticated(groups []string) []string {
	for _, g := range groups {
		if g == "system:authenticated" {
			return groups
		}
	}
	return append(append([]string(nil), groups...), "system:authenticated")
}
