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

	"github.com/skiff-sh/skiff/pkg/registry"
)

// A review is a create-only resource that is answered, not stored: "who am
// I" (SelfSubjectReview) and "may I" (the access reviews kubectl auth uses),
// and core/v1 bindings, which writes the pod it names.
type review struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	newObj     func() runtime.Object
	// answer answers a review posted by u (in namespace ns for a
	// namespaced review).
	answer func(s *Server, ctx context.Context, ns string, u *authenticationv1.UserInfo, obj runtime.Object) (runtime.Object, error)
	// serve, if set, answers the create itself (core/v1 bindings, which
	// writes a pod and answers with a Status).
	serve func(s *Server, w http.ResponseWriter, r *http.Request, info *RequestInfo) error
}

func reviews() []*review {
	authn := func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: v}
	}
	authz := func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: v}
	}
	return []*review{
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "bindings"}, kind: "Binding", namespaced: true,
			newObj: func() runtime.Object { return &corev1.Binding{} },
			serve:  (*Server).serveBindings},
		{gvr: authn("selfsubjectreviews"), kind: "SelfSubjectReview",
			newObj: func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
			answer: func(_ *Server, _ context.Context, _ string, u *authenticationv1.UserInfo, obj runtime.Object) (runtime.Object, error) {
				r := obj.(*authenticationv1.SelfSubjectReview)
				r.Status.UserInfo = *u
				return r, nil
			}},
		{gvr: authn("tokenreviews"), kind: "TokenReview",
			newObj: func() runtime.Object { return &authenticationv1.TokenReview{} },
			answer: nil}, // answered in serveReview: it needs the authenticator
		{gvr: authz("selfsubjectaccessreviews"), kind: "SelfSubjectAccessReview",
			newObj: func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
			answer: (*Server).selfSubjectAccessReview},
		{gvr: authz("subjectaccessreviews"), kind: "SubjectAccessReview",
			newObj: func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
			answer: (*Server).subjectAccessReview},
		{gvr: authz("localsubjectaccessreviews"), kind: "LocalSubjectAccessReview", namespaced: true,
			newObj: func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
			answer: (*Server).localSubjectAccessReview},
		{gvr: authz("selfsubjectrulesreviews"), kind: "SelfSubjectRulesReview",
			newObj: func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
			answer: (*Server).selfSubjectRulesReview},
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
	u := registry.UserFrom(r.Context())
	if u == nil {
		u = &authenticationv1.UserInfo{}
	}
	var out runtime.Object
	if rv.answer == nil {
		out = s.tokenReview(r, obj.(*authenticationv1.TokenReview))
	} else if out, err = rv.answer(s, r.Context(), info.Namespace, u, obj); err != nil {
		return err
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
		c := *u
		c.Groups = withAuthenticated(u.Groups)
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: *c.userInfo()}
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
