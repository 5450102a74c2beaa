package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// Fields behind feature gates that are alpha, and so off, in Kubernetes
// 1.37 are dropped as upstream drops them: on create always, on update
// unless the stored object already uses them (so turning a gate off never
// makes a stored object unwritable). The gates: DRAListTypeAttributes
// (attribute lists), DRAOptionalNodeOperations (skipNodeOperations),
// DRANodeAllocatableResources, DRADeviceCompatibilityGroups and
// DRADerivedAttributes. (An allocation's skipNodeOperations, written through
// the status subresource, is not dropped.)

func sliceUsesAlpha(s *resourcev1.ResourceSlice) (lists, skip, nodeAlloc, compat bool) {
	skip = len(s.Spec.SkipNodeOperations) > 0
	for _, d := range s.Spec.Devices {
		for _, a := range d.Attributes {
			if a.IntValues != nil || a.BoolValues != nil || a.StringValues != nil || a.VersionValues != nil {
				lists = true
			}
		}
		if len(d.NodeAllocatableResources) > 0 {
			nodeAlloc = true
		}
		for _, c := range d.ConsumesCounters {
			if len(c.CompatibilityGroups) > 0 {
				compat = true
			}
		}
	}
	return
}

// DropAlphaResourceSliceFields drops what s may not use given old (nil
// on create).
func DropAlphaResourceSliceFields(s, old *resourcev1.ResourceSlice) {
	var lists, skip, nodeAlloc, compat bool
	if old != nil {
		lists, skip, nodeAlloc, compat = sliceUsesAlpha(old)
	}
	if !skip {
		s.Spec.SkipNodeOperations = nil
	}
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		if !lists {
			for k, a := range d.Attributes {
				a.IntValues, a.BoolValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
				d.Attributes[k] = a
			}
		}
		if !nodeAlloc {
			d.NodeAllocatableResources = nil
		}
		if !compat {
			for j := range d.ConsumesCounters {
				d.ConsumesCounters[j].CompatibilityGroups = nil
			}
		}
	}
}

func claimUsesDerived(spec *resourcev1.ResourceClaimSpec) bool {
	for _, r := range spec.Devices.Requests {
		if r.Exactly != nil && len(r.Exactly.DerivedAttributes) > 0 {
			return true
		}
		for _, s := range r.FirstAvailable {
			if len(s.DerivedAttributes) > 0 {
				return true
			}
		}
	}
	return false
}

// DropAlphaClaimSpecFields drops derived attributes from a claim spec
// unless old (nil on create) uses them.
func DropAlphaClaimSpecFields(spec, old *resourcev1.ResourceClaimSpec) {
	if old != nil && claimUsesDerived(old) {
		return
	}
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			r.Exactly.DerivedAttributes = nil
		}
		for j := range r.FirstAvailable {
			r.FirstAvailable[j].DerivedAttributes = nil
		}
	}
}
