package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

// state is one immutable generation of the documents. The model is built
// eagerly; serialized forms are produced on first use and cached.
type state struct {
	info     Info
	model    *model
	docs     map[string]*gvDoc
	keys     []string // sorted keys of docs
	modified time.Time
	defs     *Definitions

	v2Once sync.Once
	v2JSON *blob
	v2PB   lazyBlob

	v3Once  sync.Once
	v3Index *blob
	v3JSON  map[string]*blob
	v3PB    map[string]*lazyBlob
}

// blob is a serialized document with its ETag and, on demand, its gzip form.
type blob struct {
	data   []byte
	etag   string // upstream's: upper-case hex SHA-512 of the JSON form
	gzOnce sync.Once
	gz     []byte
}

func newBlob(data []byte, etag string) *blob { return &blob{data: data, etag: etag} }

func (b *blob) gzipped() []byte {
	b.gzOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		_, _ = zw.Write(b.data)
		_ = zw.Close()
		b.gz = buf.Bytes()
	})
	return b.gz
}

// lazyBlob is a blob derived from another one on first use (protobuf forms).
type lazyBlob struct {
	once sync.Once
	b    *blob
	err  error
}

func (l *lazyBlob) get(f func() (*blob, error)) (*blob, error) {
	l.once.Do(func() { l.b, l.err = f() })
	return l.b, l.err
}

func computeETag(data []byte) string { return fmt.Sprintf("%X", sha512.Sum512(data)) }

func marshal(v any) []byte {
	// The values are maps, slices, strings, numbers and bools only.
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("openapi: marshal: %v", err))
	}
	return data
}

func (st *state) v2() *blob {
	st.v2Once.Do(func() {
		data := marshal(st.v2Document())
		st.v2JSON = newBlob(data, computeETag(data))
	})
	return st.v2JSON
}

func (st *state) v2Proto() (*blob, error) {
	return st.v2PB.get(func() (*blob, error) {
		j := st.v2()
		doc, err := openapiv2.ParseDocument(j.data)
		if err != nil {
			return nil, fmt.Errorf("openapi: v2 to protobuf: %w", err)
		}
		pb, err := proto.Marshal(doc)
		if err != nil {
			return nil, err
		}
		return newBlob(pb, j.etag), nil
	})
}

func (st *state) v3() {
	st.v3Once.Do(func() {
		st.v3JSON = make(map[string]*blob, len(st.docs))
		st.v3PB = make(map[string]*lazyBlob, len(st.docs))
		index := map[string]any{}
		for _, k := range st.keys {
			data := marshal(st.v3Document(st.docs[k]))
			b := newBlob(data, computeETag(data))
			st.v3JSON[k] = b
			st.v3PB[k] = &lazyBlob{}
			index[k] = map[string]any{"serverRelativeURL": serverRelativeURL(k, b.etag)}
		}
		data := marshal(map[string]any{"paths": index})
		st.v3Index = newBlob(data, computeETag(data))
	})
}

func (st *state) v3Proto(key string) (*blob, error) {
	st.v3()
	return st.v3PB[key].get(func() (*blob, error) {
		j := st.v3JSON[key]
		doc, err := openapiv3.ParseDocument(j.data)
		if err != nil {
			return nil, fmt.Errorf("openapi: v3 %s to protobuf: %w", key, err)
		}
		pb, err := proto.Marshal(doc)
		if err != nil {
			return nil, err
		}
		return newBlob(pb, j.etag), nil
	})
}

func serverRelativeURL(key, etag string) string {
	u := url.URL{Path: "/openapi/v3/" + key, RawQuery: url.Values{"hash": []string{etag}}.Encode()}
	return u.String()
}

const (
	v2ProtoDeprecated = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
	v2Proto           = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	v3ProtoDeprecated = "com.github.proto-openapi.spec.v3@v1.0+protobuf"
	v3Proto           = "com.github.proto-openapi.spec.v3.v1.0+protobuf"
)

func (st *state) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/openapi/v2":
		st.serveV2(w, r)
	case p == "/openapi/v3":
		st.v3()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache, private")
		st.write(w, r, st.v3Index)
	case strings.HasPrefix(p, "/openapi/v3/"):
		st.serveV3GroupVersion(w, r, strings.TrimPrefix(p, "/openapi/v3/"))
	default:
		http.NotFound(w, r)
	}
}

// representation is one content type a document can be served as.
type representation struct {
	subtype     string // matched against the Accept subtype
	contentType string // sent back
	get         func() (*blob, error)
}

func (st *state) serveV2(w http.ResponseWriter, r *http.Request) {
	jsonRep := func() (*blob, error) { return st.v2(), nil }
	reps := []representation{
		{"json", "application/json", jsonRep},
		{v2ProtoDeprecated, "application/" + v2Proto, st.v2Proto},
		{v2Proto, "application/" + v2Proto, st.v2Proto},
	}
	w.Header().Add("Vary", "Accept")
	rep, ok := negotiate(r.Header.Get("Accept"), reps)
	if !ok {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	b, err := rep.get()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", rep.contentType)
	w.Header().Set("Cache-Control", "no-cache, private")
	st.write(w, r, b)
}

func (st *state) serveV3GroupVersion(w http.ResponseWriter, r *http.Request, key string) {
	st.v3()
	jb, ok := st.v3JSON[key]
	if !ok {
		http.NotFound(w, r)
		return
	}
	pb := func() (*blob, error) { return st.v3Proto(key) }
	reps := []representation{
		{"json", "application/json", func() (*blob, error) { return jb, nil }},
		{v3Proto, "application/" + v3Proto, pb},
		{v3ProtoDeprecated, "application/" + v3Proto, pb},
	}
	w.Header().Add("Vary", "Accept")
	rep, ok := negotiate(r.Header.Get("Accept"), reps)
	if !ok {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	b, err := rep.get()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", rep.contentType)
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != b.etag {
			// The document changed since the client read the index.
			http.Redirect(w, r, serverRelativeURL(key, b.etag), http.StatusMovedPermanently)
			return
		}
		// The URL names this exact content: cache it forever.
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().UTC().AddDate(1, 0, 0).Format(http.TimeFormat))
	} else {
		w.Header().Set("Cache-Control", "no-cache, private")
	}
	st.write(w, r, b)
}

// write sends b with its ETag, answering conditional requests (304) and
// gzip-encoding when the client accepts it.
func (st *state) write(w http.ResponseWriter, r *http.Request, b *blob) {
	h := w.Header()
	h.Set("Etag", strconv.Quote(b.etag))
	data := b.data
	if acceptsGzip(r) && r.Header.Get("Range") == "" {
		h.Add("Vary", "Accept-Encoding")
		h.Set("Content-Encoding", "gzip")
		data = b.gzipped()
	}
	http.ServeContent(w, r, "", st.modified, bytes.NewReader(data))
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			if q, ok := qValue(params); ok && q == 0 {
				return false
			}
			return true
		}
	}
	return false
}

type acceptClause struct {
	typ, subtype string
	q            float64
}

// parseAccept parses an Accept header, most preferred first.
func parseAccept(header string) []acceptClause {
	var out []acceptClause
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, _ := strings.Cut(part, ";")
		typ, sub, found := strings.Cut(strings.TrimSpace(mt), "/")
		if !found {
			if typ != "*" {
				continue
			}
			sub = "*"
		}
		q := 1.0
		if v, ok := qValue(params); ok {
			q = v
		}
		if q <= 0 {
			continue
		}
		out = append(out, acceptClause{typ: strings.ToLower(typ), subtype: strings.ToLower(sub), q: q})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.q != b.q {
			return a.q > b.q
		}
		if (a.typ == "*") != (b.typ == "*") {
			return b.typ == "*"
		}
		return a.subtype != "*" && b.subtype == "*"
	})
	return out
}

func qValue(params string) (float64, bool) {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return q, true
			}
		}
	}
	return 0, false
}

func negotiate(accept string, reps []representation) (representation, bool) {
	if accept == "" {
		accept = "*/*"
	}
	for _, c := range parseAccept(accept) {
		if c.typ != "application" && c.typ != "*" {
			continue
		}
		for _, rep := range reps {
			if c.subtype == "*" || c.subtype == rep.subtype {
				return rep, true
			}
		}
	}
	return representation{}, false
}
