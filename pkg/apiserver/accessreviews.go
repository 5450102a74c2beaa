package apiserver

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// The access reviews answer from the server's authorizer, as upstream's
// registry/authorization: allowed, denied, the reason and the evaluation
// error of the decision; SelfSubjectRulesReview lists the rule resolver's
// rules.

var authorizationGK = func(kind string) schema.GroupKind {
	return schema.GroupKind{Group: authorizationv1.GroupName, Kind: kind}
}

// validateAccessReviewSpec is upstream's ValidateSubjectAccessReviewSpec
// (self: no user or group required).
func validateAccessReviewSpec(ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes, user string, groups []string, self bool) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if ra != nil && nra != nil {
		errs = append(errs, field.Invalid(p.Child("nonResourceAttributes"), nra, `cannot be specified in combination with resourceAttributes`))
	}
	if ra == nil && nra == nil {
		errs = append(errs, field.Invalid(p.Child("resourceAttributes"), nra, `exactly one of nonResourceAttributes or resourceAttributes must be specified`))
	}
	if !self && user == "" && len(groups) == 0 {
		errs = append(errs, field.Invalid(p.Child("user"), user, `at least one of user or group must be specified`))
	}
	return errs
}

func emptyMeta(m metav1.ObjectMeta, keepNamespace bool) bool {
	m.ManagedFields = nil
	if keepNamespace {
		m.Namespace = ""
	}
	return apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, m)
}

// reviewAttributes are the attributes a review asks about.
func reviewAttributes(u *authenticationv1.UserInfo, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) authorizer.Attributes {
	a := authorizer.Attributes{User: u}
	if ra != nil {
		a.ResourceRequest = true
		a.Verb, a.Namespace, a.APIGroup, a.APIVersion = ra.Verb, ra.Namespace, ra.Group, ra.Version
		a.Resource, a.Subresource, a.Name = ra.Resource, ra.Subresource, ra.Name
	} else if nra != nil {
		a.Verb, a.Path = nra.Verb, nra.Path
	}
	return a
}

// decide answers a review's status.
func (s *Server) decide(ctx context.Context, a authorizer.Attributes) authorizationv1.SubjectAccessReviewStatus {
	if s.authorizer == nil {
		return authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	}
	select {
	case <-s.authzSynced:
	case <-ctx.Done():
	}
	d, reason, err := s.authorizer.Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == authorizer.DecisionAllow, Denied: d == authorizer.DecisionDeny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func specUser(spec *authorizationv1.SubjectAccessReviewSpec) *authenticationv1.UserInfo {
	u := &authenticationv1.UserInfo{Username: spec.User, UID: spec.UID, Groups: spec.Groups}
	if len(spec.Extra) > 0 {
		u.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range spec.Extra {
			u.Extra[k] = authenticationv1.ExtraValue(v)
		}
	}
	return u
}

func (s *Server) subjectAccessReview(ctx context.Context, _ string, _ *authenticationv1.UserInfo, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authorizationv1.SubjectAccessReview)
	errs := validateAccessReviewSpec(r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes, r.Spec.User, r.Spec.Groups, false)
	if !emptyMeta(r.ObjectMeta, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), r.ObjectMeta, `must be empty`))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(authorizationGK("SubjectAccessReview"), "", errs)
	}
	r.Status = s.decide(ctx, reviewAttributes(specUser(&r.Spec), r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes))
	return r, nil
}

func (s *Server) localSubjectAccessReview(ctx context.Context, ns string, _ *authenticationv1.UserInfo, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authorizationv1.LocalSubjectAccessReview)
	errs := validateAccessReviewSpec(r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes, r.Spec.User, r.Spec.Groups, false)
	if !emptyMeta(r.ObjectMeta, true) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), r.ObjectMeta, `must be empty except for namespace`))
	}
	if r.Spec.ResourceAttributes != nil && r.Spec.ResourceAttributes.Namespace != r.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), r.Spec.ResourceAttributes.Namespace, `must match metadata.namespace`))
	}
	if r.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), r.Spec.NonResourceAttributes, `disallowed on this kind of request`))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(authorizationGK("LocalSubjectAccessReview"), "", errs)
	}
	if ns == "" || r.Namespace != ns {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", ns))
	}
	r.Status = s.decide(ctx, reviewAttributes(specUser(&r.Spec), r.Spec.ResourceAttributes, nil))
	return r, nil
}

func (s *Server) selfSubjectAccessReview(ctx context.Context, _ string, u *authenticationv1.UserInfo, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authorizationv1.SelfSubjectAccessReview)
	errs := validateAccessReviewSpec(r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes, "", nil, true)
	if !emptyMeta(r.ObjectMeta, false) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), r.ObjectMeta, `must be empty`))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(authorizationGK("SelfSubjectAccessReview"), "", errs)
	}
	r.Status = s.decide(ctx, reviewAttributes(u, r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes))
	return r, nil
}

func (s *Server) selfSubjectRulesReview(ctx context.Context, _ string, u *authenticationv1.UserInfo, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authorizationv1.SelfSubjectRulesReview)
	if r.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	if s.authorizer != nil {
		select {
		case <-s.authzSynced:
		case <-ctx.Done():
		}
	}
	rr, nr, incomplete, err := s.ruleResolver.RulesFor(ctx, u, r.Spec.Namespace)
	if rr == nil {
		rr = []authorizationv1.ResourceRule{}
	}
	if nr == nil {
		nr = []authorizationv1.NonResourceRule{}
	}
	r.Status = authorizationv1.SubjectRulesReviewStatus{ResourceRules: rr, NonResourceRules: nr, Incomplete: incomplete}
	if err != nil {
		r.Status.EvaluationError = err.Error()
	}
	return r, nil
}
