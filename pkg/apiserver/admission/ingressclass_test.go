package admission

import (
	"context"
	"errors"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// classGetter serves IngressClasses from memory.
type classGetter struct {
	classes []runtime.Object
	err     error
}

func (g *classGetter) Get(context.Context, schema.GroupResource, string, string) (runtime.Object, error) {
	return nil, errors.New("not implemented")
}

func (g *classGetter) GetConsistent(context.Context, schema.GroupResource, string, string) (runtime.Object, error) {
	return nil, errors.New("not implemented")
}

func (g *classGetter) ListConsistent(ctx context.Context, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	return g.List(ctx, gr, ns)
}

func (g *classGetter) List(_ context.Context, gr schema.GroupResource, _ string) ([]runtime.Object, error) {
	if gr != grIngressClasses {
		return nil, errors.New("unexpected list of " + gr.String())
	}
	return g.classes, g.err
}

func TestDefaultIngressClass(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	class := func(name string, created time.Duration, isDefault bool) runtime.Object {
		ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(created))}}
		if isDefault {
			ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
		}
		return ic
	}
	named := "mine"
	tests := []struct {
		name    string
		classes []runtime.Object
		ing     func(*networkingv1.Ingress)
		sub     string
		want    string // "" means no class set
	}{
		{name: "no default", classes: []runtime.Object{class("a", 0, false)}},
		{name: "one default", classes: []runtime.Object{class("a", 0, false), class("nginx", 0, true)}, want: "nginx"},
		{name: "newest default wins", classes: []runtime.Object{class("old", 0, true), class("new", time.Hour, true)}, want: "new"},
		{name: "same age: first by name", classes: []runtime.Object{class("b", 0, true), class("a", 0, true)}, want: "a"},
		{name: "class named", classes: []runtime.Object{class("nginx", 0, true)}, ing: func(i *networkingv1.Ingress) { i.Spec.IngressClassName = &named }, want: "mine"},
		{name: "legacy annotation", classes: []runtime.Object{class("nginx", 0, true)},
			ing: func(i *networkingv1.Ingress) {
				i.Annotations = map[string]string{"kubernetes.io/ingress.class": "traefik"}
			}},
		{name: "status subresource", classes: []runtime.Object{class("nginx", 0, true)}, sub: "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
			if tt.ing != nil {
				tt.ing(ing)
			}
			p := &defaultIngressClass{d: Deps{Getter: &classGetter{classes: tt.classes}}}
			a := &Attributes{Operation: Create, Resource: grIngresses, Subresource: tt.sub, Namespace: "ns", Name: "web", Object: ing}
			if err := p.Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			got := ""
			if ing.Spec.IngressClassName != nil {
				got = *ing.Spec.IngressClassName
			}
			if got != tt.want {
				t.Errorf("ingressClassName = %q, want %q", got, tt.want)
			}
		})
	}
	p := &defaultIngressClass{d: Deps{Getter: &classGetter{err: errors.New("boom")}}}
	err := p.Admit(context.Background(), &Attributes{Operation: Create, Resource: grIngresses, Name: "web", Namespace: "ns", Object: &networkingv1.Ingress{}})
	if err == nil || err.Error() != `ingresses.networking.k8s.io "web" is forbidden: boom` {
		t.Errorf("list failure answered %v", err)
	}
}
