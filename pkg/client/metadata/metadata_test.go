package metadata

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

var configmaps = client.Resource{Version: "v1", Resource: "configmaps", Namespaced: true}

func setup(t *testing.T, contentType string) (*client.Client, *Client) {
	t.Helper()
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1, ContentType: contentType})
	if err != nil {
		t.Fatal(err)
	}
	return c, New(c)
}

func TestMetadataClient(t *testing.T) {
	for _, ct := range []string{"", client.ContentTypeProtobuf} {
		t.Run("client="+ct, func(t *testing.T) {
			c, m := setup(t, ct)
			ctx := context.Background()
			cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
			owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dep", Labels: map[string]string{"a": "b"},
				OwnerReferences: []metav1.OwnerReference{ref}, Finalizers: []string{"example.com/x"}}, Data: map[string]string{"big": "data"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			rc := m.Resource(configmaps).Namespace("default")
			got, err := rc.Get(ctx, "dep", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != "PartialObjectMetadata" || got.APIVersion != "meta.k8s.io/v1" || len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != owner.UID || got.Labels["a"] != "b" {
				t.Fatalf("get: %+v", got)
			}
			if _, err := rc.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("get missing: %v", err)
			}
			list, err := rc.List(ctx, metav1.ListOptions{LabelSelector: "a=b"})
			if err != nil || len(list.Items) != 1 || list.Items[0].Name != "dep" || list.ResourceVersion == "" {
				t.Fatalf("list: %v %+v", err, list)
			}
			w, err := rc.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if err := rc.Delete(ctx, "dep", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			// The finalizer holds it: a deletion timestamp, then patch it away.
			got, err = rc.Patch(ctx, "dep", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			if err != nil || got.DeletionTimestamp == nil {
				t.Fatalf("patch: %v %+v", err, got)
			}
			var types_ []watch.EventType
			timeout := time.After(30 * time.Second)
			for len(types_) < 2 {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						t.Fatal("watch closed")
					}
					p, isMeta := ev.Object.(*metav1.PartialObjectMetadata)
					if !isMeta || p.Name != "dep" {
						t.Fatalf("event %v %T", ev.Type, ev.Object)
					}
					types_ = append(types_, ev.Type)
				case <-timeout:
					t.Fatalf("events so far %v", types_)
				}
			}
			if types_[0] != watch.Modified {
				t.Fatalf("events %v", types_)
			}
			if err := rc.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if l, _ := rc.List(ctx, metav1.ListOptions{}); len(l.Items) != 1 { // kube-root-ca.crt may or may not exist
				if len(l.Items) > 1 {
					t.Fatalf("after deletecollection: %d left", len(l.Items))
				}
			}
		})
	}
}

func TestMetadataInformerFactory(t *testing.T) {
	c, _ := setup(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := NewSharedInformerFactory(c, 0)
	inf := f.ForResource(configmaps)
	if f.ForResource(configmaps) != inf {
		t.Fatal("two informers for one resource")
	}
	added := make(chan string, 10)
	inf.Informer().AddEventHandler(cacheHandler(added))
	f.Start(ctx)
	synced := f.WaitForCacheSync(ctx)
	if !synced[configmaps.GroupVersionResource()] {
		t.Fatal("not synced")
	}
	cms := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case n := <-added:
			if n != "x" {
				continue
			}
			got, err := inf.Lister().Namespace("default").Get("x")
			if err != nil || got.Kind != "PartialObjectMetadata" {
				t.Fatalf("lister: %v %+v", err, got)
			}
			cancel()
			f.Shutdown()
			return
		case <-deadline:
			t.Fatal("no add event")
		}
	}
}
