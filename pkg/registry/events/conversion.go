package events

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Events are served by two APIs: the original core/v1 Event and the newer
// events.k8s.io/v1 Event. Both are views of one stored object (kept in core/v1
// form), so `kubectl get events` and `kubectl events` see the same data. The
// newer API renamed fields and marked the old-style aggregation fields
// "deprecated":
//
//	events.k8s.io/v1           core/v1
//	note                       message
//	regarding                  involvedObject
//	reportingController        reportingComponent (Go field ReportingController)
//	deprecatedSource           source
//	deprecatedFirstTimestamp   firstTimestamp
//	deprecatedLastTimestamp    lastTimestamp
//	deprecatedCount            count
//
// The rest (eventTime, series, action, reason, type, related,
// reportingInstance, metadata) have the same names. The conversions are
// lossless in both directions.

// ToCore converts an events.k8s.io/v1 Event to core/v1. The input is not
// modified.
func ToCore(in *eventsv1.Event) *corev1.Event {
	in = in.DeepCopy()
	out := &corev1.Event{
		TypeMeta:            metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:          in.ObjectMeta,
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Action:              in.Action,
		Related:             in.Related,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out
}

// FromCore converts a core/v1 Event to events.k8s.io/v1. The input is not
// modified.
func FromCore(in *corev1.Event) *eventsv1.Event {
	in = in.DeepCopy()
	out := &eventsv1.Event{
		TypeMeta:                 metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta:               in.ObjectMeta,
		EventTime:                in.EventTime,
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Related:                  in.Related,
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out
}

// FieldLabels are the events.k8s.io/v1 field selector keys, as upstream's,
// each mapped to the core/v1 key of the stored Event it selects on.
var FieldLabels = map[string]string{
	"metadata.name":             "metadata.name",
	"metadata.namespace":        "metadata.namespace",
	"reason":                    "reason",
	"type":                      "type",
	"reportingController":       "reportingComponent",
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
}
