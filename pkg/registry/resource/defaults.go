package resource

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultRequest: an exact request without a mode asks for ExactCount,
// and ExactCount without a count asks for one device.
func defaultRequest(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

// defaultTolerations: a toleration without an operator compares values
// (Equal).
func defaultTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

// DefaultResourceClaimSpec fills the defaults of a claim's device requests.
func DefaultResourceClaimSpec(spec *resourcev1.ResourceClaimSpec) {
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			defaultRequest(&r.Exactly.AllocationMode, &r.Exactly.Count)
			defaultTolerations(r.Exactly.Tolerations)
		}
		for j := range r.FirstAvailable {
			s := &r.FirstAvailable[j]
			defaultRequest(&s.AllocationMode, &s.Count)
			defaultTolerations(s.Tolerations)
		}
	}
}

// DefaultResourceClaim fills the defaults of a ResourceClaim (spec and the
// tolerations recorded in its allocation).
func DefaultResourceClaim(c *resourcev1.ResourceClaim) {
	DefaultResourceClaimSpec(&c.Spec)
	if a := c.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			defaultTolerations(a.Devices.Results[i].Tolerations)
		}
	}
}

// DefaultResourceClaimTemplate fills the defaults of the claim spec a
// template stamps out.
func DefaultResourceClaimTemplate(t *resourcev1.ResourceClaimTemplate) {
	DefaultResourceClaimSpec(&t.Spec.Spec)
}

// DefaultResourceSlice stamps every device taint without a timeAdded with
// now (truncated to seconds, as upstream).
func DefaultResourceSlice(s *resourcev1.ResourceSlice, now time.Time) {
	for i := range s.Spec.Devices {
		for j := range s.Spec.Devices[i].Taints {
			defaultTaint(&s.Spec.Devices[i].Taints[j], now)
		}
	}
}

// DefaultDeviceTaintRule stamps the rule's taint with now if it has no
// timeAdded.
func DefaultDeviceTaintRule(r *resourcev1.DeviceTaintRule, now time.Time) {
	defaultTaint(&r.Spec.Taint, now)
}

func defaultTaint(t *resourcev1.DeviceTaint, now time.Time) {
	if t.TimeAdded == nil {
		t.TimeAdded = &metav1.Time{Time: now.Truncate(time.Second)}
	}
}

// PrepareDeviceTaintRuleUpdate: when the taint's effect changes and the
// update keeps the old timeAdded, the time is reset to now (the eviction
// it times starts anew), as upstream.
func PrepareDeviceTaintRuleUpdate(r, old *resourcev1.DeviceTaintRule, now time.Time) {
	t, o := &r.Spec.Taint, old.Spec.Taint
	if t.Effect != o.Effect && (t.TimeAdded == nil || (o.TimeAdded != nil && t.TimeAdded.Equal(o.TimeAdded))) {
		t.TimeAdded = &metav1.Time{Time: now.Truncate(time.Second)}
	}
}
