package resource

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

// expectMessages fails t unless errs render (as the API server's 422
// causes do) exactly as want, in any order. Each want is the error's
// "path: type: detail" text, or a prefix of it ending before the detail.
func expectMessages(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	sort.Strings(got)
	w := append([]string(nil), want...)
	sort.Strings(w)
	ok := len(got) == len(w)
	for i := 0; ok && i < len(w); i++ {
		ok = strings.HasPrefix(got[i], w[i])
	}
	if !ok {
		t.Errorf("errors:\n  got  %q\n  want %q", got, w)
	}
}

func ptr[T any](v T) *T { return &v }

func validClass() *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
		Config: []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: resourcev1.DeviceConfiguration{
			Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: "gpu.example.com", Parameters: runtime.RawExtension{Raw: []byte(`{"a":1}`)}}}}},
	}}
}

func TestValidateDeviceClassUpdateKeepsStoredSelectors(t *testing.T) {
	old := validClass()
	old.ResourceVersion = "1"
	old.Spec.Selectors[0].CEL.Expression = "no longer compiles("
	relabelled := old.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	expectMessages(t, ValidateDeviceClassUpdate(relabelled, old))
	changed := old.DeepCopy()
	changed.Spec.Selectors[0].CEL.Expression = "still broken("
	if errs := ValidateDeviceClassUpdate(changed, old); len(errs) != 1 || errs[0].Field != "spec.selectors[0].cel.expression" {
		t.Errorf("a changed selector was not compiled: %v", errs)
	}
}

func TestValidateDeviceClass(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*resourcev1.DeviceClass)
		want   []string
	}{
		{name: "valid", mutate: func(*resourcev1.DeviceClass) {}},
		{name: "extended resource", mutate: func(c *resourcev1.DeviceClass) { c.Spec.ExtendedResourceName = ptr("example.com/gpu") }},
		{name: "bad name", mutate: func(c *resourcev1.DeviceClass) { c.Name = "GPU" },
			want: []string{`metadata.name: Invalid value: "GPU": a lowercase RFC 1123 subdomain must consist of`}},
		{name: "namespaced", mutate: func(c *resourcev1.DeviceClass) { c.Namespace = "default" },
			want: []string{"metadata.namespace: Forbidden: not allowed on this type"}},
		{name: "selector without cel", mutate: func(c *resourcev1.DeviceClass) { c.Spec.Selectors[0].CEL = nil },
			want: []string{"spec.selectors[0].cel: Required value"}},
		{name: "cel too long", mutate: func(c *resourcev1.DeviceClass) {
			c.Spec.Selectors[0].CEL.Expression = strings.Repeat("x", resourcev1.CELSelectorExpressionMaxLength+1)
		}, want: []string{"spec.selectors[0].cel.expression: Too long: may not be more than 10240 bytes"}},
		{name: "selector does not compile", mutate: func(c *resourcev1.DeviceClass) {
			c.Spec.Selectors[0].CEL.Expression = `device.driver == "a" || "a".startsWith(1)`
		},
			want: []string{`spec.selectors[0].cel.expression: Invalid value: "device.driver == \"a\" || \"a\".startsWith(1)": compilation failed: ERROR: <input>:1:39: found no matching overload for 'startsWith' applied to 'string.(int)'`}},
		{name: "selector not a bool", mutate: func(c *resourcev1.DeviceClass) { c.Spec.Selectors[0].CEL.Expression = `device.driver.size()` },
			want: []string{`spec.selectors[0].cel.expression: Invalid value: "device.driver.size()": must evaluate to bool or the unknown type, not int`}},
		{name: "config without opaque", mutate: func(c *resourcev1.DeviceClass) { c.Spec.Config[0].Opaque = nil },
			want: []string{"spec.config[0].opaque: Required value"}},
		{name: "opaque parameters not an object", mutate: func(c *resourcev1.DeviceClass) {
			c.Spec.Config[0].Opaque.Parameters.Raw = []byte(`[1]`)
		}, want: []string{`spec.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object`}},
		{name: "opaque without driver or parameters", mutate: func(c *resourcev1.DeviceClass) {
			c.Spec.Config[0].Opaque = &resourcev1.OpaqueDeviceConfiguration{}
		}, want: []string{"spec.config[0].opaque.driver: Required value", "spec.config[0].opaque.parameters: Required value"}},
		{name: "kubernetes.io extended resource", mutate: func(c *resourcev1.DeviceClass) { c.Spec.ExtendedResourceName = ptr("kubernetes.io/gpu") },
			want: []string{`spec.extendedResourceName: Invalid value: "kubernetes.io/gpu": must be a valid extended resource name`}},
		{name: "too many selectors", mutate: func(c *resourcev1.DeviceClass) {
			for len(c.Spec.Selectors) <= resourcev1.DeviceSelectorsMaxSize {
				c.Spec.Selectors = append(c.Spec.Selectors, c.Spec.Selectors[0])
			}
		}, want: []string{"spec.selectors: Too many: 33: must have at most 32 items"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validClass()
			tt.mutate(c)
			expectMessages(t, ValidateDeviceClass(c), tt.want...)
		})
	}
}

func validClaim() *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "default"}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{
				{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com",
					Tolerations: []resourcev1.DeviceToleration{{Key: "example.com/flaky", Value: "yes"}}}},
				{Name: "nic", FirstAvailable: []resourcev1.DeviceSubRequest{
					{Name: "fast", DeviceClassName: "nic.example.com"}, {Name: "slow", DeviceClassName: "nic.example.com", AllocationMode: resourcev1.DeviceAllocationModeAll}}},
			},
			Constraints: []resourcev1.DeviceConstraint{{Requests: []string{"gpu", "nic/fast"}, MatchAttribute: ptr(resourcev1.FullyQualifiedName("example.com/numa"))}},
		},
	}}
	DefaultResourceClaim(c)
	return c
}

func TestDefaultResourceClaim(t *testing.T) {
	c := validClaim()
	e := c.Spec.Devices.Requests[0].Exactly
	if e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 {
		t.Errorf("exact request defaulted to %s/%d, want ExactCount/1", e.AllocationMode, e.Count)
	}
	if op := e.Tolerations[0].Operator; op != resourcev1.DeviceTolerationOpEqual {
		t.Errorf("toleration operator %q, want Equal", op)
	}
	fast, slow := c.Spec.Devices.Requests[1].FirstAvailable[0], c.Spec.Devices.Requests[1].FirstAvailable[1]
	if fast.AllocationMode != resourcev1.DeviceAllocationModeExactCount || fast.Count != 1 {
		t.Errorf("subrequest defaulted to %s/%d", fast.AllocationMode, fast.Count)
	}
	if slow.AllocationMode != resourcev1.DeviceAllocationModeAll || slow.Count != 0 {
		t.Errorf("All subrequest got count %d", slow.Count)
	}
	// Idempotent.
	again := c.DeepCopy()
	DefaultResourceClaim(again)
	if again.Spec.Devices.Requests[0].Exactly.Count != 1 {
		t.Errorf("defaulting twice changed the claim")
	}
}

func TestValidateResourceClaim(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*resourcev1.ResourceClaim)
		want   []string
	}{
		{name: "valid", mutate: func(*resourcev1.ResourceClaim) {}},
		{name: "no namespace", mutate: func(c *resourcev1.ResourceClaim) { c.Namespace = "" },
			want: []string{"metadata.namespace: Required value"}},
		{name: "request without kind", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[0].Exactly = nil },
			want: []string{"spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"}},
		{name: "request with both kinds", mutate: func(c *resourcev1.ResourceClaim) {
			c.Spec.Devices.Requests[1].Exactly = &resourcev1.ExactDeviceRequest{DeviceClassName: "x", AllocationMode: resourcev1.DeviceAllocationModeAll}
		}, want: []string{"spec.devices.requests[1]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"}},
		{name: "duplicate request", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[1].Name = "gpu" },
			want: []string{`spec.devices.requests[1]: Duplicate value: "gpu"`,
				`spec.devices.constraints[0].requests[1]: Invalid value: "nic/fast": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'`}},
		{name: "bad request name", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[0].Name = "GPU" },
			want: []string{`spec.devices.requests[0].name: Invalid value: "GPU": a lowercase RFC 1123 label must consist of`,
				`spec.devices.constraints[0].requests[0]: Invalid value: "gpu": must be the name of a request`}},
		{name: "no class", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[0].Exactly.DeviceClassName = "" },
			want: []string{"spec.devices.requests[0].exactly.deviceClassName: Required value"}},
		{name: "count with All", mutate: func(c *resourcev1.ResourceClaim) {
			c.Spec.Devices.Requests[0].Exactly.AllocationMode = resourcev1.DeviceAllocationModeAll
		}, want: []string{"spec.devices.requests[0].exactly.count: Invalid value: 1: must not be specified when allocationMode is 'All'"}},
		{name: "negative count", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[0].Exactly.Count = -1 },
			want: []string{"spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"}},
		{name: "unknown mode", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[0].Exactly.AllocationMode = "Some" },
			want: []string{`spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"`}},
		{name: "bad toleration", mutate: func(c *resourcev1.ResourceClaim) {
			c.Spec.Devices.Requests[0].Exactly.Tolerations[0] = resourcev1.DeviceToleration{Key: "k", Operator: "Exists", Value: "v", Effect: "PreferNoSchedule"}
		}, want: []string{"spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: \"v\": must be empty for operator `Exists`",
			`spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"`}},
		{name: "duplicate subrequest", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[1].FirstAvailable[1].Name = "fast" },
			want: []string{`spec.devices.requests[1].firstAvailable[1]: Duplicate value: "fast"`}},
		{name: "constraint on unknown request", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Constraints[0].Requests[1] = "nic/medium" },
			want: []string{`spec.devices.constraints[0].requests[1]: Invalid value: "nic/medium": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'`}},
		{name: "constraint attribute without domain", mutate: func(c *resourcev1.ResourceClaim) {
			c.Spec.Devices.Constraints[0].MatchAttribute = ptr(resourcev1.FullyQualifiedName("numa"))
		}, want: []string{`spec.devices.constraints[0].matchAttribute: Invalid value: "numa": a fully qualified name must be a domain and a name separated by a slash`}},
		{name: "constraint without attribute", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Constraints[0].MatchAttribute = nil },
			want: []string{`spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`}},
		{name: "config for unknown request", mutate: func(c *resourcev1.ResourceClaim) {
			c.Spec.Devices.Config = []resourcev1.DeviceClaimConfiguration{{Requests: []string{"tpu"}, DeviceConfiguration: resourcev1.DeviceConfiguration{
				Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: "gpu.example.com", Parameters: runtime.RawExtension{Raw: []byte(`{}`)}}}}}
		}, want: []string{`spec.devices.config[0].requests[0]: Invalid value: "tpu": must be the name of a request`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validClaim()
			tt.mutate(c)
			expectMessages(t, ValidateResourceClaim(c), tt.want...)
		})
	}
}

func TestValidateResourceClaimUpdate(t *testing.T) {
	old := validClaim()
	old.ResourceVersion = "1"
	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	expectMessages(t, ValidateResourceClaimUpdate(labelled, old))
	changed := old.DeepCopy()
	changed.Spec.Devices.Requests[0].Exactly.DeviceClassName = "other"
	registrytest.ExpectErrors(t, ValidateResourceClaimUpdate(changed, old), "spec: Invalid value")
}

func TestValidateResourceClaimStatusUpdate(t *testing.T) {
	old := validClaim()
	old.ResourceVersion = "1"
	allocation := &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: "gpu.example.com", Pool: "node1", Device: "gpu-0"}}}}
	pod := resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "p", UID: "1234"}
	tests := []struct {
		name   string
		mutate func(c, old *resourcev1.ResourceClaim)
		want   []string
	}{
		{name: "allocate and reserve", mutate: func(c, _ *resourcev1.ResourceClaim) {
			c.Status.Allocation = allocation.DeepCopy()
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{pod}
		}},
		{name: "reserve without allocation", mutate: func(c, _ *resourcev1.ResourceClaim) {
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{pod}
		}, want: []string{"status.reservedFor: Forbidden: may not be specified when `allocated` is not set"}},
		{name: "duplicate consumer", mutate: func(c, _ *resourcev1.ResourceClaim) {
			c.Status.Allocation = allocation.DeepCopy()
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{pod, pod}
		}, want: []string{`status.reservedFor[1]: Duplicate value: "1234"`}},
		{name: "consumer without fields", mutate: func(c, _ *resourcev1.ResourceClaim) {
			c.Status.Allocation = allocation.DeepCopy()
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{}}
		}, want: []string{"status.reservedFor[0].name: Required value", "status.reservedFor[0].resource: Required value", "status.reservedFor[0].uid: Required value"}},
		{name: "allocation for an unknown request", mutate: func(c, _ *resourcev1.ResourceClaim) {
			c.Status.Allocation = allocation.DeepCopy()
			c.Status.Allocation.Devices.Results[0].Request = "tpu"
		}, want: []string{`status.allocation.devices.results[0].request: Invalid value: "tpu": must be the name of a request`}},
		{name: "allocation changed", mutate: func(c, old *resourcev1.ResourceClaim) {
			old.Status.Allocation = allocation.DeepCopy()
			c.Status.Allocation = allocation.DeepCopy()
			c.Status.Allocation.Devices.Results[0].Device = "gpu-1"
		}, want: []string{"status.allocation: Invalid value"}},
		{name: "new consumer while deleting", mutate: func(c, old *resourcev1.ResourceClaim) {
			old.Status.Allocation = allocation.DeepCopy()
			c.Status.Allocation = allocation.DeepCopy()
			c.DeletionTimestamp = &metav1.Time{}
			old.DeletionTimestamp = c.DeletionTimestamp
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{pod}
		}, want: []string{"status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"}},
		{name: "device status of an unallocated device", mutate: func(c, _ *resourcev1.ResourceClaim) {
			c.Status.Devices = []resourcev1.AllocatedDeviceStatus{{Driver: "gpu.example.com", Pool: "node1", Device: "gpu-0"}}
		}, want: []string{`status.devices[0]: Invalid value: "gpu.example.com/node1/gpu-0": must be an allocated device in the claim`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := old.DeepCopy()
			c := old.DeepCopy()
			tt.mutate(c, o)
			expectMessages(t, ValidateResourceClaimStatusUpdate(c, o), tt.want...)
		})
	}
}

func TestValidateResourceClaimTemplate(t *testing.T) {
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "default"},
		Spec: resourcev1.ResourceClaimTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}, Spec: validClaim().Spec}}
	expectMessages(t, ValidateResourceClaimTemplate(tmpl))
	named := tmpl.DeepCopy()
	named.Spec.ObjectMeta.Name = "fixed"
	expectMessages(t, ValidateResourceClaimTemplate(named), "spec.metadata.name: Forbidden: cannot be set")
	bad := tmpl.DeepCopy()
	bad.Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName = ""
	expectMessages(t, ValidateResourceClaimTemplate(bad), "spec.spec.devices.requests[0].exactly.deviceClassName: Required value")
	old := tmpl.DeepCopy()
	old.ResourceVersion = "1"
	changed := old.DeepCopy()
	changed.Spec.ObjectMeta.Labels = nil
	registrytest.ExpectErrors(t, ValidateResourceClaimTemplateUpdate(changed, old), "spec: Invalid value")
}

func validSlice() *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "node1-gpu"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: "gpu.example.com", NodeName: ptr("node1"),
		Pool: resourcev1.ResourcePool{Name: "node1", ResourceSliceCount: 1},
		Devices: []resourcev1.Device{{Name: "gpu-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"model": {StringValue: ptr("a100")}, "gpu.example.com/driverVersion": {VersionValue: ptr("1.2.3")}}}},
	}}
}

func TestValidateResourceSlice(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*resourcev1.ResourceSlice)
		want   []string
	}{
		{name: "valid", mutate: func(*resourcev1.ResourceSlice) {}},
		{name: "all nodes", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.NodeName = nil; s.Spec.AllNodes = ptr(true) }},
		{name: "no driver", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.Driver = "" },
			want: []string{"spec.driver: Required value"}},
		{name: "driver too long", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.Driver = strings.Repeat("a", 64) },
			want: []string{"spec.driver: Too long: may not be more than 63 bytes"}},
		{name: "no pool", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.Pool = resourcev1.ResourcePool{} },
			want: []string{"spec.pool.name: Required value", "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"}},
		{name: "negative generation", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.Pool.Generation = -1 },
			want: []string{"spec.pool.generation: Invalid value: -1: must be greater than or equal to zero"}},
		{name: "no node choice", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.NodeName = nil },
			want: []string{"spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"}},
		{name: "two node choices", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.AllNodes = ptr(true) },
			want: []string{"spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"}},
		{name: "allNodes false", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.AllNodes = ptr(false) },
			want: []string{"spec.allNodes: Invalid value: false: must be either unset or set to true"}},
		{name: "empty node name", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.NodeName = ptr("") },
			want: []string{`spec.nodeName: Invalid value: "": must be either unset or set to a non-empty string`,
				"spec: Required value: exactly one of"}},
		{name: "node selector with two terms", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.NodeName = nil
			term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}}}
			s.Spec.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term, term}}
		}, want: []string{`spec.nodeSelector.nodeSelectorTerms: Invalid value: [{"matchExpressions":[{"key":"zone","operator":"Exists"}]},{"matchExpressions":[{"key":"zone","operator":"Exists"}]}]: must have exactly one node selector term`}},
		{name: "duplicate device", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: "gpu-0"})
		}, want: []string{`spec.devices[1]: Duplicate value: "gpu-0"`}},
		{name: "attribute with two values", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices[0].Attributes["model"] = resourcev1.DeviceAttribute{StringValue: ptr("a"), IntValue: ptr(int64(1))}
		}, want: []string{`spec.devices[0].attributes[model]: Invalid value: {"int":1,"string":"a"}: exactly one value must be specified`}},
		{name: "attribute without value", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices[0].Attributes["model"] = resourcev1.DeviceAttribute{}
		}, want: []string{`spec.devices[0].attributes[model]: Invalid value: "": exactly one value must be specified`}},
		{name: "bad version", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices[0].Attributes["gpu.example.com/driverVersion"] = resourcev1.DeviceAttribute{VersionValue: ptr("1.2")}
		}, want: []string{`spec.devices[0].attributes[gpu.example.com/driverVersion].version: Invalid value: "1.2": must be a string compatible with semver.org spec 2.0.0`}},
		{name: "bad attribute name", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices[0].Attributes["gpu.example.com/"] = resourcev1.DeviceAttribute{BoolValue: ptr(true)}
		}, want: []string{`spec.devices[0].attributes: Invalid value: "": the name must not be empty`}},
		{name: "bad taint", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices[0].Taints = []resourcev1.DeviceTaint{{Key: "example.com/x", Effect: "PreferNoSchedule"}, {Effect: resourcev1.DeviceTaintEffectNone}}
		}, want: []string{`spec.devices[0].taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"`,
			`spec.devices[0].taints[1].key: Invalid value: "": name part must be non-empty`,
			`spec.devices[0].taints[1].key: Invalid value: "": name part must consist of alphanumeric characters`}},
		{name: "device node name without per-device selection", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.Devices[0].NodeName = ptr("node1") },
			want: []string{"spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"}},
		{name: "per-device selection without node", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.NodeName = nil
			s.Spec.PerDeviceNodeSelection = ptr(true)
		}, want: []string{"spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"}},
		{name: "devices and counter sets together", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.SharedCounters = []resourcev1.CounterSet{{Name: "mem", Counters: map[string]resourcev1.Counter{"bytes": {}}}}
		}, want: []string{"spec: Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed"}},
		{name: "counter set", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices = nil
			s.Spec.SharedCounters = []resourcev1.CounterSet{{Name: "mem", Counters: map[string]resourcev1.Counter{"Bytes": {}}}, {Name: "mem"}}
		}, want: []string{`spec.sharedCounters[0].counters: Invalid value: "Bytes": a lowercase RFC 1123 label must consist of`,
			"spec.sharedCounters[1].counters: Required value", `spec.sharedCounters[1]: Duplicate value: "mem"`}},
		{name: "devices consume counters of another slice", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices[0].ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: "mem", Counters: map[string]resourcev1.Counter{"bytes": {}}}}
		}},
		{name: "64 devices with taints", mutate: func(s *resourcev1.ResourceSlice) {
			for i := 1; i <= resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures; i++ {
				s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i)})
			}
			s.Spec.Devices[0].Taints = []resourcev1.DeviceTaint{{Key: "example.com/x", Effect: resourcev1.DeviceTaintEffectNone}}
		}, want: []string{"spec.devices: Too many: 65: must have at most 64 items"}},
		{name: "65 plain devices", mutate: func(s *resourcev1.ResourceSlice) {
			for i := 1; i <= resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures; i++ {
				s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i), Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"a": {BoolValue: ptr(true)}}})
			}
		}},
		{name: "prepare skipped without unprepare", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.SkipNodeOperations = []resourcev1.SkipNodeOperation{resourcev1.SkipNodeOperationNodePrepareResources}
		}, want: []string{`spec.skipNodeOperations: Invalid value: ["NodePrepareResources"]: NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped`}},
		{name: "partition type attribute without counters", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.PartitionTypeAttribute = ptr(resourcev1.FullyQualifiedName("gpu.example.com/profile"))
		}, want: []string{`spec.partitionTypeAttribute: Invalid value: "gpu.example.com/profile": may only be set on a slice which declares devices that consume counters`}},
		{name: "partition type attribute missing on a device", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.PartitionTypeAttribute = ptr(resourcev1.FullyQualifiedName("gpu.example.com/profile"))
			s.Spec.Devices[0].ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: "mem", Counters: map[string]resourcev1.Counter{"bytes": {}}}}
		}, want: []string{"spec.devices[0].attributes[gpu.example.com/profile]: Required value: device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set"}},
		{name: "partition type attribute given bare", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.PartitionTypeAttribute = ptr(resourcev1.FullyQualifiedName("gpu.example.com/profile"))
			s.Spec.Devices[0].ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: "mem", Counters: map[string]resourcev1.Counter{"bytes": {}}}}
			s.Spec.Devices[0].Attributes["profile"] = resourcev1.DeviceAttribute{StringValue: ptr("1g")}
		}},
		{name: "empty list attribute", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices[0].Attributes["cores"] = resourcev1.DeviceAttribute{IntValues: []int64{}}
		}, want: []string{"spec.devices[0].attributes[cores].ints: Invalid value: []: must not be empty if specified"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSlice()
			tt.mutate(s)
			expectMessages(t, ValidateResourceSlice(s), tt.want...)
		})
	}
	old := validSlice()
	old.ResourceVersion = "1"
	moved := old.DeepCopy()
	moved.Spec.NodeName = ptr("node2")
	moved.Spec.Driver = "other.example.com"
	registrytest.ExpectErrors(t, ValidateResourceSliceUpdate(moved, old), "spec.driver: Invalid value", "spec.nodeName: Invalid value")
}

func TestResourceSliceFields(t *testing.T) {
	s := validSlice()
	got := ResourceSliceFields(s)
	want := map[string]string{"spec.nodeName": "node1", "spec.driver": "gpu.example.com", "spec.pool.name": "node1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	s.Spec.NodeName = nil
	if got := ResourceSliceFields(s)["spec.nodeName"]; got != "" {
		t.Errorf("spec.nodeName of a slice without node = %q, want empty", got)
	}
}

func TestDeviceTaintTimeAdded(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC))
	defs := map[string]*registry.Definition{}
	for _, d := range definitions(clk) {
		defs[d.Resource] = d
	}
	s := validSlice()
	s.Spec.Devices[0].Taints = []resourcev1.DeviceTaint{{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNoSchedule}}
	defs["resourceslices"].Strategy.Default(s)
	if got := s.Spec.Devices[0].Taints[0].TimeAdded; got == nil || !got.Time.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("slice taint timeAdded = %v, want the clock's time in seconds", got)
	}

	rule := &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r", ResourceVersion: "1"},
		Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNone}}}
	d := defs["devicetaintrules"]
	d.Strategy.Default(rule)
	first := *rule.Spec.Taint.TimeAdded
	expectMessages(t, d.Strategy.Validate(rule))
	clk.Step(time.Minute)
	// Same effect: the time stays.
	relabel := rule.DeepCopy()
	relabel.Spec.Taint.Value = "yes"
	d.Strategy.Default(relabel)
	d.Strategy.PrepareForUpdate(relabel, rule)
	if !relabel.Spec.Taint.TimeAdded.Equal(&first) {
		t.Errorf("timeAdded changed without an effect change: %v", relabel.Spec.Taint.TimeAdded)
	}
	// New effect with the old time: reset to now.
	evict := rule.DeepCopy()
	evict.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
	d.Strategy.PrepareForUpdate(evict, rule)
	if !evict.Spec.Taint.TimeAdded.Time.Equal(first.Add(time.Minute)) {
		t.Errorf("timeAdded after the effect changed = %v, want %v", evict.Spec.Taint.TimeAdded, first.Add(time.Minute))
	}
}

func TestValidateDeviceTaintRule(t *testing.T) {
	rule := func() *resourcev1.DeviceTaintRule {
		return &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr("gpu.example.com"), Pool: ptr("node1"), Device: ptr("gpu-0")},
			Taint:          resourcev1.DeviceTaint{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNoExecute}}}
	}
	expectMessages(t, ValidateDeviceTaintRule(rule()))
	bad := rule()
	bad.Spec.DeviceSelector.Device = ptr("GPU_0")
	bad.Spec.Taint.Effect = ""
	expectMessages(t, ValidateDeviceTaintRule(bad),
		`spec.deviceSelector.device: Invalid value: "GPU_0": a lowercase RFC 1123 label must consist of`,
		"spec.taint.effect: Required value")
	old := rule()
	old.ResourceVersion = "1"
	st := old.DeepCopy()
	for i := 0; i < 9; i++ {
		st.Status.Conditions = append(st.Status.Conditions, metav1.Condition{Type: "C" + string(rune('a'+i)), Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Now()})
	}
	expectMessages(t, ValidateDeviceTaintRuleStatusUpdate(st, old), "status.conditions: Too many: 9: must have at most 8 items")
}

func TestDropAlphaFields(t *testing.T) {
	withAlpha := func() *resourcev1.ResourceSlice {
		s := validSlice()
		s.Spec.SkipNodeOperations = []resourcev1.SkipNodeOperation{resourcev1.SkipNodeOperationAll}
		d := &s.Spec.Devices[0]
		d.Attributes["cores"] = resourcev1.DeviceAttribute{IntValues: []int64{1, 2}}
		d.NodeAllocatableResources = map[corev1.ResourceName]resourcev1.NodeAllocatableResource{"cpu": {}}
		d.ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: "mem", CompatibilityGroups: []string{"a"}}}
		return s
	}
	s := withAlpha()
	DropAlphaResourceSliceFields(s, nil)
	d := s.Spec.Devices[0]
	if s.Spec.SkipNodeOperations != nil || d.Attributes["cores"].IntValues != nil || d.NodeAllocatableResources != nil || d.ConsumesCounters[0].CompatibilityGroups != nil {
		t.Errorf("alpha fields kept on create: %+v", s.Spec)
	}
	if d.Attributes["model"].StringValue == nil || d.ConsumesCounters[0].CounterSet != "mem" {
		t.Errorf("GA fields dropped: %+v", d)
	}
	// An update keeps what the stored object already uses.
	old := withAlpha()
	s = withAlpha()
	DropAlphaResourceSliceFields(s, old)
	d = s.Spec.Devices[0]
	if s.Spec.SkipNodeOperations == nil || d.Attributes["cores"].IntValues == nil || d.NodeAllocatableResources == nil || d.ConsumesCounters[0].CompatibilityGroups == nil {
		t.Errorf("alpha fields in use dropped on update: %+v", s.Spec)
	}

	c := validClaim()
	c.Spec.Devices.Requests[0].Exactly.DerivedAttributes = []resourcev1.DeviceDerivedAttribute{{}}
	c.Spec.Devices.Requests[1].FirstAvailable[0].DerivedAttributes = []resourcev1.DeviceDerivedAttribute{{}}
	kept := c.Spec.DeepCopy()
	DropAlphaClaimSpecFields(kept, &c.Spec)
	DropAlphaClaimSpecFields(&c.Spec, nil)
	if c.Spec.Devices.Requests[0].Exactly.DerivedAttributes != nil || c.Spec.Devices.Requests[1].FirstAvailable[0].DerivedAttributes != nil {
		t.Errorf("derived attributes kept on create")
	}
	if kept.Devices.Requests[0].Exactly.DerivedAttributes == nil {
		t.Errorf("derived attributes in use dropped on update")
	}
}
