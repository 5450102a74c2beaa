package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// An empty name must not turn a one-object request into a collection
// request: Delete("") would otherwise be a DeleteCollection, and Get("")
// would decode the list into an empty object without error.
func TestEmptyNameIsRefused(t *testing.T) {
	var requests int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt32(&requests, 1)
		w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`))
	}))
	defer srv.Close()
	c, err := New(&Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	pods := For[*corev1.Pod, *corev1.PodList](c).Namespace("default")
	ctx := context.Background()
	unnamed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}}
	for name, call := range map[string]func() error{
		"Get":          func() error { _, err := pods.Get(ctx, "", metav1.GetOptions{}); return err },
		"Update":       func() error { _, err := pods.Update(ctx, unnamed, metav1.UpdateOptions{}); return err },
		"UpdateStatus": func() error { _, err := pods.UpdateStatus(ctx, unnamed, metav1.UpdateOptions{}); return err },
		"Patch": func() error {
			_, err := pods.Patch(ctx, "", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
			return err
		},
		"Delete":      func() error { return pods.Delete(ctx, "", metav1.DeleteOptions{}) },
		"Subresource": func() error { return pods.Subresource(ctx, "", "eviction", struct{}{}, nil) },
	} {
		if err := call(); err == nil || err.Error() != "resource name may not be empty" {
			t.Errorf("%s with an empty name: err = %v", name, err)
		}
	}
	if n := atomic.LoadInt32(&requests); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
}
