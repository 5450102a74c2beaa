package metadata

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/skiff-sh/skiff/pkg/client"
)

// Accept headers, as client-go's metadata client sends them.
const (
	AcceptObject = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	AcceptList = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
		"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	// AcceptWatch: watch events carry PartialObjectMetadata objects.
	AcceptWatch = "application/vnd.kubernetes.protobuf;stream=watch;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
)

// Client reads and writes the metadata of any resource.
type Client struct {
	c  *client.Client
	pb *protobuf.Serializer
}

// New returns a metadata client over c.
func New(c *client.Client) *Client {
	sch := runtime.NewScheme()
	metav1.AddMetaToScheme(sch)
	metav1.AddToGroupVersion(sch, schema.GroupVersion{Version: "v1"})
	return &Client{c: c, pb: protobuf.NewSerializer(sch, sch)}
}

// Resource is the client of one resource.
func (m *Client) Resource(res client.Resource) *ResourceClient {
	return &ResourceClient{m: m, res: res}
}

// ResourceClient reads and writes the metadata of one resource.
type ResourceClient struct {
	m   *Client
	res client.Resource
	ns  string
}

// Namespace scopes the client to ns ("" = all namespaces for list/watch).
func (r *ResourceClient) Namespace(ns string) *ResourceClient {
	cp := *r
	cp.ns = ns
	return &cp
}

func (m *Client) decode(resp *client.Response, into runtime.Object, kind string) error {
	if strings.HasPrefix(resp.ContentType, client.ContentTypeProtobuf) {
		if _, _, err := m.pb.Decode(resp.Body, nil, into); err != nil {
			return err
		}
	} else if err := json.Unmarshal(resp.Body, into); err != nil {
		return err
	}
	gvk := into.GetObjectKind().GroupVersionKind()
	if gvk.Kind != kind || gvk.Group != metav1.GroupName {
		return fmt.Errorf("metadata: the server answered %v, not %s (it does not support metadata requests)", gvk, kind)
	}
	return nil
}

func (r *ResourceClient) do(ctx context.Context, req *client.Request, into runtime.Object, kind string) error {
	resp, err := r.m.c.Do(ctx, req)
	if err != nil {
		return err
	}
	return r.m.decode(resp, into, kind)
}

// Get returns the metadata of name.
func (r *ResourceClient) Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	if name == "" {
		return nil, fmt.Errorf("name is required")
	}
	q := map[string][]string{}
	if opts.ResourceVersion != "" {
		q["resourceVersion"] = []string{opts.ResourceVersion}
	}
	out := &metav1.PartialObjectMetadata{}
	err := r.do(ctx, &client.Request{Method: http.MethodGet, Path: r.res.Path(r.ns, name, subresources...), Query: q, Accept: AcceptObject}, out, "PartialObjectMetadata")
	if err != nil {
		return nil, err
	}
	return out, nil
}

// List returns the metadata of the collection.
func (r *ResourceClient) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	out := &metav1.PartialObjectMetadataList{}
	err := r.do(ctx, &client.Request{Method: http.MethodGet, Path: r.res.Path(r.ns, ""), Query: client.ListQuery(opts), Accept: AcceptList}, out, "PartialObjectMetadataList")
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Watch streams changes of the collection's metadata.
func (r *ResourceClient) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	ctx, cancel := context.WithCancel(ctx)
	body, ct, err := r.m.c.Stream(ctx, &client.Request{Method: http.MethodGet, Path: r.res.Path(r.ns, ""), Query: client.ListQuery(opts), Accept: AcceptWatch})
	if err != nil {
		cancel()
		return nil, err
	}
	return client.NewWatcher(body, ct, cancel, func() runtime.Object { return &metav1.PartialObjectMetadata{} }, r.m.pb), nil
}

// Patch patches name (a JSON, merge or strategic merge patch; the answer
// is the patched object's metadata).
func (r *ResourceClient) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	if name == "" {
		return nil, fmt.Errorf("name is required")
	}
	q := map[string][]string{}
	for _, d := range opts.DryRun {
		q["dryRun"] = append(q["dryRun"], d)
	}
	if opts.FieldManager != "" {
		q["fieldManager"] = []string{opts.FieldManager}
	}
	if opts.Force != nil {
		q["force"] = []string{strconv.FormatBool(*opts.Force)}
	}
	out := &metav1.PartialObjectMetadata{}
	err := r.do(ctx, &client.Request{Method: http.MethodPatch, Path: r.res.Path(r.ns, name, subresources...), Query: q, Body: data, ContentType: string(pt), Accept: AcceptObject}, out, "PartialObjectMetadata")
	if err != nil {
		return nil, err
	}
	return out, nil
}

func deleteBody(opts metav1.DeleteOptions) ([]byte, error) {
	opts.Kind, opts.APIVersion = "DeleteOptions", "v1"
	return json.Marshal(&opts)
}

// Delete deletes name.
func (r *ResourceClient) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if name == "" {
		return fmt.Errorf("name is required")
	}
	body, err := deleteBody(opts)
	if err != nil {
		return err
	}
	_, err = r.m.c.Do(ctx, &client.Request{Method: http.MethodDelete, Path: r.res.Path(r.ns, name), Body: body, Accept: "application/json"})
	return err
}

// DeleteCollection deletes what listOpts selects.
func (r *ResourceClient) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	body, err := deleteBody(opts)
	if err != nil {
		return err
	}
	_, err = r.m.c.Do(ctx, &client.Request{Method: http.MethodDelete, Path: r.res.Path(r.ns, ""), Query: client.ListQuery(listOpts), Body: body, Accept: "application/json"})
	return err
}
