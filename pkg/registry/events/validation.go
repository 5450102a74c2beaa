package events

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Length limits for "new-style" events (those with eventTime set).
const (
	ReportingInstanceLengthLimit = 128
	ActionLengthLimit            = 128
	ReasonLengthLimit            = 128
	NoteLengthLimit              = 1024
)

// How strictly an Event is validated depends on the API it is written
// through, as upstream:
//
//   - core/v1 keeps its old, lenient rules for compatibility (ValidateCoreEvent):
//     the namespace must match involvedObject's, and only events with
//     eventTime set must carry reportingController, action, reason, ...
//   - events.k8s.io/v1 adds strict rules (ValidateEvent): eventTime is
//     required, the deprecated fields must stay unset, metadata is checked
//     and most fields are immutable on update.
//
// Both validate the shared core/v1 form, so error paths use core/v1 field
// names (message, involvedObject, ...) in both APIs, as upstream; only
// reportingController is named after the API used.

// ValidateCoreEvent validates an Event created through core/v1. Upstream's
// event validation does not check metadata for core/v1; the generic registry
// does, with the lenient path-segment name rule, which we include here.
func ValidateCoreEvent(event *corev1.Event) field.ErrorList {
	allErrs := legacyValidateEvent(event, "reportingComponent")
	return append(allErrs, apimachineryvalidation.ValidateObjectMeta(&event.ObjectMeta, true, pathSegmentName, field.NewPath("metadata"))...)
}

// ValidateCoreEventUpdate validates an update through core/v1: the same
// lenient checks; nothing but metadata is immutable there.
func ValidateCoreEventUpdate(event, old *corev1.Event) field.ErrorList {
	allErrs := legacyValidateEvent(event, "reportingComponent")
	return append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&event.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

// ValidateEvent validates an Event created through events.k8s.io/v1.
func ValidateEvent(event *eventsv1.Event) field.ErrorList {
	core := ToCore(event)
	allErrs := legacyValidateEvent(core, "reportingController")
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMeta(&core.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	allErrs = append(allErrs, validateSeries(core)...)
	if core.EventTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("eventTime"), ""))
	}
	if core.Type != corev1.EventTypeNormal && core.Type != corev1.EventTypeWarning {
		allErrs = append(allErrs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", core.Type)))
	}
	// The old client-side aggregation fields are replaced by series.
	if !core.FirstTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !core.LastTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if core.Count != 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if core.Source.Component != "" || core.Source.Host != "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return allErrs
}

// ValidateEventUpdate validates an update through events.k8s.io/v1. Only
// series (and metadata such as labels) may change: an event is a record of
// something that happened; repeats are counted in series.
func ValidateEventUpdate(event, old *eventsv1.Event) field.ErrorList {
	core, oldCore := ToCore(event), ToCore(old)
	allErrs := legacyValidateEvent(core, "reportingController")
	allErrs = append(allErrs, apimachineryvalidation.ValidateObjectMetaUpdate(&core.ObjectMeta, &oldCore.ObjectMeta, field.NewPath("metadata"))...)
	if !reflect.DeepEqual(core.Series, oldCore.Series) {
		allErrs = append(allErrs, validateSeries(core)...)
	}
	immutable := func(newVal, oldVal any, name string) {
		allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(newVal, oldVal, field.NewPath(name))...)
	}
	immutable(core.InvolvedObject, oldCore.InvolvedObject, "involvedObject")
	immutable(core.Reason, oldCore.Reason, "reason")
	immutable(core.Message, oldCore.Message, "message")
	immutable(core.Source, oldCore.Source, "source")
	immutable(core.FirstTimestamp, oldCore.FirstTimestamp, "firstTimestamp")
	immutable(core.LastTimestamp, oldCore.LastTimestamp, "lastTimestamp")
	immutable(core.Count, oldCore.Count, "count")
	immutable(core.Type, oldCore.Type, "type")
	immutable(core.EventTime, oldCore.EventTime, "eventTime")
	immutable(core.Action, oldCore.Action, "action")
	immutable(core.Related, oldCore.Related, "related")
	immutable(core.ReportingController, oldCore.ReportingController, "reportingController")
	immutable(core.ReportingInstance, oldCore.ReportingInstance, "reportingInstance")
	return allErrs
}

func validateSeries(event *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	if event.Series != nil {
		if event.Series.Count < 2 {
			allErrs = append(allErrs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
		}
		if event.Series.LastObservedTime.IsZero() {
			allErrs = append(allErrs, field.Required(field.NewPath("series.lastObservedTime"), ""))
		}
	}
	return allErrs
}

// legacyValidateEvent holds the checks every event passes, whichever API it
// is written through. reportingControllerField is the name the error path
// uses: "reportingComponent" in core/v1, "reportingController" in
// events.k8s.io/v1.
func legacyValidateEvent(event *corev1.Event, reportingControllerField string) field.ErrorList {
	var allErrs field.ErrorList
	involvedNamespace := field.NewPath("involvedObject", "namespace")

	if event.EventTime.IsZero() {
		// An old-style event. It lives in its object's namespace; events about
		// cluster-scoped objects live in "default" (or nowhere, for very old
		// clients).
		if event.InvolvedObject.Namespace == "" {
			if event.Namespace != metav1.NamespaceNone && event.Namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(involvedNamespace, event.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if event.Namespace != event.InvolvedObject.Namespace {
			allErrs = append(allErrs, field.Invalid(involvedNamespace, event.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		// A new-style event: it must say who reported what.
		if event.InvolvedObject.Namespace == "" && event.Namespace != metav1.NamespaceDefault && event.Namespace != metav1.NamespaceSystem {
			allErrs = append(allErrs, field.Invalid(involvedNamespace, event.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		controllerPath := field.NewPath(reportingControllerField)
		if event.ReportingController == "" {
			allErrs = append(allErrs, field.Required(controllerPath, ""))
		}
		for _, msg := range content.IsQualifiedName(event.ReportingController) {
			allErrs = append(allErrs, field.Invalid(controllerPath, event.ReportingController, msg))
		}
		allErrs = append(allErrs, requiredAndLimited(event.ReportingInstance, ReportingInstanceLengthLimit, "reportingInstance")...)
		allErrs = append(allErrs, requiredAndLimited(event.Action, ActionLengthLimit, "action")...)
		allErrs = append(allErrs, requiredAndLimited(event.Reason, ReasonLengthLimit, "reason")...)
		if len(event.Message) > NoteLengthLimit {
			allErrs = append(allErrs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", NoteLengthLimit)))
		}
	}

	for _, msg := range content.IsDNS1123Subdomain(event.Namespace) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("namespace"), event.Namespace, msg))
	}
	return allErrs
}

func requiredAndLimited(value string, limit int, name string) field.ErrorList {
	var allErrs field.ErrorList
	if value == "" {
		allErrs = append(allErrs, field.Required(field.NewPath(name), ""))
	}
	if len(value) > limit {
		allErrs = append(allErrs, field.Invalid(field.NewPath(name), "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return allErrs
}
