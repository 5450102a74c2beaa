package matching

import (
	"context"
	"fmt"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
)

var (
	namespacesV1 = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	grNamespaces = schema.GroupResource{Resource: "namespaces"}
)

// RequestResource is the served resource the request used (upstream's
// attributes' GetResource).
func RequestResource(a *admission.Attributes) schema.GroupVersionResource {
	if !a.RequestResource.Empty() {
		return a.RequestResource
	}
	return a.Resource.WithVersion("")
}

// RequestKind is the served kind the request used.
func RequestKind(a *admission.Attributes) schema.GroupVersionKind {
	if !a.RequestKind.Empty() {
		return a.RequestKind
	}
	return a.Kind.WithVersion("")
}

// RuleMatches is upstream's rules.Matcher: the scope, operation, group,
// version and resource (with subresource) of one rule against a request
// for gvr.
func RuleMatches(r admissionregistrationv1.RuleWithOperations, a *admission.Attributes, gvr schema.GroupVersionResource) bool {
	if r.Scope != nil && *r.Scope != admissionregistrationv1.AllScopes {
		switch *r.Scope {
		case admissionregistrationv1.NamespacedScope:
			if gvr == namespacesV1 || a.Namespace == "" {
				return false
			}
		case admissionregistrationv1.ClusterScope:
			if gvr != namespacesV1 && a.Namespace != "" {
				return false
			}
		default:
			return false
		}
	}
	opOK := false
	for _, op := range r.Operations {
		if op == admissionregistrationv1.OperationAll || string(op) == string(a.Operation) {
			opOK = true
			break
		}
	}
	if !opOK || !exactOrWildcard(r.APIGroups, gvr.Group) || !exactOrWildcard(r.APIVersions, gvr.Version) {
		return false
	}
	for _, res := range r.Resources {
		res, sub, _ := strings.Cut(res, "/")
		if (res == "*" || res == gvr.Resource) && (sub == "*" || sub == a.Subresource) {
			return true
		}
	}
	return false
}

func exactOrWildcard(items []string, v string) bool {
	for _, i := range items {
		if i == "*" || i == v {
			return true
		}
	}
	return false
}

// Namespaces reads namespaces (the watch cache, then storage).
type Namespaces interface {
	Get(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error)
	GetConsistent(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error)
}

// GetNamespace returns the namespace name: from the watch cache, or from
// storage when the cache has not seen it yet (a namespace created a
// moment ago).
func GetNamespace(ctx context.Context, g Namespaces, name string) (*corev1.Namespace, error) {
	obj, err := g.Get(ctx, grNamespaces, "", name)
	if apierrors.IsNotFound(err) {
		obj, err = g.GetConsistent(ctx, grNamespaces, "", name)
	}
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("unexpected namespace object %T", obj)
	}
	return ns, nil
}

// MatchNamespace is upstream's namespace matcher: a cluster-scoped
// request other than for a namespace always matches; a namespace is
// matched by its own labels (the old object's for a delete); anything else
// by its namespace's labels (404 if the namespace does not exist).
func MatchNamespace(ctx context.Context, g Namespaces, sel *metav1.LabelSelector, a *admission.Attributes) (bool, error) {
	isNamespace := a.Resource == grNamespaces
	if sel == nil || a.Namespace == "" && !isNamespace {
		return true, nil // (nil: an undefaulted selector, everything)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if s.Empty() {
		return true, nil
	}
	var lbls map[string]string
	if isNamespace {
		obj := a.Object
		if a.Operation == admission.Delete || obj == nil {
			obj = a.OldObject
		}
		if m, err := meta.Accessor(obj); err == nil {
			lbls = m.GetLabels()
		}
	} else {
		ns, err := GetNamespace(ctx, g, a.Namespace)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return false, apierrors.NewNotFound(grNamespaces, a.Namespace)
			}
			return false, apierrors.NewInternalError(err)
		}
		lbls = ns.Labels
	}
	return s.Matches(labels.Set(lbls)), nil
}

// MatchObject is upstream's object matcher: the new or the old object's
// labels match the selector.
func MatchObject(sel *metav1.LabelSelector, a *admission.Attributes) (bool, error) {
	if sel == nil {
		return true, nil // an undefaulted selector: everything
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if s.Empty() {
		return true, nil
	}
	matches := func(obj runtime.Object) bool {
		if obj == nil {
			return false
		}
		m, err := meta.Accessor(obj)
		return err == nil && s.Matches(labels.Set(m.GetLabels()))
	}
	return matches(a.Object) || matches(a.OldObject), nil
}

// Result is what a match found: the resource and kind (of the request's
// version, or of the equivalent version a rule named).
type Result struct {
	Resource schema.GroupVersionResource
	Kind     schema.GroupVersionKind
}

// Matches is upstream's policy matcher (policy/matching Matcher.Matches)
// for one MatchResources: namespace and object selectors, the exclude
// rules, then the resource rules (none: everything matches) with
// resourceNames, the request's own version first and, with matchPolicy
// Equivalent, the other served versions.
func Matches(ctx context.Context, g Namespaces, mr *admissionregistrationv1.MatchResources, a *admission.Attributes) (bool, Result, error) {
	nsOK, nsErr := MatchNamespace(ctx, g, mr.NamespaceSelector, a)
	if !nsOK && nsErr == nil {
		return false, Result{}, nil
	}
	objOK, objErr := MatchObject(mr.ObjectSelector, a)
	if !objOK && objErr == nil {
		return false, Result{}, nil
	}
	if excluded, _, err := matchNamedRules(mr.ExcludeResourceRules, mr.MatchPolicy, a); excluded || err != nil {
		return false, Result{}, err
	}
	var res Result
	if len(mr.ResourceRules) == 0 {
		res = Result{Resource: RequestResource(a), Kind: RequestKind(a)}
	} else {
		ok, r, err := matchNamedRules(mr.ResourceRules, mr.MatchPolicy, a)
		if err != nil {
			return false, Result{}, err
		}
		if !ok {
			return false, Result{}, nil
		}
		res = r
	}
	if nsErr != nil {
		return false, Result{}, nsErr
	}
	if objErr != nil {
		return false, Result{}, objErr
	}
	return true, res, nil
}

func nameMatches(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func matchNamedRules(rules []admissionregistrationv1.NamedRuleWithOperations, policy *admissionregistrationv1.MatchPolicyType, a *admission.Attributes) (bool, Result, error) {
	gvr := RequestResource(a)
	for _, r := range rules {
		if RuleMatches(r.RuleWithOperations, a, gvr) && nameMatches(r.ResourceNames, a.Name) {
			return true, Result{Resource: gvr, Kind: RequestKind(a)}, nil
		}
	}
	if policy == nil || *policy == admissionregistrationv1.Exact || a.Versions == nil {
		return false, Result{}, nil
	}
	equivalents := a.Versions.Equivalents()
	// a deterministic order: the request's group first, then by group and
	// version
	sort.Slice(equivalents, func(i, j int) bool {
		ei, ej := equivalents[i], equivalents[j]
		if (ei.Group == gvr.Group) != (ej.Group == gvr.Group) {
			return ei.Group == gvr.Group
		}
		if ei.Group != ej.Group {
			return ei.Group < ej.Group
		}
		return ei.Version < ej.Version
	})
	for _, r := range rules {
		for _, eq := range equivalents {
			if eq == gvr || !RuleMatches(r.RuleWithOperations, a, eq) {
				continue
			}
			kind := a.Versions.KindFor(eq)
			if kind.Empty() {
				return false, Result{}, fmt.Errorf("unable to convert to %v: unknown kind", eq)
			}
			if nameMatches(r.ResourceNames, a.Name) {
				return true, Result{Resource: eq, Kind: kind}, nil
			}
		}
	}
	return false, Result{}, nil
}
