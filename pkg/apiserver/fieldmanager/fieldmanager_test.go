package fieldmanager_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/skiff-sh/skiff/pkg/apiserver/fieldmanager"
	"github.com/skiff-sh/skiff/pkg/apiserver/openapi"
)

func TestManagerName(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct{ fieldManager, userAgent, want string }{
		{"kubectl-client-side-apply", "kubectl/v1.34.1 (linux/amd64) kubernetes/abc", "kubectl-client-side-apply"},
		{"", "kubectl/v1.34.1 (linux/amd64) kubernetes/abc", "kubectl"},
		{"", "kube-controller-manager/v1.34.1 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:deployment-controller", "kube-controller-manager"},
		{"", "Go-http-client/1.1", "Go-http-client"},
		{"", "no-slash", "no-slash"},
		{"", "tab\there/1", "tabhere"},
		{"", long + "/1", long[:fieldmanager.MaxManagerLength]},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := fieldmanager.ManagerName(tt.fieldManager, tt.userAgent); got != tt.want {
			t.Errorf("ManagerName(%q, %q) = %q, want %q", tt.fieldManager, tt.userAgent, got, tt.want)
		}
	}
}

func TestDecodeApply(t *testing.T) {
	tests := []struct {
		name, body string
		wantErr    bool
		wantName   string
	}{
		{name: "yaml", body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", wantName: "a"},
		{name: "json", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`, wantName: "b"},
		{name: "not an object", body: "- a\n- b\n", wantErr: true},
		{name: "garbage", body: "{", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := fieldmanager.DecodeApply([]byte(tt.body))
			if tt.wantErr {
				if !apierrors.IsBadRequest(err) {
					t.Fatalf("err %v, want a BadRequest", err)
				}
				return
			}
			if err != nil || u.GetName() != tt.wantName {
				t.Fatalf("got %v, %v", u, err)
			}
		})
	}
	if err := fieldmanager.StrictApplyErrors([]byte("a: 1\na: 2\n")); err == nil || !strings.Contains(err.Error(), `key "a" already set`) {
		t.Errorf("duplicate key: %v", err)
	}
}

// source is a Source whose generations tests swap.
type source struct{ defs *openapi.Definitions }

func newSource(t *testing.T, crd bool) fieldmanager.Source {
	t.Helper()
	res := []openapi.Resource{{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true,
		Verbs: []string{"get", "patch"}, Object: &corev1.ConfigMap{}}}
	if crd {
		res = append(res, openapi.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true,
			Verbs: []string{"get", "patch"}, Schema: map[string]any{"type": "object", "properties": map[string]any{
				"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{
					"size": map[string]any{"type": "integer"},
					"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "x-kubernetes-list-type": "set"},
				}}}}})
	}
	h, err := openapi.New(openapi.Info{}, res)
	if err != nil {
		t.Fatal(err)
	}
	return h.Definitions()
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	return s
}

var cmKind = fieldmanager.Kind{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Hub: schema.GroupVersion{Version: "v1"}}

func TestManagersUpdateAndApply(t *testing.T) {
	sc := newScheme()
	src := newSource(t, false)
	m := fieldmanager.New(fieldmanager.Config{Source: func() fieldmanager.Source { return src }, Convertor: sc, Creater: sc})
	fm, err := m.For(cmKind)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := m.For(cmKind); again != fm {
		t.Error("a second For of the same kind built a new manager")
	}
	live := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
	obj := live.DeepCopy()
	obj.Name, obj.Data = "cm", map[string]string{"a": "1"}
	created := fm.UpdateNoErrors(live, obj, "creator").(*corev1.ConfigMap)
	if len(created.ManagedFields) != 1 || created.ManagedFields[0].Manager != "creator" ||
		created.ManagedFields[0].Operation != metav1.ManagedFieldsOperationUpdate ||
		string(created.ManagedFields[0].FieldsV1.Raw) != `{"f:data":{".":{},"f:a":{}}}` {
		t.Fatalf("managedFields %+v", created.ManagedFields)
	}
	applied := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm"}, "data": map[string]any{"a": "2"}}}
	if _, err := fm.Apply(created, applied.DeepCopy(), "applier", false); !apierrors.IsConflict(err) ||
		err.Error() != `Apply failed with 1 conflict: conflict with "creator" using v1: .data.a` {
		t.Fatalf("apply over another manager's field: %v", err)
	}
	out, err := fm.Apply(created, applied, "applier", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.ConfigMap).Data["a"]; got != "2" {
		t.Errorf("forced apply: data.a = %q", got)
	}

	// A new generation of definitions gives new managers.
	src = newSource(t, false)
	if again, _ := m.For(cmKind); again == fm {
		t.Error("new definitions kept the old manager")
	}
}

func TestManagersCustomResource(t *testing.T) {
	sc := runtime.NewScheme()
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	gadget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}
	sc.AddKnownTypeWithName(widget, &unstructured.Unstructured{})
	sc.AddKnownTypeWithName(gadget, &unstructured.Unstructured{})
	src := newSource(t, true)
	m := fieldmanager.New(fieldmanager.Config{Source: func() fieldmanager.Source { return src }, Convertor: unstructuredConvertor{}, Creater: sc})
	tests := []struct {
		name string
		gvk  schema.GroupVersionKind
		// tags applied by two managers: a set merges, the deduced type replaces.
		wantTags []any
	}{
		{name: "schema: list-type set merges", gvk: widget, wantTags: []any{"a", "b"}},
		{name: "no schema: deduced, lists atomic", gvk: gadget, wantTags: []any{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := m.For(fieldmanager.Kind{GVK: tt.gvk, Hub: tt.gvk.GroupVersion(), CustomResource: true})
			if err != nil {
				t.Fatal(err)
			}
			obj := func(tag string) *unstructured.Unstructured {
				return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": tt.gvk.Kind,
					"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"tags": []any{tag}, "unknown": tag}}}
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(tt.gvk)
			out, err := fm.Apply(live, obj("a"), "one", false)
			if err != nil {
				t.Fatal(err)
			}
			out, err = fm.Apply(out, obj("b"), "two", true)
			if err != nil {
				t.Fatal(err)
			}
			tags, _, _ := unstructured.NestedSlice(out.(*unstructured.Unstructured).Object, "spec", "tags")
			if len(tags) != len(tt.wantTags) {
				t.Errorf("tags %v, want %v", tags, tt.wantTags)
			}
			if u, _, _ := unstructured.NestedString(out.(*unstructured.Unstructured).Object, "spec", "unknown"); u != "b" {
				t.Errorf("a field kept by x-kubernetes-preserve-unknown-fields (or deduced) was lost: %q", u)
			}
		})
	}
}

// unstructuredConvertor serves custom resources: one version, unstructured.
type unstructuredConvertor struct{ runtime.ObjectConvertor }

func (unstructuredConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

type badSource struct{}

func (badSource) Schemas() (map[string]*spec.Schema, error) { return nil, errors.New("no definitions") }

// TestManagersKeepLastGoodTypes: definitions that do not build keep the
// previous generation's types rather than losing field management.
func TestManagersKeepLastGoodTypes(t *testing.T) {
	sc := newScheme()
	var src fieldmanager.Source = badSource{}
	m := fieldmanager.New(fieldmanager.Config{Source: func() fieldmanager.Source { return src }, Convertor: sc, Creater: sc})
	if _, err := m.For(cmKind); err == nil {
		t.Fatal("no definitions ever built, yet a manager")
	}
	src = newSource(t, false)
	if _, err := m.For(cmKind); err != nil {
		t.Fatal(err)
	}
	src = badSource{}
	fm, err := m.For(cmKind)
	if err != nil {
		t.Fatalf("after a bad generation: %v", err)
	}
	live := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
	obj := live.DeepCopy()
	obj.Data = map[string]string{"a": "1"}
	if out := fm.UpdateNoErrors(live, obj, "m").(*corev1.ConfigMap); len(out.ManagedFields) != 1 {
		t.Errorf("managedFields %+v", out.ManagedFields)
	}
}
