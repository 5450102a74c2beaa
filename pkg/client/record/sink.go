package record

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
)

// ClientSink writes events through the core/v1 Events API.
type ClientSink struct {
	Events *client.Typed[*corev1.Event, *corev1.EventList]
	// Namespace, if set, is the only namespace events may be written to
	// (client-go's EventSinkImpl over Events(ns)).
	Namespace string
}

// NewClientSink returns a sink writing events to any namespace through c.
func NewClientSink(c *client.Client) *ClientSink {
	return &ClientSink{Events: client.For[*corev1.Event, *corev1.EventList](c)}
}

func (s *ClientSink) events(e *corev1.Event) (*client.Typed[*corev1.Event, *corev1.EventList], error) {
	if s.Namespace != "" && e.Namespace != s.Namespace {
		return nil, fmt.Errorf("can't write an event with namespace %q in namespace %q", e.Namespace, s.Namespace)
	}
	return s.Events.Namespace(e.Namespace), nil
}

// Create creates the event.
func (s *ClientSink) Create(ctx context.Context, e *corev1.Event) (*corev1.Event, error) {
	c, err := s.events(e)
	if err != nil {
		return nil, err
	}
	return c.Create(ctx, e, metav1.CreateOptions{})
}

// Update replaces the event.
func (s *ClientSink) Update(ctx context.Context, e *corev1.Event) (*corev1.Event, error) {
	c, err := s.events(e)
	if err != nil {
		return nil, err
	}
	return c.Update(ctx, e, metav1.UpdateOptions{})
}

// Patch applies a strategic merge patch to the existing event.
func (s *ClientSink) Patch(ctx context.Context, old *corev1.Event, data []byte) (*corev1.Event, error) {
	c, err := s.events(old)
	if err != nil {
		return nil, err
	}
	return c.Patch(ctx, old.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
}
