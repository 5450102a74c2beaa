package apiserver

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/fieldmanager"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
)

var (
	grPods         = schema.GroupResource{Resource: "pods"}
	grNamespaces   = schema.GroupResource{Resource: "namespaces"}
	grServices     = schema.GroupResource{Resource: "services"}
	grPDBs         = schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}
	scaleGVK       = schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	bindingGVK     = schema.GroupVersionKind{Version: "v1", Kind: "Binding"}
	evictionGVK    = schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}
	scaleQualified = schema.GroupKind{Group: "autoscaling", Kind: "Scale"}
)

// --- scale -------------------------------------------------------------------

// serveScale serves the autoscaling/v1 Scale view of a workload: reading it
// reports desired and current replicas and the selector; writing it changes
// the workload's spec.replicas.
func (s *Server) serveScale(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	sf := e.def.Scale
	writeScale := func(code int, obj runtime.Object) error {
		sc, err := sf.Get(storage.Unwrap(obj))
		if err != nil {
			return err
		}
		sc.SetGroupVersionKind(scaleGVK)
		s.writeObject(w, r, code, m, sc)
		return nil
	}
	if info.Verb == "get" {
		obj, err := e.store.Get(r.Context(), info.Namespace, info.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return writeScale(http.StatusOK, obj)
	}
	if info.Verb != "update" && info.Verb != "patch" {
		return methodNotSupported(schema.GroupResource{Group: e.qualified.Group, Resource: e.qualified.Resource + "/scale"}, info.Verb)
	}
	optionsKind := "UpdateOptions"
	if info.Verb == "patch" {
		optionsKind = "PatchOptions"
	}
	o, err := parseWriteOptions(r.URL.Query(), optionsKind)
	if err != nil {
		return err
	}
	var (
		desired *autoscalingv1.Scale
		body    []byte
	)
	if info.Verb == "update" {
		obj, err := s.readTyped(w, r, scaleGVK, &autoscalingv1.Scale{}, &o)
		if err != nil {
			return err
		}
		desired = obj.(*autoscalingv1.Scale)
	} else if body, err = readBody(r, s.cfg.MaxRequestBodyBytes); err != nil {
		return err
	}
	patchType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	manager := fieldmanager.ManagerName(o.FieldManager, r.UserAgent())
	apply := info.Verb == "patch" && types.PatchType(patchType) == types.ApplyYAMLPatchType
	if info.Verb == "patch" {
		if errs := patchOptionErrors(apply, o); len(errs) > 0 {
			return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
		}
	}
	newObj := func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		if apply {
			obj, err := s.applyScale(e, storage.Unwrap(old), body, o)
			if err != nil {
				return nil, err
			}
			return s.admitScale(ctx, info, e, obj, old, o)
		}
		cur, err := sf.Get(old)
		if err != nil {
			return nil, err
		}
		target := desired
		if info.Verb == "patch" {
			cur.SetGroupVersionKind(scaleGVK)
			if target, err = s.patchScale(cur, types.PatchType(patchType), body); err != nil {
				return nil, err
			}
		} else if target.ResourceVersion != "" && target.ResourceVersion != cur.ResourceVersion {
			return nil, apierrors.NewConflict(e.qualified, info.Name, fmt.Errorf(registry.OptimisticLockErrorMsg))
		}
		if target.Spec.Replicas < 0 {
			return nil, apierrors.NewInvalid(scaleQualified, info.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), target.Spec.Replicas, "must be greater than or equal to 0")})
		}
		obj := old.DeepCopyObject()
		sf.SetReplicas(obj, target.Spec.Replicas)
		return s.admitScale(ctx, info, e, s.trackUpdate(e, "scale", old, obj, manager), old, o)
	}
	out, _, err := e.store.Update(r.Context(), info.Namespace, info.Name, &objInfo{update: newObj}, nil,
		func(ctx context.Context, obj, old runtime.Object) error {
			a, err := s.scaleAttributes(ctx, info, e, obj, old, o)
			if err != nil {
				return err
			}
			return s.admission.Validate(ctx, a)
		}, registry.UpdateOptions{DryRun: o.DryRun})
	if err != nil {
		return err
	}
	return writeScale(http.StatusOK, out)
}

// applyScale serves a server-side apply of the scale subresource as
// upstream: the parent's managedFields are shown to a Scale field manager
// as Scale fields (the replicas path mapped to .spec.replicas), the apply
// merges there, and the result goes back to the parent (ScaleHandler).
func (s *Server) applyScale(e *endpoint, parent runtime.Object, body []byte, o writeOptions) (runtime.Object, error) {
	sf := e.def.Scale
	cur, err := sf.Get(parent)
	if err != nil {
		return nil, err
	}
	cur.SetGroupVersionKind(scaleGVK)
	pm, err := apimeta.Accessor(parent)
	if err != nil {
		return nil, err
	}
	path, err := s.replicasPath(e)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	mappings := managedfields.ResourcePathMappings{}
	for gvk, ep := range s.kinds {
		if sameResource(ep, e) {
			mappings[gvk.GroupVersion().String()] = path
		}
	}
	for _, ep := range s.crs.Load().kinds {
		if sameResource(ep, e) {
			mappings[ep.gvk.GroupVersion().String()] = path
		}
	}
	sh := managedfields.NewScaleHandler(pm.GetManagedFields(), e.gvk.GroupVersion(), mappings)
	if cur.ManagedFields, err = sh.ToSubresource(); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	applied, err := fieldmanager.DecodeApply(body)
	if err != nil {
		return nil, err
	}
	fm, err := s.fields.For(fieldmanager.Kind{GVK: scaleGVK, Hub: scaleGVK.GroupVersion(), Subresource: "scale"})
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	merged, err := fm.Apply(cur, applied, o.FieldManager, o.Force)
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); ok {
			return nil, err
		}
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusInternalServerError, Message: err.Error()}}
	}
	target, err := (fieldConvertor{s}).ConvertToVersion(merged, scaleGVK.GroupVersion())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	sc := target.(*autoscalingv1.Scale)
	if sc.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(scaleQualified, cur.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
	}
	entries, err := sh.ToParent(sc.ManagedFields)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	for i := range entries {
		// ToParent keeps the parent's times: a manager new to the parent
		// has none, give it the apply's.
		if entries[i].Time == nil && entries[i].Manager == o.FieldManager {
			for _, se := range sc.ManagedFields {
				if se.Manager == o.FieldManager && se.Time != nil {
					t := *se.Time
					entries[i].Time = &t
				}
			}
		}
	}
	obj := parent.DeepCopyObject()
	sf.SetReplicas(obj, sc.Spec.Replicas)
	om, _ := apimeta.Accessor(obj)
	om.SetManagedFields(entries)
	storage.InternManagedFields(obj)
	return obj, nil
}

// replicasPath finds where e's objects keep their desired replicas: the
// field SetReplicas writes.
func (s *Server) replicasPath(e *endpoint) (fieldpath.Path, error) {
	obj := e.def.New()
	e.def.Scale.SetReplicas(obj, 7919)
	var content map[string]any
	if u, ok := obj.(runtime.Unstructured); ok {
		content = u.UnstructuredContent()
	} else {
		var err error
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	var find func(m map[string]any, at []any) []any
	find = func(m map[string]any, at []any) []any {
		for k, v := range m {
			switch v := v.(type) {
			case int64:
				if v == 7919 {
					return append(at, k)
				}
			case map[string]any:
				if p := find(v, append(append([]any(nil), at...), k)); p != nil {
					return p
				}
			}
		}
		return nil
	}
	p := find(content, nil)
	if p == nil {
		return nil, fmt.Errorf("%s: cannot tell where the scale subresource keeps replicas", e.qualified)
	}
	return fieldpath.MakePath(p...)
}

func (s *Server) patchScale(cur *autoscalingv1.Scale, pt types.PatchType, body []byte) (*autoscalingv1.Scale, error) {
	current, err := s.codecs.encodeItemJSONRaw(cur)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(body)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if patched, err = p.Apply(current); err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	case types.MergePatchType:
		if patched, err = jsonpatch.MergePatch(current, body); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		if patched, err = strategicpatch.StrategicMergePatch(current, body, &autoscalingv1.Scale{}); err != nil {
			return nil, interpretPatchError(err)
		}
	default:
		return nil, unsupportedMediaType(string(pt))
	}
	res, err := s.codecs.decode(bodyJSON, patched, scaleGVK, &autoscalingv1.Scale{})
	if err != nil {
		return nil, err
	}
	return res.obj.(*autoscalingv1.Scale), nil
}

// --- binding -----------------------------------------------------------------

// serveBinding assigns a pod to a node (the scheduler's write): it sets
// spec.nodeName once and marks the pod PodScheduled.
func (s *Server) serveBinding(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	o, err := parseWriteOptions(r.URL.Query(), "CreateOptions")
	if err != nil {
		return err
	}
	obj, err := s.readTyped(w, r, bindingGVK, &corev1.Binding{}, &o)
	if err != nil {
		return err
	}
	b := obj.(*corev1.Binding)
	if b.Name != "" && b.Name != info.Name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, info.Name))
	}
	// Admission sees a create of pods/binding whose object is the Binding,
	// as upstream's.
	b.SetGroupVersionKind(bindingGVK)
	attrs := s.attributes(r.Context(), admission.Create, info, e, b, nil, o)
	attrs.Kind, attrs.RequestKind = bindingGVK.GroupKind(), bindingGVK
	attrs.Versions = subresourceVersions{v: &admissionVersions{s: s, e: e}, gvk: bindingGVK, newObj: func() runtime.Object { return &corev1.Binding{} }}
	return s.bindPod(w, r, m, o, info.Namespace, info.Name, attrs, e)
}

// serveBindings answers POST /api/v1/namespaces/{ns}/bindings, the older
// form of pods/{name}/binding that upstream still serves (and lists in
// discovery): the Binding's own metadata.name names the pod.
func (s *Server) serveBindings(w http.ResponseWriter, r *http.Request, info *RequestInfo) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	o, err := parseWriteOptions(r.URL.Query(), "CreateOptions")
	if err != nil {
		return err
	}
	obj, err := s.readTyped(w, r, bindingGVK, &corev1.Binding{}, &o)
	if err != nil {
		return err
	}
	b := obj.(*corev1.Binding)
	if b.Namespace != "" && b.Namespace != info.Namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if b.Name == "" {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, "", field.ErrorList{
			field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	pods := s.endpoints[schema.GroupVersionResource{Version: "v1", Resource: "pods"}]
	// Admission sees a create of the resource bindings (not pods/binding),
	// as upstream's.
	b.SetGroupVersionKind(bindingGVK)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "bindings"}
	attrs := &admission.Attributes{Operation: admission.Create, Resource: gvr.GroupResource(), Kind: bindingGVK.GroupKind(),
		Namespace: info.Namespace, Name: b.Name, Object: b, DryRun: o.DryRun, RequestResource: gvr, RequestKind: bindingGVK,
		Options: o.forOperation(admission.Create), UserInfo: registry.UserFrom(r.Context()),
		Versions: bindingsVersions{s: s}}
	return s.bindPod(w, r, m, o, info.Namespace, b.Name, attrs, pods)
}

// bindingsVersions converts the Binding of core/v1 bindings, a resource
// served in one version only, for admission webhooks.
type bindingsVersions struct{ s *Server }

var bindingsGVR = schema.GroupVersionResource{Version: "v1", Resource: "bindings"}

func (bindingsVersions) Equivalents() []schema.GroupVersionResource {
	return []schema.GroupVersionResource{bindingsGVR}
}

func (bindingsVersions) KindFor(gvr schema.GroupVersionResource) schema.GroupVersionKind {
	if gvr != bindingsGVR {
		return schema.GroupVersionKind{}
	}
	return bindingGVK
}

func (bindingsVersions) ToVersion(obj runtime.Object, _ schema.GroupVersionResource) (runtime.Object, error) {
	if _, ok := obj.(*corev1.Binding); !ok {
		return nil, fmt.Errorf("unexpected Binding object %T", obj)
	}
	out := obj.DeepCopyObject()
	out.GetObjectKind().SetGroupVersionKind(bindingGVK)
	return out, nil
}

func (v bindingsVersions) FromJSON(data []byte, _ schema.GroupVersionResource) (runtime.Object, error) {
	res, err := v.s.codecs.decode(bodyJSON, data, bindingGVK, &corev1.Binding{})
	if err != nil {
		return nil, err
	}
	return res.obj, nil
}

// bindPod writes binding b of pod ns/name through the pods endpoint e.
// Mutating admission runs first (a webhook may patch the Binding), then the
// Binding's validation, then validating admission, as upstream's.
func (s *Server) bindPod(w http.ResponseWriter, r *http.Request, m mediaType, o writeOptions, ns, name string, attrs *admission.Attributes, e *endpoint) error {
	info := &RequestInfo{Namespace: ns, Name: name}
	if err := s.admit(r.Context(), attrs); err != nil {
		return err
	}
	b, ok := attrs.Object.(*corev1.Binding)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("unexpected binding object %T after admission", attrs.Object))
	}
	if b.Name != "" && b.Name != name {
		return apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, info.Name, field.ErrorList{
			field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"})})
	}
	if b.Target.Name == "" {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Binding"}, info.Name, field.ErrorList{
			field.Required(field.NewPath("target", "name"), "")})
	}
	if err := s.admission.Validate(r.Context(), attrs); err != nil {
		return err
	}
	labelsToo := s.cfg.PodTopologyLabelsAdmission
	grBinding := schema.GroupResource{Resource: "pods/binding"}
	newObj := func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		// Storage hands the update its own copy of the stored pod (a
		// retry gets a fresh one): change it in place, as upstream's
		// binding does.
		pod, ok := old.(*corev1.Pod)
		if !ok {
			pod = old.DeepCopyObject().(*corev1.Pod)
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(grBinding, info.Name, fmt.Errorf("pod %v is being deleted, cannot be assigned to a host", info.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(grBinding, info.Name, fmt.Errorf("pod %v is already assigned to node %q", info.Name, pod.Spec.NodeName))
		}
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(grBinding, info.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if len(pod.Spec.SchedulingGates) != 0 {
			return nil, apierrors.NewConflict(grBinding, info.Name, fmt.Errorf("pod %v has non-empty .spec.schedulingGates", info.Name))
		}
		pod.Spec.NodeName = b.Target.Name
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		// Upstream copies the Binding's labels too, overwriting the pod's,
		// only with the PodTopologyLabelsAdmission feature gate on.
		if labelsToo {
			for k, v := range b.Labels {
				if pod.Labels == nil {
					pod.Labels = map[string]string{}
				}
				pod.Labels[k] = v
			}
		}
		setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, s.cfg.Clock.Now())
		return pod, nil
	}
	// The binding writes spec and status together, so it bypasses the main
	// resource's status reset.
	bs := *e.store
	strategy := *e.store.Strategy
	strategy.HasStatus = false
	strategy.PrepareForUpdate = nil
	// Setting spec.nodeName is exactly what pod update validation forbids.
	strategy.ValidateUpdate = nil
	// Upstream's binding writes storage directly, past the strategy that
	// bumps metadata.generation on a spec change: a bound pod keeps its
	// generation (and no spec comparison is made).
	strategy.Generation = false
	bs.Strategy = &strategy
	if _, _, err := bs.Update(r.Context(), info.Namespace, info.Name, &objInfo{update: newObj}, nil, nil, registry.UpdateOptions{DryRun: o.DryRun}); err != nil {
		return err
	}
	s.writeObject(w, r, http.StatusCreated, m, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
	return nil
}

func setPodCondition(st *corev1.PodStatus, c corev1.PodCondition, now interface{ Unix() int64 }) {
	ts := metav1.Unix(now.Unix(), 0)
	c.LastTransitionTime = ts
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status != c.Status {
				st.Conditions[i] = c
			}
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// --- eviction ----------------------------------------------------------------

// maxDisruptedPods bounds a PodDisruptionBudget's status.disruptedPods: past
// it, evictions wait for the disruption controller to catch up (upstream's
// MaxDisruptedPodSize).
const maxDisruptedPods = 2000

// evictionConflictRetries bounds how often an eviction that ignores the
// budget re-reads a pod that changed under it.
const evictionConflictRetries = 5

// serveEviction deletes a pod if its PodDisruptionBudget allows, as kubectl
// drain does through the eviction API; otherwise 429. Pods that are not
// running (pending, finished or already deleting) are deleted without
// consulting a budget, as upstream.
func (s *Server) serveEviction(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	o, err := parseWriteOptions(r.URL.Query(), "CreateOptions")
	if err != nil {
		return err
	}
	body, err := readBody(r, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return err
	}
	format, err := bodyFormat(r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	// Old clients send policy/v1beta1 Evictions; the fields are the same.
	res, err := s.codecs.decode(format, body, evictionGVK, &policyv1.Eviction{})
	if err != nil {
		res2, err2 := s.codecs.decode(format, body, schema.GroupVersionKind{Group: "policy", Version: "v1beta1", Kind: "Eviction"}, &policyv1.Eviction{})
		if err2 != nil {
			return err
		}
		res = res2
	}
	ev, ok := res.obj.(*policyv1.Eviction)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("unexpected eviction object %T", res.obj))
	}
	if ev.Namespace != "" && ev.Namespace != info.Namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	// Admission sees the Eviction as a create of pods/eviction, as
	// upstream's: mutating admission first (a webhook may patch the
	// Eviction), the name check and validating admission after it.
	ev.SetGroupVersionKind(evictionGVK)
	attrs := s.attributes(r.Context(), admission.Create, info, e, ev, nil, o)
	attrs.Kind, attrs.RequestKind = evictionGVK.GroupKind(), evictionGVK
	attrs.Versions = subresourceVersions{v: &admissionVersions{s: s, e: e}, gvk: evictionGVK, newObj: func() runtime.Object { return &policyv1.Eviction{} }}
	if err := s.admit(r.Context(), attrs); err != nil {
		return err
	}
	if ev, ok = attrs.Object.(*policyv1.Eviction); !ok {
		return apierrors.NewInternalError(fmt.Errorf("unexpected eviction object %T after admission", attrs.Object))
	}
	if ev.Name != info.Name {
		return apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if err := s.admission.Validate(r.Context(), attrs); err != nil {
		return err
	}
	// The request's dryRun applies unless the Eviction's DeleteOptions say.
	opts := &metav1.DeleteOptions{}
	if ev.DeleteOptions != nil {
		opts = ev.DeleteOptions.DeepCopy()
	}
	if len(opts.DryRun) == 0 && o.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	for _, d := range opts.DryRun {
		if d != metav1.DryRunAll {
			return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "",
				field.ErrorList{field.NotSupported(field.NewPath("dryRun"), d, []string{metav1.DryRunAll})})
		}
	}
	dryRun := len(opts.DryRun) > 0
	ctx := r.Context()
	success := func() error {
		s.writeObject(w, r, http.StatusCreated, m, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
		return nil
	}

	// A pod that is not running has disrupted nothing a budget guards: it
	// goes at once (pinned to the version looked at, so that it does not
	// start running in between).
	var pod *corev1.Pod
	for attempt := 1; ; attempt++ {
		obj, err := e.store.Get(ctx, info.Namespace, info.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod = storage.Unwrap(obj).(*corev1.Pod)
		if !evictionIgnoresBudget(pod) {
			break
		}
		del := opts
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodPending && rvUnset(opts) {
			del = withResourceVersion(opts, pod.ResourceVersion)
		}
		err = s.evictPod(ctx, e, info, del)
		if err == nil {
			return success()
		}
		if !apierrors.IsConflict(err) || !rvUnset(opts) || attempt == evictionConflictRetries {
			return err
		}
	}

	pdbs, err := s.podDisruptionBudgets(ctx, pod)
	if err != nil {
		return err
	}
	if len(pdbs) > 1 {
		// Upstream returns this Status as the eviction's result: 201 with a
		// Failure body.
		s.writeObject(w, r, http.StatusCreated, m, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."})
		return nil
	}
	del := opts
	pdbName := ""
	if len(pdbs) == 1 {
		pdb := pdbs[0]
		pdbName = pdb.Name
		// An unready pod counts for nothing in the budget: it may go without
		// using up a disruption when the policy says so or the budget is
		// met anyway, provided it does not become ready meanwhile.
		unhealthyMayGo := !podReady(pod) &&
			((pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow) ||
				(pdb.Status.DesiredHealthy > 0 && pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy))
		if unhealthyMayGo {
			del = withResourceVersion(opts, pod.ResourceVersion)
		} else if err := s.consumeDisruption(ctx, pod, pdb, dryRun); err != nil {
			return err
		}
	}
	if err := s.evictPod(ctx, e, info, del); err != nil {
		if apierrors.IsConflict(err) && del != opts && rvUnset(opts) {
			return budgetProcessingError(pdbName)
		}
		return err
	}
	return success()
}

// evictionIgnoresBudget: pods that finished, never started or are already
// being deleted are evicted without asking their budget.
func evictionIgnoresBudget(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func rvUnset(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil
}

func withResourceVersion(opts *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	out := opts.DeepCopy()
	if out.Preconditions == nil {
		out.Preconditions = &metav1.Preconditions{}
	}
	out.Preconditions.ResourceVersion = &rv
	return out
}

// evictPod marks the pod DisruptionTarget (reason EvictionByEvictionAPI)
// and deletes it with opts.
func (s *Server) evictPod(ctx context.Context, e *endpoint, info *RequestInfo, opts *metav1.DeleteOptions) error {
	if len(opts.DryRun) == 0 && e.status != nil {
		grPod := schema.GroupResource{Resource: "Pod"}
		out, _, err := e.status.Update(ctx, info.Namespace, info.Name, &objInfo{update: func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
			pod := storage.Unwrap(old).(*corev1.Pod).DeepCopy()
			if p := opts.Preconditions; p != nil {
				if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
					return nil, apierrors.NewConflict(grPod, pod.Name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
				}
				if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
					return nil, apierrors.NewConflict(grPod, pod.Name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
				}
			}
			setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"}, s.cfg.Clock.Now())
			return pod, nil
		}}, nil, nil, registry.UpdateOptions{})
		if err != nil {
			return err
		}
		if !rvUnset(opts) {
			// The condition is our own write: the precondition moves with it.
			if a, err := apimeta.Accessor(storage.Unwrap(out)); err == nil {
				opts = withResourceVersion(opts, a.GetResourceVersion())
			}
		}
	}
	_, err := e.store.Delete(ctx, info.Namespace, info.Name, opts, nil)
	return err
}

// podDisruptionBudgets are the budgets in the pod's namespace whose
// selector matches it (an empty policy/v1 selector matches every pod, a
// missing one none).
func (s *Server) podDisruptionBudgets(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	st := s.stores[grPDBs]
	if st == nil {
		return nil, nil
	}
	objs, _, err := st.List(ctx, pod.Namespace, registry.ListOptions{})
	if err != nil {
		return nil, err
	}
	var pdbs []*policyv1.PodDisruptionBudget
	for _, o := range objs {
		pdb := storage.Unwrap(o).(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		pdbs = append(pdbs, pdb)
	}
	return pdbs, nil
}

// budgetProcessingError is the 429 for a budget the disruption controller
// has not caught up with.
func budgetProcessingError(pdbName string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName),
	})
	return err
}

// checkDisruption says whether the budget allows one more disruption now.
func checkDisruption(pdb *policyv1.PodDisruptionBudget) error {
	grPDB := schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return budgetProcessingError(pdb.Name)
	case pdb.Status.DisruptionsAllowed < 0:
		return apierrors.NewForbidden(grPDB, pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	case len(pdb.Status.DisruptedPods) > maxDisruptedPods:
		return apierrors.NewForbidden(grPDB, pdb.Name, fmt.Errorf("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	case pdb.Status.DisruptionsAllowed == 0:
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy),
		})
		return err
	}
	return nil
}

// consumeDisruption uses up one allowed disruption of the budget and
// records the pod in status.disruptedPods, so that the disruption
// controller does not count it as available meanwhile. A dry run only
// checks.
func (s *Server) consumeDisruption(ctx context.Context, pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget, dryRun bool) error {
	if dryRun {
		return checkDisruption(pdb)
	}
	st := s.stores[grPDBs]
	status := *st
	status.Strategy = registry.StatusStrategy(st.Strategy, nil)
	// The update works on the stored budget, re-read on every conflict.
	_, _, err := status.Update(ctx, pdb.Namespace, pdb.Name, &objInfo{update: func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		cur := storage.Unwrap(old).(*policyv1.PodDisruptionBudget).DeepCopy()
		if err := checkDisruption(cur); err != nil {
			return nil, err
		}
		now := metav1.NewTime(s.cfg.Clock.Now())
		cur.Status.DisruptionsAllowed--
		if cur.Status.DisruptionsAllowed == 0 {
			apimeta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{
				Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
				Reason: policyv1.InsufficientPodsReason, ObservedGeneration: cur.Status.ObservedGeneration,
				LastTransitionTime: now,
			})
		}
		if cur.Status.DisruptedPods == nil {
			cur.Status.DisruptedPods = map[string]metav1.Time{}
		}
		cur.Status.DisruptedPods[pod.Name] = now
		return cur, nil
	}}, nil, nil, registry.UpdateOptions{})
	return err
}

// --- namespace finalize ------------------------------------------------------

// serveFinalize updates a namespace's spec.finalizers (the namespace
// controller's last step); with none left a terminating namespace is deleted.
func (s *Server) serveFinalize(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
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
	want := obj.(*corev1.Namespace)
	out, _, err := s.finalizeStore(e.store).Update(r.Context(), "", info.Name, &objInfo{update: func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		ns := old.DeepCopyObject().(*corev1.Namespace)
		if want.ResourceVersion != "" && want.ResourceVersion != ns.ResourceVersion {
			return nil, apierrors.NewConflict(grNamespaces, info.Name, fmt.Errorf(registry.OptimisticLockErrorMsg))
		}
		ns.Spec.Finalizers = want.Spec.Finalizers
		return ns, nil
	}}, nil, nil, registry.UpdateOptions{DryRun: o.DryRun})
	if err != nil {
		return err
	}
	s.writeObject(w, r, http.StatusOK, m, out)
	return nil
}

// finalizeStore is the namespaces store as the finalize subresource uses it:
// spec.finalizers may change.
func (s *Server) finalizeStore(st *registry.Store) *registry.Store {
	fs := *st
	strategy := *st.Strategy
	strategy.PrepareForUpdate = nil
	strategy.ValidateUpdate = nil
	fs.Strategy = &strategy
	return &fs
}

// scaleAttributes are the admission attributes of a scale update, as
// upstream's: the objects are the parent's Scale (autoscaling/v1), the
// resource the parent's with subresource scale.
func (s *Server) scaleAttributes(ctx context.Context, info *RequestInfo, e *endpoint, obj, old runtime.Object, o writeOptions) (*admission.Attributes, error) {
	sc, err := e.def.Scale.Get(storage.Unwrap(obj))
	if err != nil {
		return nil, err
	}
	oldSc, err := e.def.Scale.Get(storage.Unwrap(old))
	if err != nil {
		return nil, err
	}
	sc.SetGroupVersionKind(scaleGVK)
	oldSc.SetGroupVersionKind(scaleGVK)
	a := s.attributes(ctx, admission.Update, info, e, sc, oldSc, o)
	a.Kind, a.RequestKind = scaleGVK.GroupKind(), scaleGVK
	a.Versions = subresourceVersions{v: &admissionVersions{s: s, e: e}, gvk: scaleGVK, newObj: func() runtime.Object { return &autoscalingv1.Scale{} }}
	return a, nil
}

// admitScale runs mutating admission on the Scale of a scale update and
// applies the replicas it ends with to the parent obj.
func (s *Server) admitScale(ctx context.Context, info *RequestInfo, e *endpoint, obj, old runtime.Object, o writeOptions) (runtime.Object, error) {
	a, err := s.scaleAttributes(ctx, info, e, obj, old, o)
	if err != nil {
		return nil, err
	}
	want := a.Object.(*autoscalingv1.Scale).Spec.Replicas
	if err := s.admission.Admit(ctx, a); err != nil {
		return nil, err
	}
	if got := a.Object.(*autoscalingv1.Scale).Spec.Replicas; got != want {
		if got < 0 {
			return nil, apierrors.NewInvalid(scaleQualified, info.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), got, "must be greater than or equal to 0")})
		}
		e.def.Scale.SetReplicas(obj, got)
	}
	return obj, nil
}

// subresourceVersions converts the object of a subresource whose kind is
// the same in every served version of its parent resource (the
// autoscaling/v1 Scale of scale, the policy/v1 Eviction of eviction) for
// admission webhooks.
type subresourceVersions struct {
	v      *admissionVersions
	gvk    schema.GroupVersionKind
	newObj func() runtime.Object
}

func (sv subresourceVersions) Equivalents() []schema.GroupVersionResource { return sv.v.Equivalents() }

func (sv subresourceVersions) KindFor(gvr schema.GroupVersionResource) schema.GroupVersionKind {
	if sv.v.KindFor(gvr).Empty() {
		return schema.GroupVersionKind{}
	}
	return sv.gvk
}

func (sv subresourceVersions) ToVersion(obj runtime.Object, _ schema.GroupVersionResource) (runtime.Object, error) {
	if reflect.TypeOf(obj) != reflect.TypeOf(sv.newObj()) {
		return nil, fmt.Errorf("unexpected %s object %T", sv.gvk.Kind, obj)
	}
	out := obj.DeepCopyObject()
	out.GetObjectKind().SetGroupVersionKind(sv.gvk)
	return out, nil
}

func (sv subresourceVersions) FromJSON(data []byte, _ schema.GroupVersionResource) (runtime.Object, error) {
	res, err := sv.v.s.codecs.decode(bodyJSON, data, sv.gvk, sv.newObj())
	if err != nil {
		return nil, err
	}
	return res.obj, nil
}
