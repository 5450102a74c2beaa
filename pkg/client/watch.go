package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
)

// streamWatcher decodes a JSON watch stream ({"type":..,"object":..} per
// line) into watch.Events. The result channel closes when the stream ends,
// breaks or Stop is called; a stream that breaks mid-way ends without an
// error event (the caller re-watches from the last resourceVersion it saw).
type streamWatcher struct {
	body    io.ReadCloser
	cancel  context.CancelFunc
	newObj  func() runtime.Object
	result  chan watch.Event
	done    chan struct{}
	stopped sync.Once
}

func newStreamWatcher(body io.ReadCloser, cancel context.CancelFunc, newObj func() runtime.Object) *streamWatcher {
	w := &streamWatcher{body: body, cancel: cancel, newObj: newObj, result: make(chan watch.Event), done: make(chan struct{})}
	go w.receive()
	return w
}

func (w *streamWatcher) ResultChan() <-chan watch.Event { return w.result }

func (w *streamWatcher) Stop() {
	w.stopped.Do(func() {
		close(w.done)
		w.cancel()
		w.body.Close()
	})
}

type wireEvent struct {
	Type   watch.EventType `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (w *streamWatcher) receive() {
	defer close(w.result)
	defer w.Stop()
	dec := json.NewDecoder(w.body)
	for {
		var ev wireEvent
		if err := dec.Decode(&ev); err != nil {
			// A stream cut mid-way (truncated JSON, reset or closed
			// connection, timeout) ends quietly, as the doc above says and
			// as client-go does; only undecodable data is reported.
			if !errors.Is(err, io.EOF) && !utilnet.IsProbableEOF(err) && !utilnet.IsTimeout(err) && !isClosed(w.done) {
				w.send(watch.Event{Type: watch.Error, Object: &metav1.Status{
					Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError,
					Message: "watch stream broken: " + err.Error(),
				}})
			}
			return
		}
		var obj runtime.Object
		switch ev.Type {
		case watch.Error:
			st := &metav1.Status{}
			if err := decode(ev.Object, st); err != nil {
				st = &apierrors.NewInternalError(err).ErrStatus
			}
			obj = st
		case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
			obj = w.newObj()
			if err := decode(ev.Object, obj); err != nil {
				w.send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
				return
			}
		default:
			continue
		}
		if !w.send(watch.Event{Type: ev.Type, Object: obj}) {
			return
		}
	}
}

func (w *streamWatcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
