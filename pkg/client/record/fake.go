package record

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// FakeRecorder is an EventRecorder for tests of other packages: each event
// becomes a string "<type> <reason> <message>" on Events. It blocks when
// Events is full (size it for the test), and drops events when Events is
// nil, as client-go's.
type FakeRecorder struct {
	Events chan string
	// IncludeObject appends " involvedObject{kind=...,apiVersion=...}".
	IncludeObject bool
}

var _ EventRecorder = (*FakeRecorder)(nil)

// NewFakeRecorder returns a FakeRecorder buffering bufferSize events.
func NewFakeRecorder(bufferSize int) *FakeRecorder {
	return &FakeRecorder{Events: make(chan string, bufferSize)}
}

func (f *FakeRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	f.write(object, nil, eventtype, reason, "%s", message)
}

func (f *FakeRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	f.write(object, nil, eventtype, reason, messageFmt, args...)
}

func (f *FakeRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	f.write(object, annotations, eventtype, reason, messageFmt, args...)
}

func (f *FakeRecorder) write(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	if f.Events == nil {
		return
	}
	s := fmt.Sprintf(eventtype+" "+reason+" "+messageFmt, args...)
	if f.IncludeObject && object != nil {
		gvk := object.GetObjectKind().GroupVersionKind()
		s += fmt.Sprintf(" involvedObject{kind=%s,apiVersion=%s}", gvk.Kind, gvk.GroupVersion())
	}
	if len(annotations) > 0 {
		s += " " + fmt.Sprint(annotations)
	}
	f.Events <- s
}
