package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
)

func TestRejection(t *testing.T) {
	tests := []struct {
		result   *metav1.Status
		wantCode int32
		wantMsg  string
	}{
		{nil, 400, `admission webhook "w" denied the request without explanation`},
		{&metav1.Status{Code: 200, Status: metav1.StatusSuccess, Message: "no"}, 400, `admission webhook "w" denied the request: no`},
		{&metav1.Status{Code: 409, Reason: "Conflict"}, 409, `admission webhook "w" denied the request: Conflict`},
	}
	for _, tt := range tests {
		err := rejection("w", tt.result)
		st := err.(*apierrors.StatusError).ErrStatus
		if st.Code != tt.wantCode || st.Message != tt.wantMsg || st.Status != metav1.StatusFailure {
			t.Errorf("rejection(%v) = %d %q %q, want %d %q Failure", tt.result, st.Code, st.Message, st.Status, tt.wantCode, tt.wantMsg)
		}
	}
}

// A dry-run request is refused, without a call, by a webhook that may have
// side effects (only reachable with configurations stored by an older
// API: v1 accepts only None and NoneOnDryRun).
func TestDryRunSideEffects(t *testing.T) {
	d := newDispatcher(Config{}, grValidatingConfigs)
	for _, se := range []admissionregistrationv1.SideEffectClass{admissionregistrationv1.SideEffectClassSome, admissionregistrationv1.SideEffectClassUnknown} {
		h := &hook{name: "w", sideEffects: &se, reviewVersions: []string{"v1"}}
		_, err := d.call(context.Background(), h, &admission.Attributes{DryRun: true}, &invocation{hook: h}, versioned{}, false)
		if !apierrors.IsBadRequest(err) || err.Error() != `admission webhook "w" does not support dry run` {
			t.Errorf("sideEffects %s: %v", se, err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPostAnswers: what post reports for answers the transport hands
// over, including one handed over after the call's deadline passed (the
// HTTP/1 transport returns a response that raced the cancellation).
func TestPostAnswers(t *testing.T) {
	const u = "https://hook.example.com/x"
	emptyOK := func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}, nil
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	tests := []struct {
		name    string
		ctx     context.Context
		rt      roundTripFunc
		wantErr string
		wantIs  error
	}{
		{"empty 2xx answer", context.Background(), emptyOK,
			`0-length response with status code: 200 and content type: application/json`, nil},
		{"empty 2xx answer with a content type", context.Background(), func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusNoContent, Header: http.Header{"Content-Type": {"text/plain"}}, Body: http.NoBody}, nil
		}, `0-length response with status code: 204 and content type: text/plain`, nil},
		{"answer after the deadline", expired, emptyOK,
			`Post "` + u + `?timeout=1s": context deadline exceeded`, context.DeadlineExceeded},
		{"valid answer after the deadline", expired, func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{},
				Body: io.NopCloser(strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`))}, nil
		}, `Post "` + u + `?timeout=1s": context deadline exceeded`, context.DeadlineExceeded},
		{"answer after cancellation", canceled, emptyOK,
			`Post "` + u + `?timeout=1s": context canceled`, context.Canceled},
		{"error status", context.Background(), func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{},
				Body: io.NopCloser(strings.NewReader("boom"))}, nil
		}, `an error on the server ("boom") has prevented the request from succeeding`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := target{client: &http.Client{Transport: tt.rt}, url: u}
			var out admissionv1.AdmissionReview
			err := tg.post(tt.ctx, time.Second, []byte("{}"), &out)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("post: %v, want %s", err, tt.wantErr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("post: %v is not %v", err, tt.wantIs)
			}
		})
	}
}
