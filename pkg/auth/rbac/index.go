package rbac

import (
	"fmt"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// subjectKey names a binding subject: a user, a group or a service account
// (namespace and name).
type subjectKey struct {
	kind byte // 'U' user, 'G' group, 'S' service account
	ns   string
	name string
}

// nsSubjectKey is a subject of the role bindings of one namespace.
type nsSubjectKey struct {
	bindingNS string
	subjectKey
}

type nsName struct{ ns, name string }

// binding is an indexed RoleBinding or ClusterRoleBinding.
type binding struct {
	ns       string // "" for a ClusterRoleBinding
	name     string
	roleRef  rbacv1.RoleRef
	subjects []rbacv1.Subject
	// reasons[i] is the "allowed by" reason naming subjects[i], built once.
	reasons []string
}

// Index holds the RBAC objects, bindings indexed by subject. It is safe
// for concurrent use; the zero value is not (use NewIndex).
type Index struct {
	mu           sync.RWMutex
	roles        map[nsName]*rbacv1.Role
	clusterRoles map[string]*rbacv1.ClusterRole
	rbs          map[nsName]*binding
	crbs         map[string]*binding
	rbBySubject  map[nsSubjectKey][]*binding
	crbBySubject map[subjectKey][]*binding
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{
		roles:        map[nsName]*rbacv1.Role{},
		clusterRoles: map[string]*rbacv1.ClusterRole{},
		rbs:          map[nsName]*binding{},
		crbs:         map[string]*binding{},
		rbBySubject:  map[nsSubjectKey][]*binding{},
		crbBySubject: map[subjectKey][]*binding{},
	}
}

// Set adds or replaces a Role, ClusterRole, RoleBinding or
// ClusterRoleBinding (other objects are ignored).
func (x *Index) Set(obj runtime.Object) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.set(obj)
}

func (x *Index) set(obj runtime.Object) {
	switch o := obj.(type) {
	case *rbacv1.Role:
		x.roles[nsName{o.Namespace, o.Name}] = o
	case *rbacv1.ClusterRole:
		x.clusterRoles[o.Name] = o
	case *rbacv1.RoleBinding:
		k := nsName{o.Namespace, o.Name}
		if old := x.rbs[k]; old != nil {
			x.unindex(old)
		}
		b := newBinding(o.Namespace, o.Name, o.RoleRef, o.Subjects)
		x.rbs[k] = b
		x.index(b)
	case *rbacv1.ClusterRoleBinding:
		if old := x.crbs[o.Name]; old != nil {
			x.unindex(old)
		}
		b := newBinding("", o.Name, o.RoleRef, o.Subjects)
		x.crbs[o.Name] = b
		x.index(b)
	}
}

// Delete removes an object Set added.
func (x *Index) Delete(obj runtime.Object) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.delete(obj)
}

func (x *Index) delete(obj runtime.Object) {
	switch o := obj.(type) {
	case *rbacv1.Role:
		delete(x.roles, nsName{o.Namespace, o.Name})
	case *rbacv1.ClusterRole:
		delete(x.clusterRoles, o.Name)
	case *rbacv1.RoleBinding:
		k := nsName{o.Namespace, o.Name}
		if old := x.rbs[k]; old != nil {
			x.unindex(old)
			delete(x.rbs, k)
		}
	case *rbacv1.ClusterRoleBinding:
		if old := x.crbs[o.Name]; old != nil {
			x.unindex(old)
			delete(x.crbs, o.Name)
		}
	}
}

// Replace makes objs the complete set of the kind of example (after a
// relist of that resource).
func (x *Index) Replace(example runtime.Object, objs []runtime.Object) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch example.(type) {
	case *rbacv1.Role:
		x.roles = map[nsName]*rbacv1.Role{}
	case *rbacv1.ClusterRole:
		x.clusterRoles = map[string]*rbacv1.ClusterRole{}
	case *rbacv1.RoleBinding:
		x.rbs = map[nsName]*binding{}
		x.rbBySubject = map[nsSubjectKey][]*binding{}
	case *rbacv1.ClusterRoleBinding:
		x.crbs = map[string]*binding{}
		x.crbBySubject = map[subjectKey][]*binding{}
	}
	for _, o := range objs {
		x.set(o)
	}
}

func newBinding(ns, name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject) *binding {
	b := &binding{ns: ns, name: name, roleRef: ref, subjects: subjects, reasons: make([]string, len(subjects))}
	for i := range subjects {
		if ns == "" {
			b.reasons[i] = fmt.Sprintf("RBAC: allowed by ClusterRoleBinding %q of %s %q to %s", name, ref.Kind, ref.Name, describeSubject(&subjects[i], ""))
		} else {
			b.reasons[i] = fmt.Sprintf("RBAC: allowed by RoleBinding %q of %s %q to %s", name+"/"+ns, ref.Kind, ref.Name, describeSubject(&subjects[i], ns))
		}
	}
	return b
}

func describeSubject(s *rbacv1.Subject, bindingNS string) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		ns := s.Namespace
		if ns == "" {
			ns = bindingNS
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}

// keyOf is the index key of a subject of a binding in bindingNS ("" for a
// cluster binding); ok is false for a subject that matches nobody.
func keyOf(s *rbacv1.Subject, bindingNS string) (subjectKey, bool) {
	switch s.Kind {
	case rbacv1.UserKind:
		return subjectKey{kind: 'U', name: s.Name}, true
	case rbacv1.GroupKind:
		return subjectKey{kind: 'G', name: s.Name}, true
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = bindingNS
		}
		if ns == "" {
			return subjectKey{}, false
		}
		return subjectKey{kind: 'S', ns: ns, name: s.Name}, true
	}
	return subjectKey{}, false
}

// index adds b under each of its subjects' keys (once per key). Slices are
// copied on write.
func (x *Index) index(b *binding) {
	for i := range b.subjects {
		k, ok := keyOf(&b.subjects[i], b.ns)
		if !ok || b.hasKeyBefore(k, i) {
			continue
		}
		if b.ns == "" {
			old := x.crbBySubject[k]
			x.crbBySubject[k] = append(old[:len(old):len(old)], b)
		} else {
			nk := nsSubjectKey{b.ns, k}
			old := x.rbBySubject[nk]
			x.rbBySubject[nk] = append(old[:len(old):len(old)], b)
		}
	}
}

// hasKeyBefore reports whether a subject before i has key k.
func (b *binding) hasKeyBefore(k subjectKey, i int) bool {
	for j := 0; j < i; j++ {
		if kj, ok := keyOf(&b.subjects[j], b.ns); ok && kj == k {
			return true
		}
	}
	return false
}

func (x *Index) unindex(b *binding) {
	for i := range b.subjects {
		k, ok := keyOf(&b.subjects[i], b.ns)
		if !ok {
			continue
		}
		if b.ns == "" {
			if l := without(x.crbBySubject[k], b); len(l) > 0 {
				x.crbBySubject[k] = l
			} else {
				delete(x.crbBySubject, k)
			}
		} else {
			nk := nsSubjectKey{b.ns, k}
			if l := without(x.rbBySubject[nk], b); len(l) > 0 {
				x.rbBySubject[nk] = l
			} else {
				delete(x.rbBySubject, nk)
			}
		}
	}
}

// without returns a new slice of l without b (l itself if b is absent).
func without(l []*binding, b *binding) []*binding {
	for i, e := range l {
		if e == b {
			out := make([]*binding, 0, len(l)-1)
			out = append(out, l[:i]...)
			return append(out, l[i+1:]...)
		}
	}
	return l
}

// roleRules returns the rules a binding in bindingNS refers to. Call with
// x.mu held. Errors read as upstream's listers' NotFound.
func (x *Index) roleRules(ref rbacv1.RoleRef, bindingNS string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		if r := x.roles[nsName{bindingNS, ref.Name}]; r != nil {
			return r.Rules, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: "role"}, ref.Name)
	case "ClusterRole":
		if r := x.clusterRoles[ref.Name]; r != nil {
			return r.Rules, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterrole"}, ref.Name)
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// GetRoleReferenceRules returns the rules of the role a binding in
// bindingNS ("" for a ClusterRoleBinding) refers to.
func (x *Index) GetRoleReferenceRules(ref rbacv1.RoleRef, bindingNS string) ([]rbacv1.PolicyRule, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.roleRules(ref, bindingNS)
}

// serviceAccountOf splits "system:serviceaccount:<ns>:<name>".
func serviceAccountOf(username string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(username, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	ns, name, ok = strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return ns, name, true
}
