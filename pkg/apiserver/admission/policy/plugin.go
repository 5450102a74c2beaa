package policy

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/matching"
)

// plugin is what both policy plugins share.
type plugin struct {
	cfg Config
}

// request is one admission request's lazily computed inputs, shared by
// the policies that match it.
type request struct {
	p         *plugin
	a         *admission.Attributes
	az        *cachingAuthorizer
	versioned map[schema.GroupVersionResource][2]any
	nsDone    bool
	ns        *corev1.Namespace
	nsMap     map[string]any
	nsErr     error
}

func (p *plugin) newRequest(a *admission.Attributes) *request {
	return &request{p: p, a: a, az: newCachingAuthorizer(p.cfg.authz()), versioned: map[schema.GroupVersionResource][2]any{}}
}

// objects returns object and oldObject in the matched version gvr as JSON
// maps (nil where absent).
func (r *request) objects(gvr schema.GroupVersionResource) (any, any, error) {
	if v, ok := r.versioned[gvr]; ok {
		return v[0], v[1], nil
	}
	conv := func(obj runtime.Object) (any, error) {
		if obj == nil {
			return nil, nil
		}
		if r.a.Versions != nil {
			v, err := r.a.Versions.ToVersion(obj, gvr)
			if err != nil {
				return nil, err
			}
			obj = v
		}
		m, err := toMap(obj)
		if m == nil || err != nil {
			return nil, err
		}
		return m, nil
	}
	obj, err := conv(r.a.Object)
	if err != nil {
		return nil, nil, err
	}
	old, err := conv(r.a.OldObject)
	if err != nil {
		return nil, nil, err
	}
	r.versioned[gvr] = [2]any{obj, old}
	return obj, old, nil
}

// namespace returns the request's namespace (nil for cluster-scoped
// requests and namespaces themselves) as upstream's namespaceObject.
func (r *request) namespace(ctx context.Context) (*corev1.Namespace, map[string]any, error) {
	if r.nsDone {
		return r.ns, r.nsMap, r.nsErr
	}
	r.nsDone = true
	name := r.a.Namespace
	if r.a.Kind == (schema.GroupKind{Kind: "Namespace"}) {
		name = ""
	}
	if name == "" {
		return nil, nil, nil
	}
	r.ns, r.nsErr = matching.GetNamespace(ctx, r.p.cfg.Getter, name)
	if r.nsErr == nil {
		r.nsMap, r.nsErr = namespaceMap(r.ns)
	}
	return r.ns, r.nsMap, r.nsErr
}

// forbidden is upstream's admission.NewForbidden: `<resource> "<name>" is
// forbidden: <message>`, the resource the request used (events.k8s.io's
// events through events.k8s.io/v1), the request's name, else the
// object's (its generateName before a name is generated, "Unknown"
// without object).
func forbidden(a *admission.Attributes, err error) *apierrors.StatusError {
	name := a.Name
	if name == "" {
		name = "Unknown"
		if a.Object != nil {
			if m, merr := meta.Accessor(a.Object); merr != nil {
				name = "Unknown/errorGettingName"
			} else if m.GetName() != "" {
				name = m.GetName()
			} else if m.GetGenerateName() != "" {
				name = m.GetGenerateName()
			}
		}
	}
	return apierrors.NewForbidden(matching.RequestResource(a).GroupResource(), name, err)
}

// denial is the error of a denied request: Forbidden's message with
// reason (Invalid by default) and its code, and the message as a cause.
func denial(a *admission.Attributes, message string, reason metav1.StatusReason) error {
	err := forbidden(a, errors.New(message))
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	err.ErrStatus.Reason = reason
	err.ErrStatus.Code = reasonToCode(reason)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Message: message})
	return err
}

func reasonToCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	default:
		return http.StatusUnprocessableEntity
	}
}

var errNotBool = fmt.Errorf("must evaluate to bool")
