package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// statusFor turns any error into the metav1.Status a client gets.
func statusFor(err error) *metav1.Status {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		if s.Status == "" {
			s.Status = metav1.StatusFailure
		}
		if s.Code == 0 {
			s.Code = http.StatusInternalServerError
		}
		s.Kind, s.APIVersion = "Status", "v1"
		return &s
	}
	s := apierrors.NewInternalError(err).ErrStatus
	s.Kind, s.APIVersion = "Status", "v1"
	return &s
}

// writeError answers with the error's Status (always JSON unless the
// client asked for another serialization the Status can use).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := statusFor(err)
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	m, nerr := negotiate(r.Header.Get("Accept"), false)
	if nerr != nil || m.Type == mediaYAML {
		m = mediaType{Type: mediaJSON}
	}
	data, eerr := s.codecs.encode(m, st)
	if eerr != nil {
		http.Error(w, st.Message, int(st.Code))
		return
	}
	w.Header().Set("Content-Type", m.contentType())
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(st.Code))
	w.Write(data)
}

// writeRaw writes an already encoded body.
func writeRaw(w http.ResponseWriter, code int, contentType string, data []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(data)
}

// writeObject encodes obj in the negotiated format.
func (s *Server) writeObject(w http.ResponseWriter, r *http.Request, code int, m mediaType, obj runtime.Object) {
	data, err := s.codecs.encode(m, obj)
	if err != nil {
		s.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("encoding response: %w", err)))
		return
	}
	writeRaw(w, code, m.contentType(), data)
}

// addWarning adds an HTTP Warning header the way upstream does (kubectl
// prints them as "Warning: ...").
func addWarning(w http.ResponseWriter, text string) {
	w.Header().Add("Warning", "299 - "+strconv.Quote(text))
}
