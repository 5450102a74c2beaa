package e2e

import (
	"strings"
	"testing"
	"time"
)

// ValidatingAdmissionPolicy with real kubectl: upstream's documented
// demo policy (at most 5 replicas) with a Deny binding refuses `kubectl
// create deployment --replicas=10` with upstream's message; a Warn binding
// shows upstream's warning on kubectl's stderr and admits the object. The
// bindings are limited to the test's namespaces (the cluster is shared).
func TestValidatingAdmissionPolicyKubectl(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()
	const ns, warnNS = "e2e-vap-deny", "e2e-vap-warn"
	createNS(t, c, ns)
	createNS(t, c, warnNS)
	policy := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: demo-policy.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: demo-binding-test.example.com
spec:
  policyName: demo-policy.example.com
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ` + ns + `
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: demo-binding-warn.example.com
spec:
  policyName: demo-policy.example.com
  validationActions: [Warn]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ` + warnNS + `
`
	wantLines(t, k.withStdin(policy).ok(t, "apply", "-f", "-"),
		"validatingadmissionpolicy.admissionregistration.k8s.io/demo-policy.example.com created",
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/demo-binding-test.example.com created",
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/demo-binding-warn.example.com created")
	// The policy applies once the API server's watch cache has it.
	var errOut string
	eventually(t, 30*time.Second, "the policy to refuse a deployment", func() (bool, string) {
		_, e, err := k.run(t, "-n", ns, "create", "deployment", "big", "--image=nginx:1.27", "--replicas=10", "--dry-run=server")
		errOut = e
		return err != nil, e
	})
	wantContains(t, k.fails(t, "-n", ns, "create", "deployment", "big", "--image=nginx:1.27", "--replicas=10"),
		`error: failed to create deployment: deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5`)
	wantLines(t, k.ok(t, "-n", ns, "create", "deployment", "small", "--image=nginx:1.27", "--replicas=2"), "deployment.apps/small created")

	eventually(t, 30*time.Second, "the warning", func() (bool, string) {
		_, e, err := k.run(t, "-n", warnNS, "create", "deployment", "probe", "--image=nginx:1.27", "--replicas=10", "--dry-run=server")
		return err == nil && strings.Contains(e, "Warning:"), e
	})
	out, errOut, err := k.run(t, "-n", warnNS, "create", "deployment", "big", "--image=nginx:1.27", "--replicas=10")
	if err != nil {
		t.Fatalf("warn binding refused the deployment: %v\n%s", err, errOut)
	}
	wantLines(t, out, "deployment.apps/big created")
	wantContains(t, errOut, `Warning: Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-warn.example.com': failed expression: object.spec.replicas <= 5`)

	// kubectl delete of the binding lifts the denial.
	k.ok(t, "delete", "validatingadmissionpolicybinding", "demo-binding-test.example.com")
	eventually(t, 30*time.Second, "the binding to be gone", func() (bool, string) {
		_, e, err := k.run(t, "-n", ns, "create", "deployment", "big", "--image=nginx:1.27", "--replicas=10", "--dry-run=server")
		return err == nil, e
	})
	k.ok(t, "delete", "validatingadmissionpolicy", "demo-policy.example.com")
}

// MutatingAdmissionPolicy with real kubectl: a policy setting a label
// with an ApplyConfiguration and the replicas' upper bound with a
// JSONPatch; kubectl create deployment then shows both.
func TestMutatingAdmissionPolicyKubectl(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()
	const ns = "e2e-map"
	createNS(t, c, ns)
	policy := `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: e2e-defaults.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"mutated-by": "e2e-defaults"}}}'
  - patchType: JSONPatch
    jsonPatch:
      expression: 'object.spec.replicas > 3 ? [JSONPatch{op: "replace", path: "/spec/replicas", value: 3}] : []'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: e2e-defaults-binding.example.com
spec:
  policyName: e2e-defaults.example.com
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ` + ns + `
`
	wantLines(t, k.withStdin(policy).ok(t, "apply", "-f", "-"),
		"mutatingadmissionpolicy.admissionregistration.k8s.io/e2e-defaults.example.com created",
		"mutatingadmissionpolicybinding.admissionregistration.k8s.io/e2e-defaults-binding.example.com created")
	eventually(t, 30*time.Second, "the policy to mutate a deployment", func() (bool, string) {
		out, e, err := k.run(t, "-n", ns, "create", "deployment", "probe", "--image=nginx:1.27", "--dry-run=server", "-o", "jsonpath={.metadata.labels.mutated-by}")
		return err == nil && out == "e2e-defaults", out + e
	})
	wantLines(t, k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=8"), "deployment.apps/web created")
	wantEqual(t, "labels", jsonpath(t, k, "{.metadata.labels.mutated-by} {.metadata.labels.app} {.spec.replicas}", "-n", ns, "get", "deployment", "web"), "e2e-defaults web 3")
	k.ok(t, "delete", "mutatingadmissionpolicybinding", "e2e-defaults-binding.example.com")
	k.ok(t, "delete", "mutatingadmissionpolicy", "e2e-defaults.example.com")
}
