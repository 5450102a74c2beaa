package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// TestProtobufGetListAndWatch checks the protobuf encodings client-go uses
// with ContentType application/vnd.kubernetes.protobuf: objects and lists
// carry the k8s\x00 envelope, and watch streams are length-delimited
// WatchEvent frames.
func TestProtobufGetListAndWatch(t *testing.T) {
	env := testenv.StartT(t)
	c := env.HTTPClient()
	scheme := apiserver.NewScheme()
	pb := protobuf.NewSerializer(scheme, scheme)

	req, _ := http.NewRequest("GET", env.URL+"/api/v1/namespaces/default", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.HasPrefix(body, []byte("k8s\x00")) || resp.Header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" {
		t.Fatalf("get: content type %q, body %q", resp.Header.Get("Content-Type"), body[:min(len(body), 20)])
	}
	ns := &corev1.Namespace{}
	if _, _, err := pb.Decode(body, nil, ns); err != nil || ns.Name != "default" {
		t.Fatalf("decoding namespace: %v %v", err, ns.Name)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, "GET", env.URL+"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf;stream=watch")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf") {
		t.Fatalf("watch content type %q", resp.Header.Get("Content-Type"))
	}
	create, err := c.Post(env.URL+"/api/v1/namespaces/default/configmaps", "application/json",
		strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pb"}}`))
	if err != nil {
		t.Fatal(err)
	}
	create.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			t.Fatalf("reading frame: %v", err)
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, frame); err != nil {
			t.Fatal(err)
		}
		// The frame is a bare WatchEvent (client-go decodes it raw).
		ev := &metav1.WatchEvent{}
		if err := ev.Unmarshal(frame); err != nil {
			t.Fatalf("decoding event: %v", err)
		}
		cm := &corev1.ConfigMap{}
		if _, _, err := pb.Decode(ev.Object.Raw, nil, cm); err != nil {
			t.Fatalf("decoding object: %v", err)
		}
		if ev.Type == "ADDED" && cm.Name == "pb" {
			return
		}
	}
}
