package compat

// client-go's event broadcaster against skiff, and skiff's recorder
// producing the same Events.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	skiffrecord "github.com/skiff-sh/skiff/pkg/client/record"
)

// recorderFunc records one event about obj.
type recorderFunc func(obj runtime.Object, eventtype, reason, message string)

// eventShape is what is compared between the libraries: an Event with
// the involved object's identity and the event's name made relative.
type eventShape struct {
	InvolvedKind, InvolvedAPIVersion, InvolvedFieldPath  string
	InvolvedNamespaceOK, InvolvedUIDOK, InvolvedRVOK     bool
	NameOK                                               bool // "<object name>.<hex>"
	Namespace                                            string
	Reason, Message, Type                                string
	Count                                                int32
	Source                                               corev1.EventSource
	ReportingController, ReportingInstance, Action       string
	FirstSet, LastSet, LastNotBeforeFirst, EventTimeZero bool
	SeriesNil, RelatedNil                                bool
}

func shapeOf(e *corev1.Event, obj *corev1.ConfigMap) eventShape {
	io := e.InvolvedObject
	return eventShape{
		InvolvedKind: io.Kind, InvolvedAPIVersion: io.APIVersion, InvolvedFieldPath: io.FieldPath,
		InvolvedNamespaceOK: io.Namespace == obj.Namespace && io.Name == obj.Name,
		InvolvedUIDOK:       io.UID == obj.UID,
		InvolvedRVOK:        io.ResourceVersion == obj.ResourceVersion,
		NameOK:              strings.HasPrefix(e.Name, obj.Name+".") && len(e.Name) > len(obj.Name)+1,
		Namespace:           e.Namespace,
		Reason:              e.Reason, Message: e.Message, Type: e.Type, Count: e.Count,
		Source: e.Source, ReportingController: e.ReportingController, ReportingInstance: e.ReportingInstance, Action: e.Action,
		FirstSet: !e.FirstTimestamp.IsZero(), LastSet: !e.LastTimestamp.IsZero(),
		LastNotBeforeFirst: !e.LastTimestamp.Before(&e.FirstTimestamp),
		EventTimeZero:      e.EventTime.IsZero(),
		SeriesNil:          e.Series == nil, RelatedNil: e.Related == nil,
	}
}

// eventsFor lists the Events about the config map name in ns.
func eventsFor(t testing.TB, cs kubernetes.Interface, ns, name string) []corev1.Event {
	t.Helper()
	list, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": name, "involvedObject.kind": "ConfigMap"}.String(),
	})
	must(t, err, "list events")
	return list.Items
}

// TestEventRecordersMatch: client-go's broadcaster writes repeated events
// to skiff as one Event with a count, and combines more than 10 similar
// events; skiff's recorder does the same, field for field.
func TestEventRecordersMatch(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	sc := skiffClient(t, env)
	ctx := context.Background()
	ns := createNamespace(t, cs, "events")
	source := corev1.EventSource{Component: "compat-controller", Host: "node-1"}

	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cgb := record.NewBroadcaster(record.WithContext(bctx))
	defer cgb.Shutdown()
	cgb.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	cgr := cgb.NewRecorder(scheme.Scheme, source)

	skb := skiffrecord.NewBroadcaster(skiffrecord.WithContext(bctx))
	defer skb.Shutdown()
	skb.StartRecordingToSink(skiffrecord.NewClientSink(sc))
	skr := skb.NewRecorder(source)

	libs := []struct {
		name   string
		record recorderFunc
	}{
		{"client-go", cgr.Event},
		{"skiff", skr.Event},
	}

	const repeats = 5
	const similar = 12 // > 10 distinct messages with one reason: aggregation
	dedup := map[string]eventShape{}
	combined := map[string][]string{}
	for _, lib := range libs {
		objDedup, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap(ns, "dedup-"+lib.name, nil, nil), metav1.CreateOptions{})
		must(t, err, "create")
		objAgg, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap(ns, "agg-"+lib.name, nil, nil), metav1.CreateOptions{})
		must(t, err, "create")

		for range repeats {
			lib.record(objDedup, corev1.EventTypeWarning, "SyncFailed", "could not sync: boom")
		}
		var evs []corev1.Event
		eventually(t, lib.name+": one deduplicated event with count 5", func() bool {
			evs = eventsFor(t, cs, ns, objDedup.Name)
			return len(evs) == 1 && evs[0].Count == repeats
		})
		// A sentinel event after the repeats: the sink writes events in
		// order, so once it is stored no repeat is still on its way.
		lib.record(objDedup, corev1.EventTypeNormal, "Sentinel", "after the repeats")
		eventually(t, lib.name+": the sentinel event", func() bool {
			evs = eventsFor(t, cs, ns, objDedup.Name)
			return slices.ContainsFunc(evs, func(e corev1.Event) bool { return e.Reason == "Sentinel" })
		})
		evs = slices.DeleteFunc(evs, func(e corev1.Event) bool { return e.Reason == "Sentinel" })
		if len(evs) != 1 || evs[0].Count != repeats {
			t.Errorf("%s: %d events after settling, want 1 with count %d", lib.name, len(evs), repeats)
		}
		dedup[lib.name] = shapeOf(&evs[0], objDedup)

		for i := range similar {
			lib.record(objAgg, corev1.EventTypeNormal, "Progressing", fmt.Sprintf("step %d of the rollout", i))
		}
		// 9 individual events, then the 10th distinct message starts the
		// combined event, which the 11th and 12th raise to count 3.
		eventually(t, lib.name+": the combined event", func() bool {
			evs = eventsFor(t, cs, ns, objAgg.Name)
			for _, e := range evs {
				if strings.HasPrefix(e.Message, "(combined from similar events)") && e.Count == similar-9 {
					return len(evs) == 10
				}
			}
			return false
		})
		for _, e := range evs {
			combined[lib.name] = append(combined[lib.name], fmt.Sprintf("count=%d %s", e.Count, e.Message))
		}
		slices.Sort(combined[lib.name])
	}

	t.Logf("event shape: %+v", dedup["client-go"])
	t.Logf("aggregated: %v", combined["client-go"])
	want := dedup["client-go"]
	if !want.InvolvedNamespaceOK || !want.InvolvedUIDOK || !want.NameOK || want.Count != repeats || want.InvolvedKind != "ConfigMap" {
		t.Errorf("client-go's event against skiff looks wrong: %+v", want)
	}
	if got := dedup["skiff"]; got != want {
		t.Errorf("deduplicated event shapes differ:\n  client-go %+v\n  skiff     %+v", want, got)
	}
	if !slices.Equal(combined["skiff"], combined["client-go"]) {
		t.Errorf("aggregated events differ:\n  client-go %v\n  skiff     %v", combined["client-go"], combined["skiff"])
	}
	if c := combined["client-go"]; len(c) != 10 || !slices.Contains(c, "count=3 (combined from similar events): step 11 of the rollout") {
		t.Errorf("client-go's aggregated events: %v", c)
	}
}
