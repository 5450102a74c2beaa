package admission

import (
	"context"
	"sort"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// --- DefaultIngressClass ---------------------------------------------------

var (
	grIngresses      = schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}
	grIngressClasses = schema.GroupResource{Group: "networking.k8s.io", Resource: "ingressclasses"}
)

// legacyIngressClassAnnotation names a class the pre-IngressClass way; an
// Ingress carrying it is left alone.
const legacyIngressClassAnnotation = "kubernetes.io/ingress.class"

// defaultIngressClass gives a new Ingress naming no class the default
// IngressClass (annotated ingressclass.kubernetes.io/is-default-class:
// "true"; of several, the newest, then the first by name), as upstream's
// DefaultIngressClass plugin.
type defaultIngressClass struct{ d Deps }

func (*defaultIngressClass) Name() string              { return "DefaultIngressClass" }
func (*defaultIngressClass) Handles(op Operation) bool { return op == Create }

func (p *defaultIngressClass) Admit(ctx context.Context, a *Attributes) error {
	if a.Resource != grIngresses || a.Subresource != "" {
		return nil
	}
	ing, ok := a.Object.(*networkingv1.Ingress)
	if !ok || ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := ing.Annotations[legacyIngressClassAnnotation]; ok {
		return nil
	}
	objs, err := p.d.Getter.List(ctx, grIngressClasses, "")
	if err != nil {
		return forbidden(a, err)
	}
	var defaults []*networkingv1.IngressClass
	for _, o := range objs {
		if ic, ok := o.(*networkingv1.IngressClass); ok && ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			defaults = append(defaults, ic)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	name := defaults[0].Name
	ing.Spec.IngressClassName = &name
	return nil
}
