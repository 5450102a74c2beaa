package v1alpha1

import "k8s.io/apimachinery/pkg/runtime"

// DeepCopyInto copies f into out.
func (f *Foo) DeepCopyInto(out *Foo) {
	*out = *f
	out.TypeMeta = f.TypeMeta
	f.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	f.Spec.DeepCopyInto(&out.Spec)
	out.Status = f.Status
}

// DeepCopy returns a copy of f.
func (f *Foo) DeepCopy() *Foo {
	if f == nil {
		return nil
	}
	out := new(Foo)
	f.DeepCopyInto(out)
	return out
}

// DeepCopyObject makes Foo a runtime.Object.
func (f *Foo) DeepCopyObject() runtime.Object {
	if c := f.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies s into out.
func (s *FooSpec) DeepCopyInto(out *FooSpec) {
	*out = *s
	if s.Replicas != nil {
		r := *s.Replicas
		out.Replicas = &r
	}
}

// DeepCopyInto copies l into out.
func (l *FooList) DeepCopyInto(out *FooList) {
	*out = *l
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Foo, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l.
func (l *FooList) DeepCopy() *FooList {
	if l == nil {
		return nil
	}
	out := new(FooList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject makes FooList a runtime.Object.
func (l *FooList) DeepCopyObject() runtime.Object {
	if c := l.DeepCopy(); c != nil {
		return c
	}
	return nil
}
