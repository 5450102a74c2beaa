package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/fieldmanager"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
)

func metaGetOptions(rv string) metav1.GetOptions { return metav1.GetOptions{ResourceVersion: rv} }

// serveResource handles every /api and /apis resource request.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	if (info.APIPrefix == "api") != (info.APIGroup == "") {
		s.writeError(w, r, pageNotFound())
		return
	}
	gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
	e := s.endpoints[gvr]
	if e == nil {
		e = s.crs.Load().endpoints[gvr]
	}
	if e == nil {
		s.writeError(w, r, pageNotFound())
		return
	}
	if e.cr != nil {
		if err := crMediaTypes(r); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if e.review != nil {
		if err := s.serveReview(w, r, info, e.review); err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	if e.computed {
		if err := s.serveComponentStatuses(w, r, info, e); err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	if info.Namespace != "" && !e.def.Namespaced && info.Resource != "namespaces" {
		s.writeError(w, r, pageNotFound())
		return
	}
	if e.def.Warning != "" && e.version == nil {
		addWarning(w, e.def.Warning)
	}
	switch info.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		// Admission (webhooks, policies) may pass warnings to the client;
		// each text once, as upstream's warning recorder (a webhook called
		// again on reinvocation repeats its warnings).
		var mu sync.Mutex
		var seen map[string]bool
		r = r.WithContext(admission.WithWarnings(r.Context(), func(text string) {
			mu.Lock()
			defer mu.Unlock()
			if seen[text] {
				return
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[text] = true
			addWarning(w, text)
		}))
	}
	var err error
	switch info.Subresource {
	case "":
		err = s.serveMain(w, r, info, e)
	case "scale":
		if e.def.Scale == nil {
			err = pageNotFound()
			break
		}
		err = s.serveScale(w, r, info, e)
	default:
		if a := e.actions[info.Subresource]; a != nil {
			err = a(w, r, info, e)
			break
		}
		st := e.subs[info.Subresource]
		if st == nil {
			err = pageNotFound()
			break
		}
		err = s.serveUpdateSubresource(w, r, info, e, st)
	}
	if err != nil {
		s.writeError(w, r, timeoutError(err))
	}
}

func (s *Server) serveMain(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	verb := info.Verb
	if !e.verbs[verb] {
		return methodNotSupported(e.qualified, verb)
	}
	if info.Namespace == "" && e.def.Namespaced && info.Name != "" {
		return pageNotFound()
	}
	switch verb {
	case "get":
		return s.get(w, r, info, e, e.store)
	case "list":
		return s.list(w, r, info, e)
	case "watch":
		return s.watch(w, r, info, e)
	case "create":
		if e.cr != nil && e.cr.terminating {
			err := apierrors.NewMethodNotSupported(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, verb)
			err.ErrStatus.Message = fmt.Sprintf("%v not allowed while custom resource definition is terminating", verb)
			return err
		}
		if e.def.Namespaced && info.Namespace == "" {
			return methodNotSupported(e.qualified, verb)
		}
		if info.Name != "" {
			return methodNotSupported(e.qualified, verb)
		}
		return s.create(w, r, info, e)
	case "update", "patch":
		if info.Name == "" {
			return methodNotSupported(e.qualified, verb)
		}
		if verb == "update" {
			return s.update(w, r, info, e, e.store)
		}
		return s.patch(w, r, info, e, e.store)
	case "delete":
		return s.delete(w, r, info, e)
	case "deletecollection":
		return s.deleteCollection(w, r, info, e)
	}
	return methodNotSupported(e.qualified, verb)
}

// serveUpdateSubresource serves status and the other subresources that
// read the whole object and update a part of it.
func (s *Server) serveUpdateSubresource(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint, st *registry.Store) error {
	switch info.Verb {
	case "get":
		return s.get(w, r, info, e, st)
	case "update":
		return s.update(w, r, info, e, st)
	case "patch":
		return s.patch(w, r, info, e, st)
	}
	return methodNotSupported(schema.GroupResource{Group: e.qualified.Group, Resource: e.qualified.Resource + "/" + info.Subresource}, info.Verb)
}

// --- get -------------------------------------------------------------------

func (s *Server) get(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint, st *registry.Store) error {
	m, err := negotiate(r.Header.Get("Accept"), true, func(m mediaType) bool { return m.As != "PartialObjectMetadataList" })
	if err != nil {
		return err
	}
	obj, err := st.Get(r.Context(), info.Namespace, info.Name, metav1.GetOptions{ResourceVersion: r.URL.Query().Get("resourceVersion")})
	if err != nil {
		return err
	}
	out, err := e.fromStorage(obj)
	if err != nil {
		return err
	}
	return s.writeTransformed(w, r, http.StatusOK, m, e, out)
}

// writeTransformed writes a single object, as a Table or
// PartialObjectMetadata when the client asked for one.
func (s *Server) writeTransformed(w http.ResponseWriter, r *http.Request, code int, m mediaType, e *endpoint, obj runtime.Object) error {
	switch m.As {
	case "Table":
		lm := metav1.ListMeta{}
		if a, err := meta.Accessor(storage.Unwrap(obj)); err == nil {
			lm.ResourceVersion = a.GetResourceVersion()
		}
		t, err := s.toTable(r, e, []runtime.Object{obj}, lm, false)
		if err != nil {
			return err
		}
		s.writeObject(w, r, code, m, t)
	case "PartialObjectMetadata":
		p, err := partialMetadata(obj, m.Ver)
		if err != nil {
			return err
		}
		s.writeObject(w, r, code, m, p)
	case "PartialObjectMetadataList":
		return notAcceptable()
	default:
		s.writeObject(w, r, code, m, obj)
	}
	return nil
}

func partialMetadata(obj runtime.Object, version string) (*metav1.PartialObjectMetadata, error) {
	a, err := meta.Accessor(storage.Unwrap(obj))
	if err != nil {
		return nil, err
	}
	p := meta.AsPartialObjectMetadata(a)
	if version == "" {
		version = "v1"
	}
	p.SetGroupVersionKind(schema.GroupVersionKind{Group: metav1.GroupName, Version: version, Kind: "PartialObjectMetadata"})
	return p, nil
}

// --- list ------------------------------------------------------------------

// parseListOptions reads list/watch query parameters and validates them as
// upstream does.
func (s *Server) parseListOptions(q url.Values, e *endpoint) (registry.ListOptions, error) {
	var o registry.ListOptions
	var errs field.ErrorList
	if ls := q.Get("labelSelector"); ls != "" {
		sel, err := labels.Parse(ls)
		if err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
		o.Label = sel
	}
	if fs := q.Get("fieldSelector"); fs != "" {
		sel, err := fields.ParseSelector(fs)
		if err != nil {
			return o, apierrors.NewBadRequest(err.Error())
		}
		supported := e.fieldLabels
		for _, req := range sel.Requirements() {
			if !supported[req.Field] {
				return o, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
		if e.version != nil && e.version.FieldLabels != nil {
			// The version's keys name the stored object's fields.
			if sel, err = sel.Transform(func(f, v string) (string, string, error) { return e.version.FieldLabels[f], v, nil }); err != nil {
				return o, apierrors.NewBadRequest(err.Error())
			}
		}
		o.Field = sel
	}
	o.ResourceVersion = q.Get("resourceVersion")
	o.ResourceVersionMatch = q.Get("resourceVersionMatch")
	o.Continue = q.Get("continue")
	if l := q.Get("limit"); l != "" {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q", l))
		}
		if n > 0 {
			o.Limit = n
		}
	}
	o.AllowWatchBookmarks = isTrue(q.Get("allowWatchBookmarks"))
	if v := q.Get("sendInitialEvents"); v != "" {
		b := isTrue(v)
		o.SendInitialEvents = &b
	}
	switch o.ResourceVersionMatch {
	case "", string(metav1.ResourceVersionMatchNotOlderThan), string(metav1.ResourceVersionMatchExact):
		if o.ResourceVersionMatch != "" && o.ResourceVersion == "" && o.SendInitialEvents == nil {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if o.ResourceVersionMatch == string(metav1.ResourceVersionMatchExact) && o.ResourceVersion == "0" {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""))
		}
		if o.Continue != "" && o.ResourceVersionMatch != "" {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden when continue is provided"))
		}
	default:
		errs = append(errs, field.NotSupported(field.NewPath("resourceVersionMatch"), o.ResourceVersionMatch, []string{"Exact", "NotOlderThan", ""}))
	}
	if o.Continue != "" && o.ResourceVersion != "" && o.ResourceVersion != "0" {
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersion"), "specifying resource version is not allowed when using continue"))
	}
	if len(errs) > 0 {
		return o, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return o, nil
}

// supportedFields are the field selector keys of a resource (computed once
// per endpoint at install).
func supportedFields(e *endpoint) map[string]bool {
	if e.version != nil && e.version.FieldLabels != nil {
		out := map[string]bool{}
		for k := range e.version.FieldLabels {
			out[k] = true
		}
		return out
	}
	out := map[string]bool{"metadata.name": true}
	if e.def.Namespaced {
		out["metadata.namespace"] = true
	}
	if e.def.Strategy.Fields != nil {
		for k := range e.def.Strategy.Fields(e.def.New()) {
			out[k] = true
		}
	}
	return out
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	m, err := negotiate(r.Header.Get("Accept"), true, func(m mediaType) bool { return m.As != "PartialObjectMetadata" })
	if err != nil {
		return err
	}
	o, err := s.parseListOptions(r.URL.Query(), e)
	if err != nil {
		return err
	}
	objs, lm, err := e.store.List(r.Context(), info.Namespace, o)
	if err != nil {
		return err
	}
	if e.version != nil {
		for i, obj := range objs {
			if objs[i], err = e.fromStorage(obj); err != nil {
				return err
			}
		}
	}
	switch m.As {
	case "Table":
		t, err := s.toTable(r, e, objs, lm, false)
		if err != nil {
			return err
		}
		s.writeObject(w, r, http.StatusOK, m, t)
		return nil
	case "PartialObjectMetadataList":
		l := &metav1.PartialObjectMetadataList{ListMeta: lm, Items: make([]metav1.PartialObjectMetadata, 0, len(objs))}
		for _, obj := range objs {
			p, err := partialMetadata(obj, m.Ver)
			if err != nil {
				return err
			}
			l.Items = append(l.Items, *p)
		}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: metav1.GroupName, Version: m.Ver, Kind: "PartialObjectMetadataList"})
		s.writeObject(w, r, http.StatusOK, m, l)
		return nil
	case "PartialObjectMetadata":
		return notAcceptable()
	}
	if m.Type == mediaJSON && !m.Pretty {
		return s.writeJSONList(w, e, objs, lm)
	}
	list := e.newList()
	for _, obj := range objs {
		if err := storage.AppendToList(list, storage.Unwrap(obj)); err != nil {
			return err
		}
	}
	la, _ := meta.ListAccessor(list)
	la.SetResourceVersion(lm.ResourceVersion)
	la.SetContinue(lm.Continue)
	la.SetRemainingItemCount(lm.RemainingItemCount)
	list.GetObjectKind().SetGroupVersionKind(e.listGVK)
	s.writeObject(w, r, http.StatusOK, m, list)
	return nil
}

// writeJSONList streams a list as upstream encodes it, using each cached
// object's JSON as is: {"kind":..,"apiVersion":..,"metadata":{..},"items":[..]}.
func (s *Server) writeJSONList(w http.ResponseWriter, e *endpoint, objs []runtime.Object, lm metav1.ListMeta) error {
	head, err := jsonMarshal(struct {
		Kind       string          `json:"kind"`
		APIVersion string          `json:"apiVersion"`
		Metadata   metav1.ListMeta `json:"metadata"`
	}{e.listGVK.Kind, e.listGVK.GroupVersion().String(), lm})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", mediaJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	bw := newChunkWriter(w)
	bw.Write(head[:len(head)-1]) // drop the closing brace
	bw.WriteString(`,"items":[`)
	for i, obj := range objs {
		data, err := s.codecs.encodeItemJSON(obj)
		if err != nil {
			return nil // headers are sent: the client sees a truncated body
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		writeWithoutTypeMeta(bw, data)
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// --- create ----------------------------------------------------------------

// writeOptions are the query parameters of create, update and patch.
type writeOptions struct {
	DryRun          bool
	FieldManager    string
	FieldValidation string
	Force           bool
	ForceSet        bool // force was given (forbidden for a non-apply patch)
}

func parseWriteOptions(q url.Values, kind string) (writeOptions, error) {
	o := writeOptions{FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation"), Force: isTrue(q.Get("force"))}
	var errs field.ErrorList
	for _, d := range q["dryRun"] {
		if d != metav1.DryRunAll {
			errs = append(errs, field.NotSupported(field.NewPath("dryRun"), d, []string{metav1.DryRunAll}))
		}
		o.DryRun = true
	}
	switch o.FieldValidation {
	case "":
		o.FieldValidation = metav1.FieldValidationWarn
	case metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("fieldValidation"), o.FieldValidation,
			[]string{metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict}))
	}
	if len(o.FieldManager) > fieldmanager.MaxManagerLength {
		errs = append(errs, field.TooLong(field.NewPath("fieldManager"), "", fieldmanager.MaxManagerLength))
	}
	for i, r := range o.FieldManager {
		if !unicode.IsPrint(r) {
			errs = append(errs, field.Invalid(field.NewPath("fieldManager"), o.FieldManager, fmt.Sprintf("invalid character %#U (at position %d)", r, i)))
		}
	}
	if kind == "PatchOptions" {
		o.ForceSet = q.Has("force")
	} else if q.Has("force") {
		// upstream's CreateOptions and UpdateOptions have no force: ignored
		o.Force = false
	}
	if len(errs) > 0 {
		return o, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	return o, nil
}

// applyFieldValidation acts on unknown/duplicate fields as the client asked:
// Strict fails with 400, Warn adds Warning headers, Ignore drops them.
func applyFieldValidation(w http.ResponseWriter, o writeOptions, gvk schema.GroupVersionKind, strict []string) error {
	if len(strict) == 0 {
		return nil
	}
	switch o.FieldValidation {
	case metav1.FieldValidationStrict:
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: strict decoding error: %s",
			gvk.Kind, gvk.Version, gvk.Kind, strings.Join(strict, ", ")))
	case metav1.FieldValidationWarn:
		for _, s := range strict {
			addWarning(w, s)
		}
	}
	return nil
}

// unknownCRFields applies field validation to the fields a custom
// resource body has that its schema does not declare (they are pruned).
func (s *Server) unknownCRFields(w http.ResponseWriter, e *endpoint, o writeOptions, obj runtime.Object) error {
	if e.cr == nil || e.cr.version.Validator == nil {
		return nil
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	var msgs []string
	for _, p := range e.cr.version.Validator.Prune(u.Object) {
		msgs = append(msgs, fmt.Sprintf("unknown field %q", p))
	}
	return applyFieldValidation(w, o, e.gvk, msgs)
}

// readTyped reads the request body and decodes it as gvk into into. With
// o set, unknown and duplicate fields are handled as o.FieldValidation says;
// without, they are ignored.
func (s *Server) readTyped(w http.ResponseWriter, r *http.Request, gvk schema.GroupVersionKind, into runtime.Object, o *writeOptions) (runtime.Object, error) {
	body, err := readBody(r, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return nil, err
	}
	format, err := bodyFormat(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	res, err := s.codecs.decode(format, body, gvk, into)
	if err != nil {
		return nil, err
	}
	if o != nil {
		if err := applyFieldValidation(w, *o, gvk, res.strict); err != nil {
			return nil, err
		}
	}
	return res.obj, nil
}

// decodeBody reads and decodes a create/update body into the endpoint's
// version, applies field validation and defaulting, and converts it to the
// storage version. A namespaced object without a namespace takes the
// request's (ns) before conversion, as upstream fills it before its
// strategy runs: a version whose conversion validates (events.k8s.io/v1)
// sees the namespace the object will have.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, e *endpoint, o writeOptions, ns string) (runtime.Object, error) {
	obj, err := s.readTyped(w, r, e.gvk, e.newObj(), &o)
	if err != nil {
		return nil, err
	}
	if ns != "" && e.def.Namespaced {
		if m, err := meta.Accessor(obj); err == nil && m.GetNamespace() == "" {
			m.SetNamespace(ns)
		}
	}
	if err := s.unknownCRFields(w, e, o, obj); err != nil {
		return nil, err
	}
	return s.defaultAndConvert(e, obj)
}

func (s *Server) defaultAndConvert(e *endpoint, obj runtime.Object) (runtime.Object, error) {
	if e.version != nil && e.version.Default != nil {
		e.version.Default(obj)
	}
	out, err := e.toStorage(obj)
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); ok {
			return nil, err
		}
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if e.def.Strategy.Default != nil {
		e.def.Strategy.Default(out)
	}
	return out, nil
}

// attributes builds the admission attributes of a request: opts are the
// request's writeOptions or DeleteOptions.
func (s *Server) attributes(ctx context.Context, op admission.Operation, info *RequestInfo, e *endpoint, obj, old runtime.Object, opts admissionOptions) *admission.Attributes {
	a := &admission.Attributes{
		Operation: op, Resource: e.qualified, Subresource: info.Subresource,
		Kind: schema.GroupKind{Group: e.def.Group, Kind: e.def.Kind}, Namespace: info.Namespace,
		Name: info.Name, Object: obj, OldObject: old, DryRun: opts.dryRun(),
		RequestResource: e.gvr, RequestKind: e.gvk, Options: opts.forOperation(op),
		UserInfo: registry.UserFrom(ctx), Versions: &admissionVersions{s: s, e: e},
	}
	if a.Name == "" && obj != nil {
		_, a.Name = objectName(obj)
	}
	return a
}

// admissionOptions are a request's options as admission sees them.
type admissionOptions interface {
	dryRun() bool
	// forOperation returns the options object of op (a patch or an apply
	// is an update, or a create, to admission, as upstream).
	forOperation(op admission.Operation) runtime.Object
}

func (o writeOptions) dryRun() bool { return o.DryRun }

func (o writeOptions) forOperation(op admission.Operation) runtime.Object {
	var dryRun []string
	if o.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	if op == admission.Create {
		return &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"},
			DryRun: dryRun, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation}
	}
	return &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"},
		DryRun: dryRun, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation}
}

type deleteOptions struct{ *metav1.DeleteOptions }

func (o deleteOptions) dryRun() bool { return len(o.DryRun) > 0 }

func (o deleteOptions) forOperation(admission.Operation) runtime.Object {
	out := o.DeepCopy()
	out.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}
	return out
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	o, err := parseWriteOptions(r.URL.Query(), "CreateOptions")
	if err != nil {
		return err
	}
	obj, err := s.decodeBody(w, r, e, o, info.Namespace)
	if err != nil {
		return err
	}
	obj = s.trackCreate(e, obj, fieldmanager.ManagerName(o.FieldManager, r.UserAgent()))
	ctx := r.Context()
	if objMeta, err := meta.Accessor(obj); err == nil && info.Namespace != "" && objMeta.GetNamespace() == "" {
		objMeta.SetNamespace(info.Namespace)
	}
	attrs := s.attributes(ctx, admission.Create, info, e, obj, nil, o)
	if err := s.admit(ctx, attrs); err != nil {
		return err
	}
	obj = attrs.Object // a webhook's patch replaces it
	out, err := e.store.Create(ctx, info.Namespace, obj, func(ctx context.Context, obj runtime.Object) error {
		attrs.Object = obj
		_, attrs.Name = objectName(obj)
		return s.admission.Validate(ctx, attrs)
	}, o.DryRun)
	if err != nil {
		return err
	}
	served, err := e.fromStorage(out)
	if err != nil {
		return err
	}
	s.writeObject(w, r, http.StatusCreated, m, served)
	return nil
}

// --- update ----------------------------------------------------------------

// objInfo computes an update's new object from the stored one.
type objInfo struct {
	pre    *metav1.Preconditions
	update func(ctx context.Context, old runtime.Object) (runtime.Object, error)
}

func (i *objInfo) Preconditions() *metav1.Preconditions { return i.pre }
func (i *objInfo) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	return i.update(ctx, old)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint, st *registry.Store) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	o, err := parseWriteOptions(r.URL.Query(), "UpdateOptions")
	if err != nil {
		return err
	}
	obj, err := s.decodeBody(w, r, e, o, info.Namespace)
	if err != nil {
		return err
	}
	// As upstream's update handler: a body naming another object is a bad
	// request, whether or not either exists.
	if m, err := meta.Accessor(obj); err == nil && m.GetName() != info.Name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), info.Name))
	}
	manager := fieldmanager.ManagerName(o.FieldManager, r.UserAgent())
	return s.runUpdate(w, r, info, e, st, m, o, registry.UpdateOptions{}, func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		return s.trackUpdate(e, info.Subresource, old, obj.DeepCopyObject(), manager), nil
	})
}

// runUpdate performs an update whose new object newObj computes, with
// admission, and writes the result. uo says whether it may create (a patch
// never creates, an apply always may).
func (s *Server) runUpdate(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint, st *registry.Store,
	m mediaType, o writeOptions, uo registry.UpdateOptions, newObj func(ctx context.Context, old runtime.Object) (runtime.Object, error)) error {
	ctx := r.Context()
	oi := &objInfo{update: func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		obj, err := newObj(ctx, old)
		if err != nil {
			return nil, err
		}
		op := admission.Update
		if om, _ := meta.Accessor(old); om == nil || om.GetResourceVersion() == "" {
			op, old = admission.Create, nil
		}
		attrs := s.attributes(ctx, op, info, e, obj, old, o)
		if err := s.admit(ctx, attrs); err != nil {
			return nil, err
		}
		return attrs.Object, nil
	}}
	out, created, err := st.Update(ctx, info.Namespace, info.Name, oi,
		func(ctx context.Context, obj runtime.Object) error {
			return s.admission.Validate(ctx, s.attributes(ctx, admission.Create, info, e, obj, nil, o))
		},
		func(ctx context.Context, obj, old runtime.Object) error {
			return s.admission.Validate(ctx, s.attributes(ctx, admission.Update, info, e, obj, old, o))
		},
		registry.UpdateOptions{DryRun: o.DryRun, NoCreate: uo.NoCreate, ForceAllowCreate: uo.ForceAllowCreate})
	if err != nil {
		return err
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	served, err := e.fromStorage(out)
	if err != nil {
		return err
	}
	// A patch may ask for the result as PartialObjectMetadata (metadata
	// clients do), as upstream allows.
	return s.writeTransformed(w, r, code, m, e, served)
}

// --- delete ----------------------------------------------------------------

// parseDeleteOptions reads DeleteOptions from the query and, if present,
// the body (which wins, as upstream).
func (s *Server) parseDeleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	q := r.URL.Query()
	if g := q.Get("gracePeriodSeconds"); g != "" {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", g))
		}
		opts.GracePeriodSeconds = &n
	}
	if p := q.Get("propagationPolicy"); p != "" {
		pp := metav1.DeletionPropagation(p)
		opts.PropagationPolicy = &pp
	}
	if od := q.Get("orphanDependents"); od != "" {
		b := isTrue(od)
		opts.OrphanDependents = &b //nolint:staticcheck
	}
	opts.DryRun = q["dryRun"]
	body, err := readBody(r, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		format, err := bodyFormat(r.Header.Get("Content-Type"))
		if err != nil {
			return nil, err
		}
		// DeleteOptions arrive in any group's version ("v1", "meta.k8s.io/v1", "apps/v1"...).
		fromBody := &metav1.DeleteOptions{}
		dec := runtime.Decoder(s.codecs.json)
		switch format {
		case bodyYAML:
			dec = s.codecs.yaml
		case bodyProtobuf:
			dec = s.codecs.proto
		}
		if _, _, err := dec.Decode(body, &schema.GroupVersionKind{Version: "v1", Kind: "DeleteOptions"}, fromBody); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions cannot be handled: %v", err))
		}
		opts = fromBody
	}
	for _, d := range opts.DryRun {
		if d != metav1.DryRunAll {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "",
				field.ErrorList{field.NotSupported(field.NewPath("dryRun"), d, []string{metav1.DryRunAll})})
		}
	}
	return opts, nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	opts, err := s.parseDeleteOptions(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	res, err := e.store.Delete(ctx, info.Namespace, info.Name, opts, func(ctx context.Context, obj runtime.Object) error {
		return s.admitDelete(ctx, s.attributes(ctx, admission.Delete, info, e, nil, obj, deleteOptions{opts}))
	})
	if err != nil {
		return err
	}
	return s.writeDeleteResult(w, r, m, e, res, opts)
}

// admit runs mutating admission. managedFields that a plugin replacing the
// object (a webhook's or a policy's patch) left undecodable are restored,
// with upstream's warning (its ManagedFieldsValidatingAdmissionController).
func (s *Server) admit(ctx context.Context, a *admission.Attributes) error {
	in := a.Object
	var before []metav1.ManagedFieldsEntry
	if m, err := meta.Accessor(in); err == nil {
		before = m.GetManagedFields()
	}
	if err := s.admission.Admit(ctx, a); err != nil {
		return err
	}
	if a.Object == in {
		return nil // changed in place by built-in plugins, which leave managedFields alone
	}
	if m, err := meta.Accessor(a.Object); err == nil {
		if err := fieldmanager.ValidateManagedFields(m.GetManagedFields()); err != nil {
			m.SetManagedFields(before)
			admission.AddWarning(ctx, fmt.Sprintf(fieldmanager.InvalidAfterAdmissionWarning, err))
		}
	}
	return nil
}

// admitDelete runs the mutating then the validating admission of a delete,
// as upstream (a mutating webhook may be called on DELETE; it cannot patch).
func (s *Server) admitDelete(ctx context.Context, a *admission.Attributes) error {
	if err := s.admission.Admit(ctx, a); err != nil {
		return err
	}
	return s.admission.Validate(ctx, a)
}

// writeDeleteResult answers a delete as upstream: the object when it still
// exists (waiting on finalizers or a grace period) or the resource returns
// deleted objects, a success Status otherwise.
func (s *Server) writeDeleteResult(w http.ResponseWriter, r *http.Request, m mediaType, e *endpoint, res registry.DeleteResult, opts *metav1.DeleteOptions) error {
	code := http.StatusOK
	if !res.Deleted && opts.OrphanDependents != nil && !*opts.OrphanDependents { //nolint:staticcheck
		code = http.StatusAccepted
	}
	if res.Deleted && !e.def.Strategy.ReturnDeletedObject {
		a, err := meta.Accessor(res.Object)
		if err != nil {
			return err
		}
		st := &metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusSuccess,
			Details: &metav1.StatusDetails{
				Name: a.GetName(), Group: e.def.Group, Kind: e.def.Resource, UID: a.GetUID(),
			},
		}
		s.writeObject(w, r, code, m, st)
		return nil
	}
	served, err := e.fromStorage(res.Object)
	if err != nil {
		return err
	}
	s.writeObject(w, r, code, m, served)
	return nil
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	lo, err := s.parseListOptions(r.URL.Query(), e)
	if err != nil {
		return err
	}
	opts, err := s.parseDeleteOptions(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	objs, err := e.store.DeleteCollection(ctx, info.Namespace, lo, opts, func(ctx context.Context, obj runtime.Object) error {
		ns, name := objectName(obj)
		i := *info
		i.Namespace, i.Name = ns, name
		return s.admitDelete(ctx, s.attributes(ctx, admission.Delete, &i, e, nil, obj, deleteOptions{opts}))
	})
	if err != nil {
		return err
	}
	list := e.newList()
	for _, obj := range objs {
		served, err := e.fromStorage(obj)
		if err != nil {
			return err
		}
		if err := storage.AppendToList(list, served); err != nil {
			return err
		}
	}
	list.GetObjectKind().SetGroupVersionKind(e.listGVK)
	s.writeObject(w, r, http.StatusOK, m, list)
	return nil
}

// writeWithoutTypeMeta writes an object's JSON without its leading "kind"
// and "apiVersion" (encoding/json writes them first): list items carry no
// TypeMeta in upstream's responses. The cached encoding (with TypeMeta, as
// GET and watch need it) is written from a slice, not copied.
func writeWithoutTypeMeta(w *chunkWriter, data []byte) {
	const kindPrefix, apiVersionKey = `{"kind":"`, `","apiVersion":"`
	if bytes.HasPrefix(data, []byte(kindPrefix)) {
		if i := bytes.Index(data, []byte(apiVersionKey)); i >= 0 {
			rest := data[i+len(apiVersionKey):]
			if j := bytes.IndexByte(rest, '"'); j >= 0 && j+1 < len(rest) {
				switch rest = rest[j+1:]; rest[0] {
				case ',':
					w.WriteByte('{')
					w.Write(rest[1:])
					return
				case '}':
					w.WriteString("{}")
					return
				}
			}
		}
	}
	w.Write(data)
}
