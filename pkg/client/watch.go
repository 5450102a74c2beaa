package client

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
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
	// next reads one event: its type and raw object.
	next func() (watch.EventType, []byte, error)
	// decodeObj decodes a raw object.
	decodeObj func(raw []byte, into runtime.Object) error
}

func newStreamWatcher(body io.ReadCloser, cancel context.CancelFunc, newObj func() runtime.Object) *streamWatcher {
	w := &streamWatcher{body: body, cancel: cancel, newObj: newObj, result: make(chan watch.Event), done: make(chan struct{})}
	dec := json.NewDecoder(body)
	w.next = func() (watch.EventType, []byte, error) {
		var ev wireEvent
		err := dec.Decode(&ev)
		return ev.Type, ev.Object, err
	}
	w.decodeObj = func(raw []byte, into runtime.Object) error { return decode(raw, into) }
	go w.receive()
	return w
}

// newProtobufWatcher reads "application/vnd.kubernetes.protobuf;stream=watch":
// 4-byte big-endian length frames, each a protobuf WatchEvent whose object
// is itself protobuf.
func newProtobufWatcher(body io.ReadCloser, cancel context.CancelFunc, newObj func() runtime.Object, pb *protobuf.Serializer) *streamWatcher {
	w := &streamWatcher{body: body, cancel: cancel, newObj: newObj, result: make(chan watch.Event), done: make(chan struct{})}
	r := bufio.NewReader(body)
	w.next = func() (watch.EventType, []byte, error) {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return "", nil, err
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, frame); err != nil {
			return "", nil, err
		}
		ev := &metav1.WatchEvent{}
		if err := ev.Unmarshal(frame); err != nil { // a bare message, no envelope
			return "", nil, err
		}
		return watch.EventType(ev.Type), ev.Object.Raw, nil
	}
	w.decodeObj = func(raw []byte, into runtime.Object) error {
		_, _, err := pb.Decode(raw, nil, into)
		return err
	}
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
	for {
		typ, raw, err := w.next()
		if err != nil {
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
		switch typ {
		case watch.Error:
			st := &metav1.Status{}
			if err := w.decodeObj(raw, st); err != nil {
				st = &apierrors.NewInternalError(err).ErrStatus
			}
			obj = st
		case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
			obj = w.newObj()
			if err := w.decodeObj(raw, obj); err != nil {
				w.send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
				return
			}
		default:
			continue
		}
		if !w.send(watch.Event{Type: typ, Object: obj}) {
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

// NewWatcher decodes a watch stream body of content type contentType
// (JSON lines, or length-framed protobuf decoded with pb) into objects
// made by newObj. cancel is called when the watch stops. It is for
// clients outside this package that stream their own requests (metadata).
func NewWatcher(body io.ReadCloser, contentType string, cancel context.CancelFunc, newObj func() runtime.Object, pb *protobuf.Serializer) watch.Interface {
	if pb != nil && strings.HasPrefix(contentType, ContentTypeProtobuf) {
		return newProtobufWatcher(body, cancel, newObj, pb)
	}
	return newStreamWatcher(body, cancel, newObj)
}
