package record

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFakeRecorder(t *testing.T) {
	f := NewFakeRecorder(3)
	f.IncludeObject = true
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}}
	f.Event(pod, corev1.EventTypeNormal, "Created", "100%")
	f.Eventf(pod, corev1.EventTypeWarning, "Failed", "exit %d", 1)
	f.AnnotatedEventf(pod, map[string]string{"k": "v"}, corev1.EventTypeNormal, "A", "m")
	for _, want := range []string{
		"Normal Created 100% involvedObject{kind=Pod,apiVersion=v1}",
		"Warning Failed exit 1 involvedObject{kind=Pod,apiVersion=v1}",
		"Normal A m involvedObject{kind=Pod,apiVersion=v1} map[k:v]",
	} {
		if got := <-f.Events; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	(&FakeRecorder{}).Event(pod, corev1.EventTypeNormal, "R", "dropped without a channel")
}
