package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// Deleting a namespace removes everything in it, custom resources
// included, as upstream's namespace controller: pods first (the rest waits
// for them), what cannot go yet (a pod, then a custom resource, held by
// finalizers) named in the namespace's conditions, and once the finalizers
// are removed nothing is left.
func kubectlNamespaceContents(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-ns-contents"
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.e2e.skiff.sh}
spec:
  group: e2e.skiff.sh
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`
	k.withStdin(crd).ok(t, "apply", "-f", "-")
	defer k.run(t, "delete", "crd", "gizmos.e2e.skiff.sh", "--wait=false")
	k.waitEstablished(t, "crd/gizmos.e2e.skiff.sh")
	createNS(t, c, ns)
	k.withStdin(`apiVersion: e2e.skiff.sh/v1
kind: Gizmo
metadata: {name: held, namespace: `+ns+`, finalizers: [e2e.skiff.sh/hold]}
---
apiVersion: e2e.skiff.sh/v1
kind: Gizmo
metadata: {name: free, namespace: `+ns+`}
---
apiVersion: v1
kind: Pod
metadata: {name: held, namespace: `+ns+`, finalizers: [e2e.skiff.sh/hold]}
spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: `+ns+`}
`).ok(t, "apply", "-f", "-")
	k.ok(t, "-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=2")

	wantLines(t, k.ok(t, "delete", "namespace", ns, "--wait=false"), `namespace "`+ns+`" deleted`)
	conditions := func() string {
		return jsonpath(t, k, `{range .status.conditions[*]}{.type}={.status}:{.message}{"\n"}{end}`, "get", "namespace", ns)
	}
	// Pods go first and are waited for (upstream's ordered namespace
	// deletion): while a finalizer holds one, the rest stays.
	eventually(t, 30*time.Second, "pods deleted first", func() (bool, string) {
		out, errOut, _ := k.run(t, "-n", ns, "get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name}:{.metadata.deletionTimestamp}{"\n"}{end}`)
		return regexp.MustCompile(`^held:20[0-9-]+T[0-9:]+Z$`).MatchString(strings.TrimSpace(out)), out + errOut
	})
	eventually(t, 30*time.Second, "conditions naming the held pod", func() (bool, string) {
		out := conditions()
		return strings.Contains(out, "NamespaceFinalizersRemaining=True:Some content in the namespace has finalizers remaining: e2e.skiff.sh/hold in 1 resource instances") &&
			strings.Contains(out, "pods. has 1 resource instances") && strings.Contains(out, "NamespaceDeletionContentFailure=False"), out
	})
	wantContains(t, k.ok(t, "-n", ns, "get", "configmaps,deployments,gizmos.e2e.skiff.sh", "-o", "name"), "configmap/cfg", "deployment.apps/web", "gizmo.e2e.skiff.sh/free")
	wantEqual(t, "phase", jsonpath(t, k, "{.status.phase}", "get", "namespace", ns), "Terminating")

	// Released, the pod goes, then everything else but the held gizmo.
	k.ok(t, "-n", ns, "patch", "pod", "held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	eventually(t, 30*time.Second, "the rest deleted", func() (bool, string) {
		out, errOut, _ := k.run(t, "-n", ns, "get", "pods,configmaps,deployments,replicasets,gizmos.e2e.skiff.sh", "-o", "name")
		return strings.TrimSpace(out) == "gizmo.e2e.skiff.sh/held", out + errOut
	})
	eventually(t, 30*time.Second, "conditions naming the held gizmo", func() (bool, string) {
		out := conditions()
		return strings.Contains(out, "NamespaceContentRemaining=True:Some resources are remaining: gizmos.e2e.skiff.sh has 1 resource instances\n") &&
			strings.Contains(out, "NamespaceFinalizersRemaining=True:Some content in the namespace has finalizers remaining: e2e.skiff.sh/hold in 1 resource instances"), out
	})
	k.ok(t, "-n", ns, "patch", "gizmos.e2e.skiff.sh", "held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	eventually(t, 60*time.Second, "the namespace to go", func() (bool, string) {
		_, errOut, err := k.run(t, "get", "namespace", ns)
		return err != nil && strings.Contains(errOut, "NotFound"), errOut
	})
	// Nothing is left behind: re-created, the namespace is empty.
	createNS(t, c, ns)
	_, errOut, _ := k.run(t, "-n", ns, "get", "all,gizmos.e2e.skiff.sh")
	wantEqual(t, "re-created namespace", errOut, "No resources found in "+ns+" namespace.")
}
