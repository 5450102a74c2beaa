package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/matching"
	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
)

// Plugin names, as upstream's.
const (
	MutatingPluginName   = "MutatingAdmissionWebhook"
	ValidatingPluginName = "ValidatingAdmissionWebhook"
)

// Config is what the webhook plugins need.
type Config struct {
	// Getter reads configurations, namespaces, services and endpoints
	// (from the watch cache).
	Getter admission.Getter
	// Authorizer answers matchConditions' authorizer variable (nil allows
	// everything).
	Authorizer authorizer.Authorizer
	Logger     *slog.Logger
}

// dispatcher is what both plugins share.
type dispatcher struct {
	getter     admission.Getter
	authorizer authorizer.Authorizer
	logger     *slog.Logger
	src        *source
	clients    *clients
}

func newDispatcher(c Config, gr schema.GroupResource) *dispatcher {
	l := c.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &dispatcher{getter: c.Getter, authorizer: c.Authorizer, logger: l, src: &source{getter: c.Getter, gr: gr},
		clients: &clients{getter: c.Getter}}
}

// Mutating is upstream's MutatingAdmissionWebhook plugin.
type Mutating struct{ *dispatcher }

// Validating is upstream's ValidatingAdmissionWebhook plugin.
type Validating struct{ *dispatcher }

// NewMutating returns the MutatingAdmissionWebhook plugin.
func NewMutating(c Config) *Mutating {
	return &Mutating{newDispatcher(c, grMutatingConfigs)}
}

// NewValidating returns the ValidatingAdmissionWebhook plugin.
func NewValidating(c Config) *Validating {
	return &Validating{newDispatcher(c, grValidatingConfigs)}
}

func (*Mutating) Name() string                       { return MutatingPluginName }
func (*Validating) Name() string                     { return ValidatingPluginName }
func (*Mutating) Handles(admission.Operation) bool   { return true }
func (*Validating) Handles(admission.Operation) bool { return true }

// callError is upstream's ErrCallingWebhook: the webhook could not be
// called or answered nonsense; the failurePolicy decides.
type callError struct {
	name   string
	reason error
}

func (e *callError) Error() string {
	if e.reason != nil {
		return fmt.Sprintf("failed calling webhook %q: %v", e.name, e.reason)
	}
	return fmt.Sprintf("failed calling webhook %q; no further details available", e.name)
}

func (e *callError) Unwrap() error { return e.reason }

// rejection is upstream's ToStatusErr: a webhook's denial as the API
// error the client sees.
func rejection(name string, result *metav1.Status) error {
	deniedBy := fmt.Sprintf("admission webhook %q denied the request", name)
	st := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		st = *result.DeepCopy()
	}
	if st.Code < 400 {
		st.Code = 400
	}
	if st.Status == "" || st.Status == metav1.StatusSuccess {
		st.Status = metav1.StatusFailure
	}
	switch {
	case st.Message != "":
		st.Message = deniedBy + ": " + st.Message
	case st.Reason != "":
		st.Message = fmt.Sprintf("%s: %s", deniedBy, st.Reason)
	default:
		st.Message = deniedBy + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: st}
}

// dryRunUnsupported is upstream's refusal to call a webhook that may have
// side effects for a dry-run request.
func dryRunUnsupported(name string) error {
	return apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", name))
}

// versionedSet converts the request's objects to each served version a
// webhook matched, once per version.
type versionedSet struct {
	byGVR map[schema.GroupVersionResource]versioned
	// of is the object the cache was computed for (a mutating webhook's
	// patch replaces it).
	of runtime.Object
}

func (s *versionedSet) get(a *admission.Attributes, gvr schema.GroupVersionResource) (versioned, error) {
	if s.of != a.Object || s.byGVR == nil {
		s.byGVR, s.of = map[schema.GroupVersionResource]versioned{}, a.Object
	}
	if v, ok := s.byGVR[gvr]; ok {
		return v, nil
	}
	var v versioned
	if a.Versions == nil {
		v = versioned{obj: a.Object, old: a.OldObject}
	} else {
		var err error
		if a.Object != nil {
			if v.obj, err = a.Versions.ToVersion(a.Object, gvr); err != nil {
				return v, err
			}
		}
		if a.OldObject != nil {
			if v.old, err = a.Versions.ToVersion(a.OldObject, gvr); err != nil {
				return v, err
			}
		}
	}
	s.byGVR[gvr] = v
	return v, nil
}

// newRequest is the AdmissionRequest of one call.
func newRequest(uid types.UID, a *admission.Attributes, inv *invocation, v versioned) *admissionv1.AdmissionRequest {
	rk, rr := matching.RequestKind(a), matching.RequestResource(a)
	user := authenticationv1.UserInfo{}
	if a.UserInfo != nil {
		user = *a.UserInfo.DeepCopy()
	}
	dryRun := a.DryRun
	r := &admissionv1.AdmissionRequest{
		UID:                uid,
		Kind:               metav1.GroupVersionKind{Group: inv.kind.Group, Version: inv.kind.Version, Kind: inv.kind.Kind},
		Resource:           metav1.GroupVersionResource{Group: inv.resource.Group, Version: inv.resource.Version, Resource: inv.resource.Resource},
		SubResource:        a.Subresource,
		RequestKind:        &metav1.GroupVersionKind{Group: rk.Group, Version: rk.Version, Kind: rk.Kind},
		RequestResource:    &metav1.GroupVersionResource{Group: rr.Group, Version: rr.Version, Resource: rr.Resource},
		RequestSubResource: a.Subresource,
		Name:               a.Name,
		Namespace:          a.Namespace,
		Operation:          admissionv1.Operation(a.Operation),
		UserInfo:           user,
		DryRun:             &dryRun,
	}
	if v.obj != nil {
		r.Object.Object = v.obj
	}
	if v.old != nil {
		r.OldObject.Object = v.old
	}
	if a.Options != nil {
		r.Options.Object = a.Options
	}
	return r
}

// response is what a webhook answered, checked as upstream's
// VerifyAdmissionResponse.
type response struct {
	allowed          bool
	result           *metav1.Status
	patch            []byte
	patchType        admissionv1.PatchType
	warnings         []string
	auditAnnotations map[string]string
}

// rawJSON encodes an object for a RawExtension (RawExtension only
// marshals Raw).
func rawJSON(ext *runtime.RawExtension) error {
	if ext.Object == nil {
		return nil
	}
	data, err := json.Marshal(ext.Object)
	if err != nil {
		return err
	}
	ext.Raw, ext.Object = data, nil
	return nil
}

// call sends one AdmissionReview (the first version of
// admissionReviewVersions skiff speaks, as upstream) and verifies the
// answer. Errors are *callError unless the request itself is refused.
func (d *dispatcher) call(ctx context.Context, h *hook, a *admission.Attributes, inv *invocation, v versioned, mutating bool) (*response, error) {
	if a.DryRun {
		if h.sideEffects == nil {
			return nil, &callError{name: h.name, reason: fmt.Errorf("Webhook SideEffects is nil")}
		}
		if se := *h.sideEffects; se != admissionregistrationv1.SideEffectClassNone && se != admissionregistrationv1.SideEffectClassNoneOnDryRun {
			return nil, dryRunUnsupported(h.name)
		}
	}
	version := ""
	for _, rv := range h.reviewVersions {
		if rv == "v1" || rv == "v1beta1" {
			version = rv
			break
		}
	}
	if version == "" {
		return nil, &callError{name: h.name, reason: fmt.Errorf("could not create admission objects: %w",
			fmt.Errorf("webhook does not accept known AdmissionReview versions (v1, v1beta1)"))}
	}
	uid := uuid.NewUUID()
	req := newRequest(uid, a, inv, v)
	for _, ext := range []*runtime.RawExtension{&req.Object, &req.OldObject, &req.Options} {
		if err := rawJSON(ext); err != nil {
			return nil, &callError{name: h.name, reason: fmt.Errorf("could not create admission objects: %w", err)}
		}
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/" + version, Kind: "AdmissionReview"},
		Request:  req,
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, &callError{name: h.name, reason: fmt.Errorf("could not create admission objects: %w", err)}
	}
	t, err := d.clients.forConfig(h.clientConfig)
	if err != nil {
		return nil, &callError{name: h.name, reason: fmt.Errorf("could not get REST client: %w", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	var timeout time.Duration
	if deadline, ok := ctx.Deadline(); ok {
		if timeout = time.Until(deadline); timeout > 0 {
			if tr := timeout.Truncate(time.Second); tr != timeout {
				timeout = tr + time.Second
			}
		}
	}
	var out admissionv1.AdmissionReview
	if err := t.post(ctx, timeout, body, &out); err != nil {
		return nil, &callError{name: h.name, reason: fmt.Errorf("failed to call webhook: %w", err)}
	}
	resp, err := verify(uid, version, mutating, &out)
	if err != nil {
		return nil, &callError{name: h.name, reason: fmt.Errorf("received invalid webhook response: %w", err)}
	}
	for k, val := range resp.auditAnnotations {
		d.annotate(a, h.name+"/"+k, val)
	}
	for _, w := range resp.warnings {
		admission.AddWarning(ctx, w)
	}
	return resp, nil
}

// verify is upstream's VerifyAdmissionResponse.
func verify(uid types.UID, version string, mutating bool, r *admissionv1.AdmissionReview) (*response, error) {
	if r.Response == nil {
		return nil, fmt.Errorf("webhook response was absent")
	}
	out := &response{allowed: r.Response.Allowed, result: r.Response.Result, warnings: r.Response.Warnings,
		auditAnnotations: r.Response.AuditAnnotations}
	if version == "v1beta1" {
		if mutating && len(r.Response.Patch) > 0 {
			out.patch, out.patchType = r.Response.Patch, admissionv1.PatchTypeJSONPatch
		}
		return out, nil
	}
	if r.Response.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.Response.UID)
	}
	want := admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")
	if got := r.GroupVersionKind(); got != want {
		return nil, fmt.Errorf("expected webhook response of %v, got %v", want.String(), got.String())
	}
	if mutating {
		if len(r.Response.Patch) > 0 && r.Response.PatchType == nil {
			return nil, fmt.Errorf("webhook returned response.patch but not response.patchType")
		}
		if len(r.Response.Patch) == 0 && r.Response.PatchType != nil {
			return nil, fmt.Errorf("webhook returned response.patchType but not response.patch")
		}
		out.patch = r.Response.Patch
		if r.Response.PatchType != nil {
			out.patchType = *r.Response.PatchType
			if out.patchType == "" {
				return nil, fmt.Errorf("webhook returned invalid response.patchType of %q", out.patchType)
			}
		}
		return out, nil
	}
	if len(r.Response.Patch) > 0 {
		return nil, fmt.Errorf("validating webhook may not return response.patch")
	}
	if r.Response.PatchType != nil {
		return nil, fmt.Errorf("validating webhook may not return response.patchType")
	}
	return out, nil
}

// annotate records an audit annotation and logs it (skiff has no audit
// log).
func (d *dispatcher) annotate(a *admission.Attributes, key, value string) {
	a.AddAnnotation(key, value)
	d.logger.Debug("admission webhook audit annotation", "resource", a.Resource.String(), "namespace", a.Namespace,
		"name", a.Name, "key", key, "value", value)
}

// failedOpen handles a call error of a webhook with failurePolicy Ignore.
func (d *dispatcher) failedOpen(a *admission.Attributes, h *hook, key string, err error) {
	if errors.Is(err, context.Canceled) {
		d.logger.Warn("Context canceled when calling webhook", "webhook", h.name)
		return
	}
	d.logger.Warn("Failed calling webhook, failing open", "webhook", h.name, "err", err)
	d.annotate(a, key, h.name)
}

// --- validating ------------------------------------------------------------

// Validate calls every matching validating webhook in parallel, as
// upstream, and returns the first refusal (in webhook order).
func (p *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) {
		return nil
	}
	hooks, err := p.src.webhooks(ctx)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(hooks) == 0 {
		return nil
	}
	vs := &versionedSet{}
	var invs []*invocation
	var objs []versioned
	for _, h := range hooks {
		inv, err := p.shouldCall(ctx, h, a, vs)
		if err != nil {
			return err
		}
		if inv == nil {
			continue
		}
		v, err := vs.get(a, inv.resource)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		invs, objs = append(invs, inv), append(objs, v)
	}
	if len(invs) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
	}
	errs := make([]error, len(invs))
	var wg sync.WaitGroup
	for i := range invs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			h := invs[i].hook
			defer func() {
				if r := recover(); r != nil {
					if h.ignoresFailures() {
						p.failedOpen(a, h, fmt.Sprintf("failed-open.validating.webhook.admission.k8s.io/round_0_index_%d", i), fmt.Errorf("panic: %v", r))
						return
					}
					errs[i] = apierrors.NewInternalError(fmt.Errorf("ValidatingAdmissionWebhook/%v has panicked: %v", h.name, r))
				}
			}()
			resp, err := p.call(ctx, h, a, invs[i], objs[i], false)
			var ce *callError
			switch {
			case errors.As(err, &ce):
				if h.ignoresFailures() {
					p.failedOpen(a, h, fmt.Sprintf("failed-open.validating.webhook.admission.k8s.io/round_0_index_%d", i), ce)
					return
				}
				p.logger.Warn("Failed calling webhook, failing closed", "webhook", h.name, "err", err)
				errs[i] = apierrors.NewInternalError(ce)
			case err != nil:
				errs[i] = err
			case !resp.allowed:
				errs[i] = rejection(h.name, resp.result)
			}
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// --- mutating --------------------------------------------------------------

// reinvokeState is the mutating webhooks' part of the request's
// reinvocation state (upstream's webhookReinvokeContext).
type reinvokeState struct {
	lastOutput runtime.Object
	// previouslyInvoked are the IfNeeded webhooks called so far;
	// toReinvoke those to call again in the second round.
	previouslyInvoked map[string]bool
	toReinvoke        map[string]bool
}

func (s *reinvokeState) requireReinvokingPreviouslyInvoked() {
	if len(s.previouslyInvoked) == 0 {
		return
	}
	if s.toReinvoke == nil {
		s.toReinvoke = map[string]bool{}
	}
	for k := range s.previouslyInvoked {
		s.toReinvoke[k] = true
	}
}

// Admit calls every matching mutating webhook in order, applying each
// one's JSON patch before calling the next; on the chain's second round
// (reinvocation) only the IfNeeded webhooks called before a later change
// are called again.
func (p *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) {
		return nil
	}
	hooks, err := p.src.webhooks(ctx)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(hooks) == 0 {
		return nil
	}
	rs, _ := a.Reinvocation.Value(MutatingPluginName).(*reinvokeState)
	if rs == nil {
		rs = &reinvokeState{}
		a.Reinvocation.SetValue(MutatingPluginName, rs)
	}
	if a.Reinvocation.IsReinvoke && rs.lastOutput != nil && !apiequality.Semantic.DeepEqual(rs.lastOutput, a.Object) {
		// a built-in plugin changed the object in the second round
		rs.requireReinvokingPreviouslyInvoked()
	}
	defer func() {
		if a.Object != nil {
			rs.lastOutput = a.Object.DeepCopyObject()
		}
	}()
	round := 0
	if a.Reinvocation.IsReinvoke {
		round = 1
	}
	vs := &versionedSet{}
	for i, h := range hooks {
		inv, err := p.shouldCall(ctx, h, a, vs)
		if err != nil {
			return err
		}
		if inv == nil {
			continue
		}
		if a.Reinvocation.IsReinvoke && !rs.toReinvoke[h.uid] {
			continue
		}
		changed, err := p.callMutating(ctx, h, a, inv, vs, round, i)
		if changed {
			rs.requireReinvokingPreviouslyInvoked()
			a.Reinvocation.ShouldReinvoke = true
		}
		if h.reinvoke {
			if rs.previouslyInvoked == nil {
				rs.previouslyInvoked = map[string]bool{}
			}
			rs.previouslyInvoked[h.uid] = true
		}
		if err == nil {
			continue
		}
		var ce *callError
		if errors.As(err, &ce) {
			if h.ignoresFailures() {
				p.failedOpen(a, h, fmt.Sprintf("failed-open.mutation.webhook.admission.k8s.io/round_%d_index_%d", round, i), ce)
				continue
			}
			p.logger.Warn("Failed calling webhook, failing closed", "webhook", h.name, "err", err)
			return apierrors.NewInternalError(ce)
		}
		return err
	}
	return nil
}

// callMutating calls one mutating webhook and applies its patch to
// a.Object: the patched JSON of the version the webhook saw is decoded,
// defaulted and converted back to the storage form. It reports whether the
// object changed.
func (p *Mutating) callMutating(ctx context.Context, h *hook, a *admission.Attributes, inv *invocation, vs *versionedSet, round, idx int) (changed bool, err error) {
	defer func() {
		mutated, _ := json.Marshal(map[string]any{"configuration": h.configName, "webhook": h.name, "mutated": changed})
		p.annotate(a, fmt.Sprintf("mutation.webhook.admission.k8s.io/round_%d_index_%d", round, idx), string(mutated))
	}()
	v, err := vs.get(a, inv.resource)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	resp, err := p.call(ctx, h, a, inv, v, true)
	if err != nil {
		return false, err
	}
	if !resp.allowed {
		return false, rejection(h.name, resp.result)
	}
	if len(resp.patch) == 0 {
		return false, nil
	}
	patch, err := decodePatch(resp.patch)
	if err != nil {
		return false, &callError{name: h.name, reason: fmt.Errorf("received undecodable patch in webhook response: %w", err)}
	}
	if len(patch) == 0 {
		return false, nil
	}
	if v.obj == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.name))
	}
	if resp.patchType != admissionv1.PatchTypeJSONPatch {
		return false, &callError{name: h.name, reason: fmt.Errorf("unsupported patch type %q", resp.patchType)}
	}
	if a.Versions == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this subresource", h.name))
	}
	objJS, err := json.Marshal(v.obj)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	patched, err := patch.Apply(objJS)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	out, err := a.Versions.FromJSON(patched, inv.resource)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	changed = !apiequality.Semantic.DeepEqual(a.Object, out)
	patchNote, _ := json.Marshal(map[string]any{"configuration": h.configName, "webhook": h.name,
		"patch": json.RawMessage(resp.patch), "patchType": string(admissionv1.PatchTypeJSONPatch)})
	p.annotate(a, fmt.Sprintf("patch.webhook.admission.k8s.io/round_%d_index_%d", round, idx), string(patchNote))
	a.Object = out
	return changed, nil
}
