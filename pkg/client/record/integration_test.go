package record

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// startAPI starts an API server with namespace "ns" and returns a client.
func startAPI(t *testing.T) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an API server")
	}
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*corev1.Namespace, *corev1.NamespaceList](c).Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// eventsFor lists GET /api/v1/namespaces/ns/events?fieldSelector=involvedObject.name=<name>.
func eventsFor(t *testing.T, c *client.Client, name string) []corev1.Event {
	t.Helper()
	resp, err := c.Do(context.Background(), &client.Request{Method: http.MethodGet, Path: "/api/v1/namespaces/ns/events",
		Query: url.Values{"fieldSelector": {"involvedObject.name=" + name}}})
	if err != nil {
		t.Fatal(err)
	}
	var l corev1.EventList
	if err := json.Unmarshal(resp.Body, &l); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func waitForEvents(t *testing.T, c *client.Client, name string, ok func([]corev1.Event) bool) []corev1.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		items := eventsFor(t, c, name)
		if ok(items) {
			return items
		}
		if time.Now().After(deadline) {
			t.Fatalf("events for %s: %+v", name, items)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestIntegrationRecordToAPIServer(t *testing.T) {
	c := startAPI(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", UID: "x-uid"}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "y", UID: "y-uid"}}

	b := NewBroadcaster(WithLogger(quiet()))
	defer b.Shutdown()
	b.StartRecordingToSink(NewClientSink(c))
	r := b.NewRecorder(corev1.EventSource{Component: "skiff-test", Host: "host-1"})
	for range 3 {
		r.Event(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container")
	}
	r.Event(other, corev1.EventTypeNormal, "Scheduled", "assigned")

	// Three identical events: one Event, created then patched to count 3.
	items := waitForEvents(t, c, "x", func(items []corev1.Event) bool { return len(items) == 1 && items[0].Count == 3 })
	e := items[0]
	if e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.APIVersion != "v1" || e.InvolvedObject.UID != "x-uid" ||
		e.Reason != "BackOff" || e.Type != corev1.EventTypeWarning || e.Message != "Back-off restarting failed container" ||
		e.Source.Component != "skiff-test" || e.Source.Host != "host-1" ||
		e.ReportingController != "skiff-test" || e.ReportingInstance != "host-1" ||
		e.FirstTimestamp.IsZero() || e.LastTimestamp.Before(&e.FirstTimestamp) {
		t.Fatalf("event = %+v", e)
	}
	// The other pod's event is there, and only it matches its selector.
	waitForEvents(t, c, "y", func(items []corev1.Event) bool { return len(items) == 1 && items[0].Reason == "Scheduled" })
}

func TestIntegrationRecreatesDeletedEvent(t *testing.T) {
	c := startAPI(t)
	ctx := context.Background()
	events := client.For[*corev1.Event, *corev1.EventList](c).Namespace("ns")
	_, err := events.Patch(ctx, "no-such-event", types.StrategicMergePatchType, []byte(`{"count":2}`), metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		// Upstream answers a non-apply PATCH of a missing object with 404,
		// also for resources that allow create-on-update (events); the
		// sink relies on that to re-create an event that was deleted.
		t.Fatalf("PATCH of a missing event: %v, want NotFound", err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}}
	b := NewBroadcaster(WithLogger(quiet()))
	defer b.Shutdown()
	b.StartRecordingToSink(NewClientSink(c))
	r := b.NewRecorder(corev1.EventSource{Component: "skiff-test"})
	r.Event(pod, corev1.EventTypeNormal, "R", "m")
	items := waitForEvents(t, c, "x", func(items []corev1.Event) bool { return len(items) == 1 })
	if err := events.Delete(ctx, items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.Event(pod, corev1.EventTypeNormal, "R", "m")
	waitForEvents(t, c, "x", func(items []corev1.Event) bool { return len(items) == 1 && items[0].Count == 2 })
}
