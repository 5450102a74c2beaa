package events

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var when = time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)

func newEvent() *eventsv1.Event {
	e := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "web-1.17a", Namespace: "default", ResourceVersion: "1"},
		EventTime:           metav1.NewMicroTime(when),
		ReportingController: "kubernetes.io/kubelet",
		ReportingInstance:   "kubelet-node-1",
		Action:              "Pulling",
		Reason:              "Pulling",
		Regarding:           corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1", UID: "u1", APIVersion: "v1"},
		Note:                "Pulling image nginx",
		Type:                corev1.EventTypeNormal,
	}
	DefaultEvent(e)
	return e
}

func oldStyleCoreEvent() *corev1.Event {
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web-1.17a", Namespace: "default", ResourceVersion: "1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1"},
		Reason:         "Scheduled",
		Message:        "Successfully assigned default/web-1 to node-1",
		Source:         corev1.EventSource{Component: "default-scheduler"},
		FirstTimestamp: metav1.NewTime(when),
		LastTimestamp:  metav1.NewTime(when),
		Count:          1,
		Type:           corev1.EventTypeNormal,
	}
	DefaultCoreEvent(e)
	return e
}

func TestConversionRoundTrip(t *testing.T) {
	related := corev1.ObjectReference{Kind: "Node", Name: "node-1"}
	in := newEvent()
	in.Related = &related
	in.Series = &eventsv1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(when.Add(time.Minute))}
	in.DeprecatedSource = corev1.EventSource{Component: "kubelet", Host: "node-1"}
	in.DeprecatedFirstTimestamp = metav1.NewTime(when)
	in.DeprecatedLastTimestamp = metav1.NewTime(when)
	in.DeprecatedCount = 4
	orig := in.DeepCopy()

	core := ToCore(in)
	if core.Message != in.Note || core.InvolvedObject != in.Regarding || core.ReportingController != in.ReportingController ||
		core.Source != in.DeprecatedSource || core.Count != 4 || core.Series.Count != 3 || *core.Related != related {
		t.Fatalf("ToCore mapped fields wrongly: %+v", core)
	}
	if core.APIVersion != "v1" || core.Kind != "Event" {
		t.Errorf("TypeMeta = %+v", core.TypeMeta)
	}
	core.Related.Name = "changed"
	if in.Related.Name != "node-1" {
		t.Fatal("ToCore shares memory with its input")
	}
	core.Related.Name = "node-1"

	back := FromCore(core)
	if !equality.Semantic.DeepEqual(back.ObjectMeta, orig.ObjectMeta) {
		t.Fatal("metadata differs")
	}
	back.TypeMeta = orig.TypeMeta
	if !equality.Semantic.DeepEqual(back, orig) {
		t.Fatalf("round trip differs:\ngot  %+v\nwant %+v", back, orig)
	}

	c := oldStyleCoreEvent()
	if got := ToCore(FromCore(c)); !equality.Semantic.DeepEqual(got.Source, c.Source) || got.Message != c.Message || got.Count != c.Count {
		t.Fatalf("core round trip differs: %+v", got)
	}
}

func TestValidateEvent(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*eventsv1.Event)
		path   string
		typ    field.ErrorType
	}{
		{"valid", func(*eventsv1.Event) {}, "", ""},
		{"valid series", func(e *eventsv1.Event) {
			e.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(when)}
		}, "", ""},
		{"cluster-scoped object, event in default", func(e *eventsv1.Event) {
			e.Regarding = corev1.ObjectReference{Kind: "Node", Name: "node-1"}
		}, "", ""},
		{"no eventTime", func(e *eventsv1.Event) { e.EventTime = metav1.MicroTime{} }, "eventTime", field.ErrorTypeRequired},
		{"no reportingController", func(e *eventsv1.Event) { e.ReportingController = "" }, "reportingController", field.ErrorTypeRequired},
		{"bad reportingController", func(e *eventsv1.Event) { e.ReportingController = "my controller" }, "reportingController", field.ErrorTypeInvalid},
		{"no reportingInstance", func(e *eventsv1.Event) { e.ReportingInstance = "" }, "reportingInstance", field.ErrorTypeRequired},
		{"long reportingInstance", func(e *eventsv1.Event) { e.ReportingInstance = strings.Repeat("i", 129) }, "reportingInstance", field.ErrorTypeInvalid},
		{"no action", func(e *eventsv1.Event) { e.Action = "" }, "action", field.ErrorTypeRequired},
		{"no reason", func(e *eventsv1.Event) { e.Reason = "" }, "reason", field.ErrorTypeRequired},
		{"long note", func(e *eventsv1.Event) { e.Note = strings.Repeat("n", 1025) }, "message", field.ErrorTypeInvalid},
		{"bad type", func(e *eventsv1.Event) { e.Type = "Error" }, "type", field.ErrorTypeInvalid},
		{"deprecated count", func(e *eventsv1.Event) { e.DeprecatedCount = 2 }, "count", field.ErrorTypeInvalid},
		{"deprecated source", func(e *eventsv1.Event) { e.DeprecatedSource.Component = "x" }, "source", field.ErrorTypeInvalid},
		{"deprecated firstTimestamp", func(e *eventsv1.Event) { e.DeprecatedFirstTimestamp = metav1.NewTime(when) }, "firstTimestamp", field.ErrorTypeInvalid},
		{"series count 1", func(e *eventsv1.Event) {
			e.Series = &eventsv1.EventSeries{Count: 1, LastObservedTime: metav1.NewMicroTime(when)}
		}, "series.count", field.ErrorTypeInvalid},
		{"series without time", func(e *eventsv1.Event) { e.Series = &eventsv1.EventSeries{Count: 2} }, "series.lastObservedTime", field.ErrorTypeRequired},
		{"namespace mismatch", func(e *eventsv1.Event) { e.Regarding.Namespace = ""; e.Namespace = "other" }, "involvedObject.namespace", field.ErrorTypeInvalid},
		{"bad name", func(e *eventsv1.Event) { e.Name = "Web" }, "metadata.name", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEvent()
			tc.mutate(e)
			errs := ValidateEvent(e)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
		})
	}
}

func TestValidateEventUpdate(t *testing.T) {
	old := newEvent()
	e := old.DeepCopy()
	e.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(when.Add(time.Second))}
	e.Labels = map[string]string{"a": "b"}
	if errs := ValidateEventUpdate(e, old); len(errs) != 0 {
		t.Fatalf("series may change, got %v", errs)
	}
	e.Note = "changed"
	e.Reason = "Other"
	errs := ValidateEventUpdate(e, old)
	if !registrytest.FindError(errs, "message", field.ErrorTypeInvalid) || !registrytest.FindError(errs, "reason", field.ErrorTypeInvalid) {
		t.Fatalf("note and reason are immutable, got %v", errs)
	}
}

func TestValidateCoreEvent(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*corev1.Event)
		path   string
		typ    field.ErrorType
	}{
		{"valid old-style", func(*corev1.Event) {}, "", ""},
		{"old-style long message is fine", func(e *corev1.Event) { e.Message = strings.Repeat("m", 2000) }, "", ""},
		{"cluster-scoped object, event in default", func(e *corev1.Event) { e.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "n"} }, "", ""},
		{"upper-case name is fine in core/v1", func(e *corev1.Event) { e.Name = "Web.17a" }, "", ""},
		{"namespace mismatch", func(e *corev1.Event) { e.InvolvedObject.Namespace = "other" }, "involvedObject.namespace", field.ErrorTypeInvalid},
		{"cluster object in another namespace", func(e *corev1.Event) {
			e.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "n"}
			e.Namespace = "kube-system"
		}, "involvedObject.namespace", field.ErrorTypeInvalid},
		{"new-style needs reportingComponent", func(e *corev1.Event) {
			e.EventTime = metav1.NewMicroTime(when)
			e.ReportingInstance, e.Action = "i", "a"
		}, "reportingComponent", field.ErrorTypeRequired},
		{"new-style long message", func(e *corev1.Event) {
			e.EventTime = metav1.NewMicroTime(when)
			e.ReportingController, e.ReportingInstance, e.Action = "kubelet", "i", "a"
			e.Message = strings.Repeat("m", 1025)
		}, "message", field.ErrorTypeInvalid},
		{"no namespace", func(e *corev1.Event) { e.Namespace, e.InvolvedObject.Namespace = "", "" }, "namespace", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := oldStyleCoreEvent()
			tc.mutate(e)
			errs := ValidateCoreEvent(e)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !registrytest.FindError(errs, tc.path, tc.typ) {
				t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
			}
		})
	}

	// core/v1 updates may change anything (old clients bump count and
	// lastTimestamp on the same object).
	old := oldStyleCoreEvent()
	e := old.DeepCopy()
	e.Count = 2
	e.LastTimestamp = metav1.NewTime(when.Add(time.Minute))
	e.Message = "again"
	if errs := ValidateCoreEventUpdate(e, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
}
