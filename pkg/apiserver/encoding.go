package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// Media types the API server speaks.
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// mediaType is one negotiated response format: a serialization plus, for
// meta.k8s.io transformations, the kind the client wants instead of the
// object (Table, PartialObjectMetadata, PartialObjectMetadataList).
type mediaType struct {
	Type   string
	As     string // "", "Table", "PartialObjectMetadata", "PartialObjectMetadataList"
	Group  string
	Ver    string
	Pretty bool
}

// codecs holds the serializers shared by all handlers.
type codecs struct {
	scheme     *runtime.Scheme
	json       *kjson.Serializer
	jsonStrict *kjson.Serializer
	yaml       *kjson.Serializer
	yamlStrict *kjson.Serializer
	proto      *protobuf.Serializer
}

func newCodecs(scheme *runtime.Scheme) *codecs {
	mf := kjson.DefaultMetaFactory
	return &codecs{
		scheme:     scheme,
		json:       kjson.NewSerializerWithOptions(mf, scheme, scheme, kjson.SerializerOptions{}),
		jsonStrict: kjson.NewSerializerWithOptions(mf, scheme, scheme, kjson.SerializerOptions{Strict: true}),
		yaml:       kjson.NewSerializerWithOptions(mf, scheme, scheme, kjson.SerializerOptions{Yaml: true}),
		yamlStrict: kjson.NewSerializerWithOptions(mf, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true}),
		proto:      protobuf.NewSerializer(scheme, scheme),
	}
}

// negotiate picks the response format from the Accept header. allowAs lists
// the transformations the endpoint supports.
//
// ok, if given, says which of the acceptable types the endpoint can
// serve: the client's list is walked until one passes (a metadata-only
// watch asks for protobuf PartialObjectMetadata first, then JSON).
func negotiate(accept string, allowAs bool, ok ...func(mediaType) bool) (mediaType, error) {
	if strings.TrimSpace(accept) == "" {
		return mediaType{Type: mediaJSON}, nil
	}
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
				continue
			}
		}
		m := mediaType{As: params["as"], Group: params["g"], Ver: params["v"], Pretty: params["pretty"] == "1"}
		switch mt {
		case mediaJSON, "application/*", "*/*":
			m.Type = mediaJSON
		case mediaYAML:
			m.Type = mediaYAML
		case mediaProtobuf:
			m.Type = mediaProtobuf
		default:
			continue
		}
		if m.As != "" {
			if !allowAs || m.Group != metav1.GroupName || (m.Ver != "v1" && m.Ver != "v1beta1") {
				continue
			}
			switch m.As {
			case "Table", "PartialObjectMetadata", "PartialObjectMetadataList":
			default:
				continue
			}
		}
		if len(ok) > 0 && !ok[0](m) {
			continue
		}
		return m, nil
	}
	return mediaType{}, notAcceptable()
}

func notAcceptable() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
	}}
}

func (m mediaType) contentType() string {
	return m.Type
}

// encode serializes obj in the media type's format.
func (c *codecs) encode(m mediaType, obj runtime.Object) ([]byte, error) {
	obj = storage.Unwrap(obj)
	c.setKind(obj)
	switch m.Type {
	case mediaProtobuf:
		var buf bytes.Buffer
		if err := c.proto.Encode(obj, &buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case mediaYAML:
		data, err := c.encodeJSON(obj)
		if err != nil {
			return nil, err
		}
		return yaml.JSONToYAML(data)
	}
	if m.Pretty {
		data, err := c.encodeJSON(obj)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		if err := json.Indent(&out, data, "", "  "); err != nil {
			return nil, err
		}
		out.WriteByte('\n')
		return out.Bytes(), nil
	}
	return c.encodeJSON(obj)
}

// encodeJSON is upstream's compact JSON with a trailing newline.
func (c *codecs) encodeJSON(obj runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(obj); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeItemJSON encodes one object for embedding (no trailing newline),
// reusing a cached encoding when the watch cache has one.
func (c *codecs) encodeItemJSON(obj runtime.Object) ([]byte, error) {
	if co, ok := obj.(*storage.CachedObject); ok {
		return co.Encoded("json", c.encodeItemJSONRaw)
	}
	return c.encodeItemJSONRaw(obj)
}

func (c *codecs) encodeItemJSONRaw(obj runtime.Object) ([]byte, error) {
	c.setKind(obj)
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return data, nil
}

// setKind fills in apiVersion/kind if the object lacks them.
func (c *codecs) setKind(obj runtime.Object) {
	if !obj.GetObjectKind().GroupVersionKind().Empty() {
		return
	}
	if kinds, _, err := c.scheme.ObjectKinds(obj); err == nil && len(kinds) > 0 {
		gvk := kinds[0]
		// Unversioned meta types (Status) are served as v1.
		if gvk.Group == "" && gvk.Version == "" {
			gvk.Version = "v1"
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
}

// requestFormat describes a request body's encoding.
type requestFormat int

const (
	bodyJSON requestFormat = iota
	bodyYAML
	bodyProtobuf
)

func bodyFormat(contentType string) (requestFormat, error) {
	if contentType == "" {
		return bodyJSON, nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return 0, unsupportedMediaType(contentType)
	}
	switch mt {
	case mediaJSON:
		return bodyJSON, nil
	case mediaYAML:
		return bodyYAML, nil
	case mediaProtobuf:
		return bodyProtobuf, nil
	}
	return 0, unsupportedMediaType(contentType)
}

func unsupportedMediaType(ct string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"),
	}}
}

// decodeResult is a decoded request body and the strict-decoding problems
// (unknown or duplicate fields) found on the way.
type decodeResult struct {
	obj    runtime.Object
	strict []string
}

// decode reads body into a new object of gvk. Unknown and duplicate fields
// are returned (not failed on) so that the caller applies fieldValidation.
func (c *codecs) decode(format requestFormat, body []byte, gvk schema.GroupVersionKind, into runtime.Object) (*decodeResult, error) {
	var ser runtime.Decoder
	switch format {
	case bodyYAML:
		ser = c.yamlStrict
	case bodyProtobuf:
		ser = c.proto
	default:
		ser = c.jsonStrict
	}
	obj, actual, err := ser.Decode(body, &gvk, into)
	res := &decodeResult{obj: obj}
	if err != nil {
		if se, ok := runtime.AsStrictDecodingError(err); ok {
			for _, e := range se.Errors() {
				res.strict = append(res.strict, e.Error())
			}
			err = nil
		}
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err))
	}
	if actual != nil && (actual.Group != gvk.Group || actual.Version != gvk.Version) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", actual.GroupVersion().String(), gvk.GroupVersion().String()))
	}
	if actual != nil && actual.Kind != gvk.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", actual.Kind, gvk.Kind))
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return res, nil
}

// readBody reads a request body up to the size limit (413 beyond).
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if int64(len(data)) > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	return data, nil
}
