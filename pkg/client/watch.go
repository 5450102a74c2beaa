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

	"google.golang.org/protobuf/encoding/protowire"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// One frame buffer for the stream: receive decodes each event before
	// reading the next, and decoding copies what it keeps.
	var frame []byte
	w.next = func() (watch.EventType, []byte, error) {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return "", nil, err
		}
		n := int(binary.BigEndian.Uint32(size[:]))
		if cap(frame) < n {
			frame = make([]byte, n)
		}
		frame = frame[:n]
		if _, err := io.ReadFull(r, frame); err != nil {
			return "", nil, err
		}
		return parseWatchEvent(frame) // a bare message, no envelope
	}
	w.decodeObj = func(raw []byte, into runtime.Object) error {
		if u, ok := into.(protoUnmarshaler); ok {
			if gvk, data, ok := parseEnvelope(raw); ok {
				// What pb.Decode does for a typed object, without its two
				// copies of the object's bytes.
				u.Reset()
				if err := u.Unmarshal(data); err != nil {
					return err
				}
				into.GetObjectKind().SetGroupVersionKind(gvk)
				return nil
			}
		}
		_, _, err := pb.Decode(raw, nil, into)
		return err
	}
	go w.receive()
	return w
}

type protoUnmarshaler interface {
	Reset()
	Unmarshal([]byte) error
}

// parseWatchEvent reads a metav1.WatchEvent message (1: type; 2: object,
// a RawExtension whose field 1 is the raw object) without copying the
// object's bytes out of b.
func parseWatchEvent(b []byte) (watch.EventType, []byte, error) {
	var typ watch.EventType
	var raw []byte
	err := protoFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			typ = eventType(v)
		case 2:
			return protoFields(v, func(num protowire.Number, v []byte) error {
				if num == 1 {
					raw = v
				}
				return nil
			})
		}
		return nil
	})
	return typ, raw, err
}

// eventType converts without allocating for the known types.
func eventType(v []byte) watch.EventType {
	for _, t := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
		if string(v) == string(t) {
			return t
		}
	}
	return watch.EventType(v)
}

// parseEnvelope reads the "k8s\x00" + runtime.Unknown envelope of a
// protobuf object (1: TypeMeta {1: apiVersion, 2: kind}; 2: raw; 3:
// contentEncoding; 4: contentType). ok is false for anything but a plain
// envelope with a full kind, which the serializer then handles.
func parseEnvelope(b []byte) (gvk schema.GroupVersionKind, raw []byte, ok bool) {
	if len(b) < len(protobufMagic) || string(b[:len(protobufMagic)]) != string(protobufMagic) {
		return gvk, nil, false
	}
	var apiVersion, kind string
	plain := true
	err := protoFields(b[len(protobufMagic):], func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			return protoFields(v, func(num protowire.Number, v []byte) error {
				switch num {
				case 1:
					apiVersion = string(v)
				case 2:
					kind = string(v)
				}
				return nil
			})
		case 2:
			raw = v
		case 3, 4:
			plain = plain && len(v) == 0
		}
		return nil
	})
	if err != nil || !plain || kind == "" || apiVersion == "" {
		return gvk, nil, false
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return gvk, nil, false
	}
	return gv.WithKind(kind), raw, true
}

// protoFields calls fn with the value of every length-delimited field of
// a protobuf message (other wire types are skipped).
func protoFields(b []byte, fn func(num protowire.Number, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
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
