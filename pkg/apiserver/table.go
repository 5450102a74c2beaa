package apiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/printers"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// toTable renders objects as the server-side Table kubectl prints: the
// resource's columns (printers), one row per object, each row carrying the
// object's metadata (includeObject=Metadata, the default), the whole object
// (Object) or nothing (None).
func (s *Server) toTable(r *http.Request, e *endpoint, objs []runtime.Object, lm metav1.ListMeta, noHeaders bool) (*metav1.Table, error) {
	h, ok := printers.For(e.qualified)
	if e.cr != nil {
		h, ok = e.cr.version.Table, true
	}
	if !ok {
		h = printers.Default()
	}
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	switch include {
	case "", metav1.IncludeMetadata, metav1.IncludeObject, metav1.IncludeNone:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", include))
	}
	t := &metav1.Table{ListMeta: lm, Rows: make([]metav1.TableRow, 0, len(objs))}
	t.SetGroupVersionKind(schema.GroupVersionKind{Group: metav1.GroupName, Version: "v1", Kind: "Table"})
	if !noHeaders {
		t.ColumnDefinitions = h.Columns
	}
	now := s.cfg.Clock.Now()
	for _, obj := range objs {
		obj = storage.Unwrap(obj)
		cells, err := h.Cells(obj, now)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		row := metav1.TableRow{Cells: cells}
		if h.Conditions != nil {
			row.Conditions = h.Conditions(obj)
		}
		switch include {
		case metav1.IncludeObject:
			row.Object.Object = obj
		case metav1.IncludeNone:
		default:
			p, err := partialMetadata(obj, "v1")
			if err != nil {
				return nil, err
			}
			row.Object.Object = p
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
