package policy

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// paramSource is a policy's resolved paramKind.
type paramSource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// resolveParamKind is upstream's policy source resolving paramKind (an
// unknown kind is the policy's configuration error).
func resolveParamKind(r Resources, pk *admissionregistrationv1.ParamKind) (*paramSource, error) {
	if pk == nil {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("failed to parse paramKind APIVersion: %w", err)
	}
	gvk := gv.WithKind(pk.Kind)
	gvr, namespaced, ok := r.ResourceFor(gvk)
	if !ok {
		return nil, fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk)
	}
	return &paramSource{gvr: gvr, namespaced: namespaced}, nil
}

// collectParams is upstream's CollectParams: the params a binding selects
// for a request in namespace, in the paramKind's version as JSON maps. A
// policy without paramKind or a binding without paramRef evaluates once
// without params ([nil]); no params found is an empty list (Allow) or an
// error (Deny).
func (p *plugin) collectParams(ctx context.Context, src *paramSource, ref *admissionregistrationv1.ParamRef, namespace string) ([]any, error) {
	if src == nil || ref == nil {
		return []any{nil}, nil
	}
	ns := ""
	if src.namespaced {
		ns = namespace
		if ref.Namespace != "" {
			ns = ref.Namespace
		} else if ns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	} else if ref.Namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	gr := src.gvr.GroupResource()
	var objs []runtime.Object
	switch {
	case ref.Name != "":
		if ref.Selector != nil {
			return nil, errors.New("paramRef.name and paramRef.selector are mutually exclusive")
		}
		obj, err := p.cfg.Getter.Get(ctx, gr, ns, ref.Name)
		switch {
		case err == nil:
			objs = []runtime.Object{obj}
		case apierrors.IsNotFound(err):
		default:
			return nil, err
		}
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		all, err := p.cfg.Getter.List(ctx, gr, ns)
		if err != nil {
			return nil, err
		}
		for _, o := range all {
			if m, err := meta.Accessor(o); err == nil && sel.Matches(labels.Set(m.GetLabels())) {
				objs = append(objs, o)
			}
		}
	default:
		return nil, errors.New("one of name or selector must be provided")
	}
	if len(objs) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	out := make([]any, 0, len(objs))
	for _, o := range objs {
		v, err := p.cfg.Resources.ToVersion(o, src.gvr)
		if err != nil {
			return nil, err
		}
		m, err := toMap(v)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
