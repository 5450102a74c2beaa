package storage

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/scheme"
)

// The stored bytes are what a json.Encoder writes, without its newline
// (HTML characters escaped): stored values written before stay equal, so
// an update that changes nothing is still recognized as such.
func TestJSONCodecEncodesAsAnEncoder(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: map[string]string{"a": "<b>&\u2028"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	c := JSONCodec{Typer: scheme.New()}
	got, err := c.Encode(pod)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(pod); err != nil {
		t.Fatal(err)
	}
	want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if !bytes.Equal(got, want) {
		t.Errorf("Encode = %s\nwant     %s", got, want)
	}
	if !bytes.Contains(got, []byte(`"kind":"Pod","apiVersion":"v1"`)) || !bytes.Contains(got, []byte(`\u003cb\u003e\u0026\u2028`)) {
		t.Errorf("Encode = %s: want the kind and escaped HTML", got)
	}
	var back corev1.Pod
	if err := c.Decode(got, &back); err != nil || back.Annotations["a"] != "<b>&\u2028" {
		t.Errorf("Decode: %v %+v", err, back.Annotations)
	}
}
