package cache

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var podsResource = schema.GroupResource{Resource: "pods"}

func podNames(ps []*corev1.Pod) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Namespace + "/" + p.Name
	}
	slices.Sort(out)
	return out
}

func podIndexer(t *testing.T, indexers Indexers) Indexer {
	t.Helper()
	ix := NewIndexer(MetaNamespaceKeyFunc, indexers)
	for _, p := range []*corev1.Pod{
		newPod("a", "web-1", "app", "web"),
		newPod("a", "db-1", "app", "db"),
		newPod("b", "web-1", "app", "web"),
		newPod("b", "other"),
	} {
		if err := ix.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

func TestListerList(t *testing.T) {
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	hasApp, err := labels.Parse("app")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		namespace string // "" means the cluster-wide lister
		selector  labels.Selector
		want      []string
	}{
		{"all", "", labels.Everything(), []string{"a/db-1", "a/web-1", "b/other", "b/web-1"}},
		{"nil selector means everything", "", nil, []string{"a/db-1", "a/web-1", "b/other", "b/web-1"}},
		{"selector across namespaces", "", web, []string{"a/web-1", "b/web-1"}},
		{"nothing", "", labels.Nothing(), []string{}},
		{"namespace a", "a", labels.Everything(), []string{"a/db-1", "a/web-1"}},
		{"namespace b with selector", "b", web, []string{"b/web-1"}},
		{"namespace b existence selector", "b", hasApp, []string{"b/web-1"}},
		{"empty namespace", "zzz", labels.Everything(), []string{}},
	}
	indexers := map[string]Indexers{
		"with namespace index":    {NamespaceIndex: MetaNamespaceIndexFunc},
		"without namespace index": {},
	}
	for ixName, ixrs := range indexers {
		t.Run(ixName, func(t *testing.T) {
			l := NewLister[*corev1.Pod](podIndexer(t, ixrs), podsResource)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					var got []*corev1.Pod
					var err error
					if tc.namespace == "" {
						got, err = l.List(tc.selector)
					} else {
						got, err = l.Namespace(tc.namespace).List(tc.selector)
					}
					if err != nil {
						t.Fatal(err)
					}
					if names := podNames(got); !slices.Equal(names, tc.want) {
						t.Fatalf("got %v, want %v", names, tc.want)
					}
				})
			}
			// NamespaceAll lists everything.
			got, err := l.Namespace(metav1.NamespaceAll).List(labels.Everything())
			if err != nil || len(got) != 4 {
				t.Fatalf("Namespace(\"\").List = %d, %v", len(got), err)
			}
		})
	}
}

func TestListerGet(t *testing.T) {
	l := NewLister[*corev1.Pod](podIndexer(t, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}), podsResource)
	p, err := l.Namespace("b").Get("web-1")
	if err != nil || p.Namespace != "b" || p.Name != "web-1" {
		t.Fatalf("Get = %v, %v", p, err)
	}
	for _, tc := range []struct{ ns, name string }{{"a", "other"}, {"c", "web-1"}} {
		_, err := l.Namespace(tc.ns).Get(tc.name)
		if !apierrors.IsNotFound(err) {
			t.Fatalf("Get(%s/%s) err = %v, want NotFound", tc.ns, tc.name, err)
		}
		status := err.(apierrors.APIStatus).Status()
		if status.Details.Name != tc.name || status.Details.Kind != "pods" {
			t.Fatalf("NotFound details = %+v", status.Details)
		}
	}

	nodes := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	_ = nodes.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	nl := NewLister[*corev1.Node](nodes, schema.GroupResource{Resource: "nodes"})
	if n, err := nl.Get("n1"); err != nil || n.Name != "n1" {
		t.Fatalf("cluster-scoped Get = %v, %v", n, err)
	}
	if _, err := nl.Get("n2"); !apierrors.IsNotFound(err) {
		t.Fatalf("cluster-scoped Get(missing) = %v", err)
	}
	if n, err := nl.Namespace("").Get("n1"); err != nil || n.Name != "n1" {
		t.Fatalf("Namespace(\"\").Get = %v, %v", n, err)
	}
}

func TestListerWrongType(t *testing.T) {
	ix := podIndexer(t, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	l := NewLister[*corev1.Node](ix, schema.GroupResource{Resource: "nodes"})
	if _, err := l.List(labels.Everything()); err == nil {
		t.Fatal("List of wrong type: want error")
	}
	if _, err := l.Namespace("a").Get("web-1"); err == nil || apierrors.IsNotFound(err) {
		t.Fatalf("Get of wrong type: err = %v", err)
	}
}
