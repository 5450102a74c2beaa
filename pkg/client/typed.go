package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kjson "sigs.k8s.io/json"
)

// Object is an API object (a pointer such as *corev1.Pod).
type Object interface {
	runtime.Object
	metav1.Object
}

// ObjectList is an API list (a pointer such as *corev1.PodList).
type ObjectList interface {
	runtime.Object
	metav1.ListInterface
}

// Resource identifies a served resource.
type Resource struct {
	Group, Version, Resource string
	Namespaced               bool
}

// GroupVersionResource returns the resource's GVR.
func (r Resource) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// Path is the URL path of the resource (collection when name is empty).
func (r Resource) Path(ns, name string, subresource ...string) string {
	p := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		p = "/api/" + r.Version
	}
	if r.Namespaced && ns != "" {
		p += "/namespaces/" + ns
	}
	p += "/" + r.Resource
	if name != "" {
		p += "/" + name
	}
	for _, s := range subresource {
		p += "/" + s
	}
	return p
}

// Typed is a client for one resource whose objects are T and lists L:
// Typed[*corev1.Pod, *corev1.PodList]. Dynamic uses
// *unstructured.Unstructured and *unstructured.UnstructuredList.
type Typed[T Object, L ObjectList] struct {
	c   *Client
	res Resource
	ns  string
}

// NewTyped returns a client for res.
func NewTyped[T Object, L ObjectList](c *Client, res Resource) *Typed[T, L] {
	return &Typed[T, L]{c: c, res: res}
}

// Dynamic is a client for any resource, with unstructured objects.
type Dynamic = Typed[*unstructured.Unstructured, *unstructured.UnstructuredList]

// NewDynamic returns an unstructured client for res.
func NewDynamic(c *Client, res Resource) *Dynamic {
	return NewTyped[*unstructured.Unstructured, *unstructured.UnstructuredList](c, res)
}

// Namespace returns the client scoped to ns ("" = all namespaces for list
// and watch).
func (t *Typed[T, L]) Namespace(ns string) *Typed[T, L] {
	cp := *t
	cp.ns = ns
	return &cp
}

// Resource is the resource the client serves.
func (t *Typed[T, L]) Resource() Resource { return t.res }

// Client is the underlying REST client.
func (t *Typed[T, L]) Client() *Client { return t.c }

func newOf[X any]() X {
	var zero X
	typ := reflect.TypeOf(zero)
	if typ == nil || typ.Kind() != reflect.Pointer {
		return zero
	}
	return reflect.New(typ.Elem()).Interface().(X)
}

// decode unmarshals a JSON API response case-sensitively, as the server does.
func decode(data []byte, into any) error {
	if u, ok := into.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(data)
	}
	return kjson.UnmarshalCaseSensitivePreserveInts(data, into)
}

// decodeResponse decodes a response in whichever format the server chose.
func (c *Client) decodeResponse(resp *Response, into any) error {
	if c.protobuf != nil && strings.HasPrefix(resp.ContentType, ContentTypeProtobuf) {
		obj, ok := into.(runtime.Object)
		if !ok {
			return fmt.Errorf("client: cannot decode protobuf into %T", into)
		}
		_, _, err := c.protobuf.Decode(resp.Body, nil, obj)
		return err
	}
	return decode(resp.Body, into)
}

// protoMessage is a built-in type's generated protobuf encoding.
type protoMessage interface {
	Marshal() ([]byte, error)
}

// protobufMagic starts every protobuf-encoded Kubernetes object.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00} // "k8s\x00"

// encodeBody encodes a request body: a built-in object as protobuf when the
// client speaks protobuf (as client-go with ContentType protobuf sends
// creates and updates), anything else (an explicit contentType, custom
// resources, options) as JSON. The object is not modified: its kind goes
// into the envelope, looked up in the client's scheme.
func (c *Client) encodeBody(body any, contentType string, jsonOnly bool) ([]byte, string, error) {
	if c.protobuf != nil && contentType == "" && !jsonOnly {
		if obj, ok := body.(runtime.Object); ok {
			if pm, ok := body.(protoMessage); ok {
				if gvks, _, err := c.scheme.ObjectKinds(obj); err == nil && len(gvks) == 1 {
					raw, err := pm.Marshal()
					if err != nil {
						return nil, "", err
					}
					u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: gvks[0].GroupVersion().String(), Kind: gvks[0].Kind}, Raw: raw}
					env, err := u.Marshal()
					if err != nil {
						return nil, "", err
					}
					return append(append(make([]byte, 0, len(protobufMagic)+len(env)), protobufMagic...), env...), ContentTypeProtobuf, nil
				}
			}
		}
	}
	data, err := json.Marshal(body)
	return data, contentType, err
}

// withTypeMeta returns obj, or when its apiVersion and kind are empty a
// shallow copy with them set (the resource's group/version, the Go type's
// name as kind), as client-go's typed clients send them: the API server
// needs them to decode a custom resource. The caller's object is not
// touched.
func withTypeMeta[T Object](obj T, res Resource) any {
	if jsonOnly[T]() {
		return obj // unstructured objects carry their own
	}
	ro, ok := any(obj).(runtime.Object)
	if !ok || !ro.GetObjectKind().GroupVersionKind().Empty() {
		return obj
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return obj
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	out := cp.Interface().(runtime.Object)
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: v.Elem().Type().Name()})
	return out
}

// jsonOnly reports whether objects of type T can only be JSON (unstructured).
func jsonOnly[T any]() bool {
	// The zero T (a nil pointer) has T's methods: no need to allocate one.
	var zero T
	_, ok := any(zero).(runtime.Unstructured)
	return ok
}

func (t *Typed[T, L]) do(ctx context.Context, method, path string, q url.Values, body any, contentType string, out any) error {
	var data []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		data = b
	default:
		var err error
		// Only the resource's own objects (creates, updates) go as
		// protobuf; options and patches stay JSON.
		obj, isT := b.(T)
		if isT {
			b = withTypeMeta(obj, t.res)
		}
		if data, contentType, err = t.c.encodeBody(b, contentType, !isT || jsonOnly[T]()); err != nil {
			return err
		}
	}
	resp, err := t.c.Do(ctx, &Request{Method: method, Path: path, Query: q, Body: data, ContentType: contentType, JSONOnly: jsonOnly[T]()})
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return t.c.decodeResponse(resp, out)
}

// errEmptyName refuses a request for one object without a name: its path
// would be the collection's (a Delete would delete them all), as
// client-go's Request.Name("") does.
var errEmptyName = errors.New("resource name may not be empty")

// Get reads one object.
func (t *Typed[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := newOf[T]()
	if name == "" {
		return out, errEmptyName
	}
	q := url.Values{}
	if opts.ResourceVersion != "" {
		q.Set("resourceVersion", opts.ResourceVersion)
	}
	err := t.do(ctx, http.MethodGet, t.res.Path(t.ns, name), q, nil, "", out)
	return out, err
}

// ListQuery encodes list/watch options as query parameters.
func ListQuery(o metav1.ListOptions) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("labelSelector", o.LabelSelector)
	set("fieldSelector", o.FieldSelector)
	set("resourceVersion", o.ResourceVersion)
	set("resourceVersionMatch", string(o.ResourceVersionMatch))
	set("continue", o.Continue)
	if o.Watch {
		q.Set("watch", "true")
	}
	if o.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.TimeoutSeconds != nil {
		q.Set("timeoutSeconds", strconv.FormatInt(*o.TimeoutSeconds, 10))
	}
	if o.SendInitialEvents != nil {
		q.Set("sendInitialEvents", strconv.FormatBool(*o.SendInitialEvents))
	}
	return q
}

// List reads the collection.
func (t *Typed[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := newOf[L]()
	err := t.do(ctx, http.MethodGet, t.res.Path(t.ns, ""), ListQuery(opts), nil, "", out)
	return out, err
}

// Watch streams changes of the collection.
func (t *Typed[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	ctx, cancel := context.WithCancel(ctx)
	body, ct, err := t.c.Stream(ctx, &Request{Method: http.MethodGet, Path: t.res.Path(t.ns, ""), Query: ListQuery(opts), JSONOnly: jsonOnly[T]()})
	if err != nil {
		cancel()
		return nil, err
	}
	newObj := func() runtime.Object { return newOf[T]() }
	if t.c.protobuf != nil && strings.HasPrefix(ct, ContentTypeProtobuf) {
		return newProtobufWatcher(body, cancel, newObj, t.c.protobuf), nil
	}
	return newStreamWatcher(body, cancel, newObj), nil
}

func writeQuery(dryRun []string, fieldManager, fieldValidation string) url.Values {
	q := url.Values{}
	for _, d := range dryRun {
		q.Add("dryRun", d)
	}
	if fieldManager != "" {
		q.Set("fieldManager", fieldManager)
	}
	if fieldValidation != "" {
		q.Set("fieldValidation", fieldValidation)
	}
	return q
}

func (t *Typed[T, L]) namespaceOf(obj T) string {
	if t.ns != "" || !t.res.Namespaced {
		return t.ns
	}
	return obj.GetNamespace()
}

// Create creates obj.
func (t *Typed[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := newOf[T]()
	err := t.do(ctx, http.MethodPost, t.res.Path(t.namespaceOf(obj), ""),
		writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation), obj, "", out)
	return out, err
}

// Update replaces obj (optimistically: its resourceVersion must be current).
func (t *Typed[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := newOf[T]()
	if obj.GetName() == "" {
		return out, errEmptyName
	}
	err := t.do(ctx, http.MethodPut, t.res.Path(t.namespaceOf(obj), obj.GetName()),
		writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation), obj, "", out)
	return out, err
}

// UpdateStatus replaces obj's status through the status subresource.
func (t *Typed[T, L]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := newOf[T]()
	if obj.GetName() == "" {
		return out, errEmptyName
	}
	err := t.do(ctx, http.MethodPut, t.res.Path(t.namespaceOf(obj), obj.GetName(), "status"),
		writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation), obj, "", out)
	return out, err
}

// Patch applies a JSON, merge or strategic merge patch to name (or to its
// subresource).
func (t *Typed[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	out := newOf[T]()
	if name == "" {
		return out, errEmptyName
	}
	q := writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation)
	if opts.Force != nil {
		q.Set("force", strconv.FormatBool(*opts.Force))
	}
	err := t.do(ctx, http.MethodPatch, t.res.Path(t.ns, name, subresources...), q, data, string(pt), out)
	return out, err
}

// Delete deletes name.
func (t *Typed[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if name == "" {
		return errEmptyName
	}
	opts.Kind, opts.APIVersion = "DeleteOptions", "v1"
	return t.do(ctx, http.MethodDelete, t.res.Path(t.ns, name), nil, &opts, "", nil)
}

// DeleteCollection deletes what listOpts selects.
func (t *Typed[T, L]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	opts.Kind, opts.APIVersion = "DeleteOptions", "v1"
	return t.do(ctx, http.MethodDelete, t.res.Path(t.ns, ""), ListQuery(listOpts), &opts, "", nil)
}

// Subresource posts body to a subresource of name (binding, eviction,
// token) and decodes the answer into out (may be nil). With a protobuf
// client a built-in body (a Binding, an Eviction) goes as protobuf, as
// client-go's typed clients send it.
func (t *Typed[T, L]) Subresource(ctx context.Context, name, subresource string, body any, out any) error {
	if name == "" {
		return errEmptyName
	}
	contentType := ""
	if _, isT := body.(T); !isT && body != nil && !jsonOnly[T]() {
		if _, raw := body.([]byte); !raw {
			data, ct, err := t.c.encodeBody(body, "", false)
			if err != nil {
				return err
			}
			body, contentType = data, ct
		}
	}
	return t.do(ctx, http.MethodPost, t.res.Path(t.ns, name, subresource), nil, body, contentType, out)
}
