package apiserver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/storage"
)

func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	err := json.NewEncoder(&buf).Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n"), err
}

// chunkWriter buffers writes to the response.
type chunkWriter struct {
	*bufio.Writer
	w http.ResponseWriter
}

func newChunkWriter(w http.ResponseWriter) *chunkWriter {
	return &chunkWriter{Writer: bufio.NewWriterSize(w, 64<<10), w: w}
}

// Flush pushes buffered bytes to the client.
func (c *chunkWriter) Flush() error {
	if err := c.Writer.Flush(); err != nil {
		return err
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// watch streams events as upstream does: one JSON object per line,
// {"type":"ADDED","object":{...}}; a Table watch sends one-row Tables
// (column definitions only in the first).
func (s *Server) watch(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	m, err := negotiate(r.Header.Get("Accept"), true, func(m mediaType) bool {
		switch {
		case m.Type == mediaYAML:
			return false
		case m.Type == mediaProtobuf && m.As != "" && m.As != "PartialObjectMetadata":
			return false // Tables are JSON only, as upstream
		}
		return m.As == "" || m.As == "Table" || m.As == "PartialObjectMetadata"
	})
	if err != nil {
		return err
	}
	q := r.URL.Query()
	o, err := s.parseListOptions(q, e)
	if err != nil {
		return err
	}
	if info.Name != "" {
		// The legacy /watch/<resource>/<name> form watches one object.
		byName := fields.OneTermEqualSelector("metadata.name", info.Name)
		if o.Field != nil {
			byName = fields.AndSelectors(o.Field, byName)
		}
		o.Field = byName
	}
	timeout := time.Duration(float64(s.cfg.MinRequestTimeout) * (1 + s.cfg.Rand.Float64()))
	if t := q.Get("timeoutSeconds"); t != "" {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return apierrors.NewBadRequest("invalid timeoutSeconds " + strconv.Quote(t))
		}
		timeout = time.Duration(n) * time.Second
	}
	ctx := r.Context()
	wi, err := e.store.Watch(ctx, info.Namespace, o)
	if err != nil {
		return err
	}
	defer wi.Stop()
	s.metrics.watchStarted(e)
	defer s.metrics.watchEnded(e)

	if m.Type == mediaProtobuf {
		w.Header().Set("Content-Type", mediaProtobuf+";stream=watch")
	} else {
		w.Header().Set("Content-Type", mediaJSON)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	out := newChunkWriter(w)
	out.Flush()

	timer := s.cfg.Clock.NewTimer(timeout)
	defer timer.Stop()
	headers := true
	ch := wi.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.stopping:
			return nil
		case <-timer.C():
			return nil
		case ev, ok := <-ch:
			if !ok {
				return nil
			}
			if err := s.writeEvent(out, r, e, m, ev, &headers); err != nil {
				return nil
			}
			// Batch what is already queued into one flush.
			if len(ch) == 0 {
				if err := out.Flush(); err != nil {
					return nil
				}
			}
			if ev.Type == watch.Error {
				out.Flush()
				return nil
			}
		}
	}
}

var eventPrefixes = map[watch.EventType][]byte{
	watch.Added:    []byte(`{"type":"ADDED","object":`),
	watch.Modified: []byte(`{"type":"MODIFIED","object":`),
	watch.Deleted:  []byte(`{"type":"DELETED","object":`),
	watch.Bookmark: []byte(`{"type":"BOOKMARK","object":`),
	watch.Error:    []byte(`{"type":"ERROR","object":`),
}

func (s *Server) writeEvent(out *chunkWriter, r *http.Request, e *endpoint, m mediaType, ev watch.Event, headers *bool) error {
	if m.Type == mediaProtobuf {
		return s.writeProtobufEvent(out, e, m, ev)
	}
	var data []byte
	var err error
	obj := ev.Object
	switch {
	case ev.Type == watch.Error:
		st, ok := obj.(*metav1.Status)
		if !ok {
			st = statusFor(apierrors.FromObject(obj))
		}
		st.Kind, st.APIVersion = "Status", "v1"
		data, err = s.codecs.encodeItemJSONRaw(st)
	case m.As == "Table":
		if obj, err = e.fromStorage(obj); err != nil {
			return err
		}
		var t *metav1.Table
		t, err = s.toTable(r, e, []runtime.Object{obj}, metav1.ListMeta{}, !*headers)
		if err != nil {
			return err
		}
		*headers = false
		data, err = s.codecs.encodeItemJSONRaw(t)
	case m.As == "PartialObjectMetadata":
		var p *metav1.PartialObjectMetadata
		if p, err = partialMetadata(obj, m.Ver); err != nil {
			return err
		}
		data, err = s.codecs.encodeItemJSONRaw(p)
	case e.version != nil:
		if obj, err = e.fromStorage(obj); err != nil {
			return err
		}
		data, err = s.codecs.encodeItemJSONRaw(storage.Unwrap(obj))
	default:
		data, err = s.codecs.encodeItemJSON(obj)
	}
	if err != nil {
		return err
	}
	out.Write(eventPrefixes[ev.Type])
	out.Write(data)
	_, err = out.WriteString("}\n")
	return err
}

// writeProtobufEvent writes one length-delimited protobuf frame holding a
// metav1.WatchEvent whose object is the protobuf-encoded object, as
// upstream's "application/vnd.kubernetes.protobuf;stream=watch".
// With m.As "PartialObjectMetadata" (a metadata informer's watch) the
// object is the event object's PartialObjectMetadata.
func (s *Server) writeProtobufEvent(out *chunkWriter, e *endpoint, m mediaType, ev watch.Event) error {
	obj := ev.Object
	switch {
	case ev.Type == watch.Error:
		st, ok := obj.(*metav1.Status)
		if !ok {
			st = statusFor(apierrors.FromObject(obj))
		}
		obj = st
	case m.As == "PartialObjectMetadata":
		p, err := partialMetadata(obj, m.Ver)
		if err != nil {
			return err
		}
		obj = p
	default:
		var err error
		if obj, err = e.fromStorage(obj); err != nil {
			return err
		}
	}
	var inner []byte
	var err error
	if co, ok := obj.(*storage.CachedObject); ok {
		inner, err = co.Encoded("protobuf", func(o runtime.Object) ([]byte, error) { return s.codecs.encode(mediaType{Type: mediaProtobuf}, o) })
	} else {
		inner, err = s.codecs.encode(mediaType{Type: mediaProtobuf}, obj)
	}
	if err != nil {
		return err
	}
	// The frame is a bare WatchEvent message (no "k8s\x00" envelope, as
	// upstream's raw serializer writes it); the object inside keeps its
	// envelope.
	frame, err := (&metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: inner}}).Marshal()
	if err != nil {
		return err
	}
	var size [4]byte
	binary.BigEndian.PutUint32(size[:], uint32(len(frame)))
	out.Write(size[:])
	_, err = out.Write(frame)
	return err
}
