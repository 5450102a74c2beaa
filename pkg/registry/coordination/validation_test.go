package coordination

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validLease() *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager", Namespace: "kube-system", ResourceVersion: "1"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       new("node-1_6f0c"),
			LeaseDurationSeconds: new(int32(15)),
			AcquireTime:          &now,
			RenewTime:            &now,
			LeaseTransitions:     new(int32(0)),
		},
	}
	DefaultLease(lease)
	return lease
}

func TestValidateLease(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*coordinationv1.Lease)
		path   string
		typ    field.ErrorType
	}{
		{"valid", func(*coordinationv1.Lease) {}, "", ""},
		{"empty spec", func(l *coordinationv1.Lease) { l.Spec = coordinationv1.LeaseSpec{} }, "", ""},
		{"strategy with preferred holder", func(l *coordinationv1.Lease) {
			l.Spec.Strategy = new(coordinationv1.OldestEmulationVersion)
			l.Spec.PreferredHolder = new("node-2")
		}, "", ""},
		{"custom strategy", func(l *coordinationv1.Lease) {
			l.Spec.Strategy = new(coordinationv1.CoordinatedLeaseStrategy("example.com/newest"))
		}, "", ""},
		{"zero duration", func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = new(int32(0)) }, "spec.leaseDurationSeconds", field.ErrorTypeInvalid},
		{"negative transitions", func(l *coordinationv1.Lease) { l.Spec.LeaseTransitions = new(int32(-1)) }, "spec.leaseTransitions", field.ErrorTypeInvalid},
		{"unknown strategy", func(l *coordinationv1.Lease) {
			l.Spec.Strategy = new(coordinationv1.CoordinatedLeaseStrategy("Newest"))
		}, "spec.strategy.strategy", field.ErrorTypeNotSupported},
		{"preferred holder without strategy", func(l *coordinationv1.Lease) { l.Spec.PreferredHolder = new("node-2") }, "spec.preferredHolder", field.ErrorTypeForbidden},
		{"no namespace", func(l *coordinationv1.Lease) { l.Namespace = "" }, "metadata.namespace", field.ErrorTypeRequired},
		{"bad name", func(l *coordinationv1.Lease) { l.Name = "Node_1" }, "metadata.name", field.ErrorTypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lease := validLease()
			tc.mutate(lease)
			errs := ValidateLease(lease)
			if tc.path == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Field == tc.path && e.Type == tc.typ {
					return
				}
			}
			t.Fatalf("want %s at %s, got %v", tc.typ, tc.path, errs)
		})
	}
}

func TestValidateLeaseMessage(t *testing.T) {
	lease := validLease()
	lease.Spec.LeaseDurationSeconds = new(int32(-3))
	errs := ValidateLease(lease)
	if want := "spec.leaseDurationSeconds: Invalid value: -3: must be greater than 0"; len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("got %v, want %q", errs, want)
	}
}

func TestValidateLeaseUpdate(t *testing.T) {
	old := validLease()
	lease := old.DeepCopy()
	lease.Spec.HolderIdentity = new("node-2_aa")
	lease.Spec.LeaseTransitions = new(int32(1))
	if errs := ValidateLeaseUpdate(lease, old); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	lease.Spec.LeaseDurationSeconds = new(int32(0))
	if errs := ValidateLeaseUpdate(lease, old); len(errs) != 1 || errs[0].Field != "spec.leaseDurationSeconds" {
		t.Fatalf("got %v", errs)
	}
}
