package client

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/scheme"
)

// The protobuf watch frames are read without copying the object's bytes;
// the result must be what the serializer decodes, and anything but a
// plain envelope falls back to it.
func TestProtobufWatchFrames(t *testing.T) {
	sch := scheme.New()
	pb := protobuf.NewSerializer(sch, sch)
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	var env bytes.Buffer
	if err := pb.Encode(pod, &env); err != nil {
		t.Fatal(err)
	}
	frame, err := (&metav1.WatchEvent{Type: "MODIFIED", Object: runtime.RawExtension{Raw: env.Bytes()}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	typ, raw, err := parseWatchEvent(frame)
	if err != nil || typ != watch.Modified || !bytes.Equal(raw, env.Bytes()) {
		t.Fatalf("parseWatchEvent: %q %v (raw equal: %v)", typ, err, bytes.Equal(raw, env.Bytes()))
	}
	gvk, data, ok := parseEnvelope(raw)
	if !ok || gvk != (schema.GroupVersionKind{Version: "v1", Kind: "Pod"}) {
		t.Fatalf("parseEnvelope: %v %v", gvk, ok)
	}
	var fast corev1.Pod
	if err := fast.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	fast.SetGroupVersionKind(gvk)
	var slow corev1.Pod
	if _, _, err := pb.Decode(raw, nil, &slow); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(&fast, &slow) || fast.Kind != "Pod" {
		t.Errorf("fast decode differs:\n%+v\n%+v", fast, slow)
	}
	// Decoding must not keep the frame's memory: overwrite it.
	for i := range frame {
		frame[i] = 0
	}
	if fast.Name != "p" || fast.Labels["a"] != "b" || fast.Spec.Containers[0].Image != "nginx" {
		t.Errorf("decoded pod aliases the frame: %+v", fast)
	}

	unknown := func(u runtime.Unknown) []byte {
		b, err := u.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return append(append([]byte(nil), protobufMagic...), b...)
	}
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"no magic", []byte("{}")},
		{"no kind", unknown(runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1"}, Raw: data})},
		{"no version", unknown(runtime.Unknown{TypeMeta: runtime.TypeMeta{Kind: "Pod"}, Raw: data})},
		{"content type", unknown(runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "Pod"}, Raw: data, ContentType: "application/json"})},
		{"truncated", raw[:len(raw)-3]},
	} {
		if _, _, ok := parseEnvelope(tc.raw); ok {
			t.Errorf("%s: parsed as a plain envelope", tc.name)
		}
	}
	if _, _, err := parseWatchEvent(frame[:len(frame)-1]); err == nil {
		t.Error("a truncated frame parses")
	}
}
