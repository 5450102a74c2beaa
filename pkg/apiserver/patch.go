package apiserver

import (
	"context"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// patch applies a JSON patch, JSON merge patch or strategic merge patch to
// the stored object and updates it. The patch is re-applied to the fresh
// object when a concurrent write wins, so a patch without a
// resourceVersion never conflicts.
func (s *Server) patch(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint, st *registry.Store) error {
	m, err := negotiate(r.Header.Get("Accept"), false)
	if err != nil {
		return err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	pt := types.PatchType(ct)
	switch pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType:
	case types.ApplyYAMLPatchType, types.ApplyCBORPatchType:
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: "server-side apply is not supported by skiff yet; use client-side apply (kubectl apply without --server-side)",
		}}
	default:
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
	body, err := readBody(r, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return err
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
	warned := false
	return s.runUpdate(w, r, info, e, st, m, o, true, func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
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
		}
		return s.defaultAndConvert(e, res.obj)
	})
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
