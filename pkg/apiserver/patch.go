package apiserver

import (
	"context"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/apiserver/fieldmanager"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// patch applies a JSON patch, JSON merge patch, strategic merge patch or
// server-side apply to the stored object and updates it. The patch is
// re-applied to the fresh object when a concurrent write wins, so a patch
// without a resourceVersion never conflicts. An apply creates a missing
// object.
func (s *Server) patch(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint, st *registry.Store) error {
	m, err := negotiate(r.Header.Get("Accept"), true, func(m mediaType) bool { return m.As == "" || m.As == "PartialObjectMetadata" })
	if err != nil {
		return err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	pt := types.PatchType(ct)
	if e.cr != nil && pt == types.StrategicMergePatchType {
		// Custom resources have no patch strategies: upstream refuses.
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s",
				types.JSONPatchType, types.MergePatchType, types.ApplyYAMLPatchType),
		}}
	}
	switch pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType:
	default:
		// apply-patch+cbor included: upstream accepts it only with its
		// test-only CBOR feature gate, and skiff serves no CBOR.
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s, %s, %s",
				types.JSONPatchType, types.MergePatchType, types.ApplyYAMLPatchType, types.StrategicMergePatchType),
		}}
	}
	o, err := parseWriteOptions(r.URL.Query(), "PatchOptions")
	if err != nil {
		return err
	}
	apply := pt == types.ApplyYAMLPatchType
	if errs := patchOptionErrors(apply, o); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	body, err := readBody(r, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return err
	}
	if apply {
		return s.apply(w, r, info, e, st, m, o, body)
	}
	var jp jsonpatch.Patch
	if pt == types.JSONPatchType {
		if jp, err = jsonpatch.DecodePatch(body); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		if len(jp) > 10000 {
			return apierrors.NewRequestEntityTooLargeError("The allowed maximum operations in a JSON patch is 10000")
		}
	}
	manager := fieldmanager.ManagerName(o.FieldManager, r.UserAgent())
	warned := false
	return s.runUpdate(w, r, info, e, st, m, o, registry.UpdateOptions{NoCreate: true}, func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		served, err := e.fromStorage(old)
		if err != nil {
			return nil, err
		}
		current, err := s.codecs.encodeItemJSONRaw(storage.Unwrap(served).DeepCopyObject())
		if err != nil {
			return nil, err
		}
		var patched []byte
		switch pt {
		case types.JSONPatchType:
			patched, err = jp.Apply(current)
			if err != nil {
				// As upstream: a failed JSON patch is the request's fault, not
				// the object's (no kind, name or causes).
				return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
			}
		case types.MergePatchType:
			patched, err = jsonpatch.MergePatch(current, body)
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
		case types.StrategicMergePatchType:
			patched, err = strategicpatch.StrategicMergePatch(current, body, e.newObj())
			if err != nil {
				return nil, interpretPatchError(err)
			}
		}
		res, err := s.codecs.decode(bodyJSON, patched, e.gvk, e.newObj())
		if err != nil {
			return nil, err
		}
		if !warned {
			// Field validation reports problems once, not on every retry.
			warned = true
			if err := applyFieldValidation(w, o, e.gvk, res.strict); err != nil {
				return nil, err
			}
			if err := s.unknownCRFields(w, e, o, res.obj); err != nil {
				return nil, err
			}
		}
		out, err := s.defaultAndConvert(e, res.obj)
		if err != nil {
			return nil, err
		}
		return s.trackUpdate(e, info.Subresource, old, out, manager), nil
	})
}

// apply serves a server-side apply (application/apply-patch+yaml): the
// applied configuration is merged into the live object (an empty one when
// it does not exist: apply creates) by the endpoint's field manager, which
// answers 409 with the conflicting managers and fields unless force is set.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint, st *registry.Store,
	m mediaType, o writeOptions, body []byte) error {
	applied, err := fieldmanager.DecodeApply(body)
	if err != nil {
		return err
	}
	fm, err := s.fieldManager(e, info.Subresource, true)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	warned := false
	return s.runUpdate(w, r, info, e, st, m, o, registry.UpdateOptions{ForceAllowCreate: info.Subresource == ""}, func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		live := storage.Unwrap(old).DeepCopyObject()
		if a, err := meta.Accessor(live); err == nil && a.GetResourceVersion() == "" {
			// creating: the live object is empty, of the served kind
			if live, err = (fieldConvertor{s}).New(e.gvk); err != nil {
				return nil, err
			}
		}
		merged, err := fm.Apply(live, applied.DeepCopy(), o.FieldManager, o.Force)
		if err != nil {
			if _, ok := err.(apierrors.APIStatus); ok {
				return nil, err
			}
			// As upstream answers an error that is no Status (a field the
			// schema does not declare, ...): 500, no reason, the message.
			return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
				Code: http.StatusInternalServerError, Message: err.Error()}}
		}
		if !warned && o.FieldValidation != metav1.FieldValidationIgnore {
			warned = true
			if err := fieldmanager.StrictApplyErrors(body); err != nil {
				if o.FieldValidation == metav1.FieldValidationStrict {
					return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
				}
				addWarning(w, err.Error())
			}
		}
		// The merge answers in the served version; typed.
		obj, err := (fieldConvertor{s}).ConvertToVersion(merged, e.gvk.GroupVersion())
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		storage.InternManagedFields(obj)
		return s.defaultAndConvert(e, obj)
	})
}

// patchOptionErrors validates PatchOptions as upstream: force only for an
// apply, which needs a fieldManager.
func patchOptionErrors(apply bool, o writeOptions) field.ErrorList {
	var errs field.ErrorList
	if !apply && o.ForceSet {
		errs = append(errs, field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch"))
	}
	if apply && o.FieldManager == "" {
		// kubectl defaults it; controllers have to set it.
		errs = append(errs, field.Required(field.NewPath("fieldManager"), "is required for apply patch"))
	}
	return errs
}

func interpretPatchError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return apierrors.NewBadRequest(err.Error())
}
