package events

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
)

// DefaultEvent applies events.k8s.io/v1 defaults: none upstream.
func DefaultEvent(event *eventsv1.Event) {}

// DefaultCoreEvent applies core/v1 Event defaults: none upstream. (Event
// recorders fill count, timestamps and source themselves.)
func DefaultCoreEvent(event *corev1.Event) {}
