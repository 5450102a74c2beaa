package webhook

import (
	"context"
	"testing"

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
