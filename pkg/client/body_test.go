package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/scheme"
)

// A protobuf client sends a built-in resource's own objects (create,
// update, status) and built-in subresource bodies (a Binding) as protobuf
// with the kind in the envelope, as client-go does, without touching the
// caller's object; options and patches stay JSON, and a JSON client sends
// JSON.
func TestRequestBodyEncoding(t *testing.T) {
	type seen struct {
		method, path, contentType string
		body                      []byte
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), b})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodDelete {
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
			return
		}
		io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`)
	}))
	defer srv.Close()
	sch := scheme.New()
	pb := protobuf.NewSerializer(sch, sch)
	for _, tc := range []struct {
		contentType string
		wantObject  string // Content-Type of create/update bodies
	}{
		{ContentTypeProtobuf, ContentTypeProtobuf},
		{"", "application/json"},
	} {
		t.Run("client="+tc.contentType, func(t *testing.T) {
			got = nil
			c, err := New(&Config{Host: srv.URL, QPS: -1, ContentType: tc.contentType})
			if err != nil {
				t.Fatal(err)
			}
			pods := For[*corev1.Pod, *corev1.PodList](c).Namespace("ns")
			ctx := context.Background()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}}}
			if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"labels":{"c":"d"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := pods.Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			// A built-in subresource body (the scheduler's Binding) too.
			binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}}, Target: corev1.ObjectReference{Kind: "Node", Name: "n"}}
			if err := pods.Subresource(ctx, "p", "binding", binding, nil); err != nil {
				t.Fatal(err)
			}
			if pod.Kind != "" || pod.APIVersion != "" || binding.Kind != "" {
				t.Errorf("the caller's object was changed: %+v %+v", pod.TypeMeta, binding.TypeMeta)
			}
			want := []string{tc.wantObject, tc.wantObject, tc.wantObject, string(types.MergePatchType), "application/json", tc.wantObject}
			if len(got) != len(want) {
				t.Fatalf("%d requests, want %d", len(got), len(want))
			}
			for i, s := range got {
				if s.contentType != want[i] {
					t.Errorf("%s %s: Content-Type %q, want %q", s.method, s.path, s.contentType, want[i])
				}
				binding := strings.HasSuffix(s.path, "/binding")
				if s.contentType == "application/json" && s.method != http.MethodDelete && !binding && !strings.Contains(string(s.body), `"kind":"Pod","apiVersion":"v1"`) {
					t.Errorf("%s %s: JSON body without the kind: %s", s.method, s.path, s.body)
				}
				if s.contentType != ContentTypeProtobuf {
					continue
				}
				if binding {
					var b corev1.Binding
					obj, gvk, err := pb.Decode(s.body, nil, &b)
					if err != nil || gvk.Kind != "Binding" || obj.(*corev1.Binding).Target.Name != "n" {
						t.Errorf("%s %s: protobuf Binding: %v %v %+v", s.method, s.path, err, gvk, obj)
					}
					continue
				}
				var decoded corev1.Pod
				obj, gvk, err := pb.Decode(s.body, nil, &decoded)
				if err != nil {
					t.Fatalf("%s %s: protobuf body: %v", s.method, s.path, err)
				}
				if gvk.Kind != "Pod" || gvk.Version != "v1" || obj.(*corev1.Pod).Labels["a"] != "b" {
					t.Errorf("%s %s: decoded %v %+v", s.method, s.path, gvk, obj)
				}
			}
		})
	}
}

// foo is a custom resource's Go type, as a controller author writes one.
type foo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas int `json:"replicas"`
	} `json:"spec"`
}

func (f *foo) DeepCopyObject() runtime.Object { c := *f; return &c }

type fooList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []foo `json:"items"`
}

func (f *fooList) DeepCopyObject() runtime.Object { c := *f; return &c }

// A typed client of a custom type sends apiVersion and kind (the API
// server cannot decode a custom resource without them), as client-go's
// generated clients do, without touching the caller's object.
func TestTypedClientSetsKindOfCustomTypes(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	for _, ct := range []string{"", ContentTypeProtobuf} {
		c, err := New(&Config{Host: srv.URL, QPS: -1, ContentType: ct})
		if err != nil {
			t.Fatal(err)
		}
		foos := NewTyped[*foo, *fooList](c, Resource{Group: "samplecontroller.k8s.io", Version: "v1alpha1", Resource: "foos", Namespaced: true}).Namespace("ns")
		f := &foo{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
		f.Spec.Replicas = 2
		got, err := foos.Create(context.Background(), f, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), `"kind":"foo","apiVersion":"samplecontroller.k8s.io/v1alpha1"`) || got.Spec.Replicas != 2 {
			t.Errorf("client %q: body %s", ct, body)
		}
		if f.Kind != "" || f.APIVersion != "" {
			t.Errorf("client %q changed the caller's object: %+v", ct, f.TypeMeta)
		}
	}
}
