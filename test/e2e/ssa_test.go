package e2e

import (
	"fmt"
	"testing"
	"time"
)

// kubectlServerSideApply: `kubectl apply --server-side` creates and updates,
// a second manager's apply of a field another owns fails with upstream's
// conflict and wins with --force-conflicts, --show-managed-fields shows who
// owns what, and an object made by client-side apply moves to server-side
// apply (kubectl's last-applied upgrade) without conflicts, after which
// dropping a field from the manifest removes it; containers merge by name;
// a scale through the subresource is owned as such.
func kubectlServerSideApply(t *testing.T, c *cluster, k kc) {
	const ns = "e2e-ssa"
	createNS(t, c, ns)
	cm := func(name string, data string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n%s", name, ns, data)
	}

	wantLines(t, k.withStdin(cm("ssa", "  a: one\n  b: two\n")).ok(t, "apply", "--server-side", "-f", "-"), "configmap/ssa serverside-applied")
	wantLines(t, k.withStdin(cm("ssa", "  a: one\n  b: two\n")).ok(t, "apply", "--server-side", "-f", "-"), "configmap/ssa serverside-applied")

	errOut := k.withStdin(cm("ssa", "  a: changed\n")).fails(t, "apply", "--server-side", "--field-manager=other", "-f", "-")
	wantContains(t, errOut,
		`error: Apply failed with 1 conflict: conflict with "kubectl": .data.a`,
		"Please review the fields above--they currently have other managers.",
		"--force-conflicts")
	wantEqual(t, "data.a after the conflict", jsonpath(t, k, "{.data.a}", "-n", ns, "get", "cm", "ssa"), "one")

	wantLines(t, k.withStdin(cm("ssa", "  a: changed\n")).ok(t, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-"),
		"configmap/ssa serverside-applied")
	wantEqual(t, "data after force", jsonpath(t, k, "{.data}", "-n", ns, "get", "cm", "ssa"), `{"a":"changed","b":"two"}`)

	out := k.ok(t, "-n", ns, "get", "cm", "ssa", "-o", "yaml", "--show-managed-fields")
	wantContains(t, out, "  managedFields:", "    manager: kubectl\n    operation: Apply", "    manager: other\n    operation: Apply",
		"      f:data:\n        f:a: {}\n")
	wantNotContains(t, k.ok(t, "-n", ns, "get", "cm", "ssa", "-o", "yaml"), "managedFields")
	wantEqual(t, "managers", jsonpath(t, k, `{range .metadata.managedFields[*]}{.manager}/{.operation} {end}`, "-n", ns, "get", "cm", "ssa", "--show-managed-fields"),
		"kubectl/Apply other/Apply ")

	// The first manager drops b from its manifest: b goes; a stays (other owns it).
	wantLines(t, k.withStdin(cm("ssa", "  c: three\n")).ok(t, "apply", "--server-side", "-f", "-"), "configmap/ssa serverside-applied")
	wantEqual(t, "data after dropping b", jsonpath(t, k, "{.data}", "-n", ns, "get", "cm", "ssa"), `{"a":"changed","c":"three"}`)

	// Imperative writes are recorded under kubectl's managers.
	wantLines(t, k.ok(t, "-n", ns, "create", "configmap", "imp", "--from-literal=k=v"), "configmap/imp created")
	wantLines(t, k.ok(t, "-n", ns, "label", "configmap", "imp", "team=a"), "configmap/imp labeled")
	wantEqual(t, "imperative managers", jsonpath(t, k, `{range .metadata.managedFields[*]}{.manager}/{.operation} {end}`, "-n", ns, "get", "cm", "imp", "--show-managed-fields"),
		"kubectl-create/Update kubectl-label/Update ")

	// Client-side apply, then server-side apply of a smaller manifest.
	wantLines(t, k.withStdin(cm("mig", "  a: one\n  b: two\n")).ok(t, "apply", "-f", "-"), "configmap/mig created")
	wantEqual(t, "client-side manager", jsonpath(t, k, `{range .metadata.managedFields[*]}{.manager}/{.operation} {end}`, "-n", ns, "get", "cm", "mig", "--show-managed-fields"),
		"kubectl-client-side-apply/Update ")
	wantLines(t, k.withStdin(cm("mig", "  a: new\n")).ok(t, "apply", "--server-side", "-f", "-"), "configmap/mig serverside-applied")
	wantEqual(t, "data after migrating", jsonpath(t, k, "{.data}", "-n", ns, "get", "cm", "mig"), `{"a":"new"}`)
	wantEqual(t, "managers after migrating", jsonpath(t, k, `{range .metadata.managedFields[*]}{.manager}/{.operation} {end}`, "-n", ns, "get", "cm", "mig", "--show-managed-fields"),
		// kubectl keeps the last-applied annotation under its own manager
		// (saveLastApplyAnnotationIfNecessary), the rest moves to "kubectl".
		"kubectl-last-applied/Apply kubectl/Apply ")

	// A deployment: containers merge by name between two managers.
	dep := func(container, image string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %s
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: %s
        image: %s
`, ns, container, image)
	}
	wantLines(t, k.withStdin(dep("main", "nginx:1.25")).ok(t, "apply", "--server-side", "-f", "-"), "deployment.apps/web serverside-applied")
	wantLines(t, k.withStdin(dep("sidecar", "busybox:1.36")).ok(t, "apply", "--server-side", "--field-manager=sidecar-injector", "-f", "-"), "deployment.apps/web serverside-applied")
	wantEqual(t, "containers", jsonpath(t, k, `{range .spec.template.spec.containers[*]}{.name}={.image} {end}`, "-n", ns, "get", "deploy", "web"),
		"main=nginx:1.25 sidecar=busybox:1.36 ")
	wantLines(t, k.ok(t, "-n", ns, "scale", "deploy", "web", "--replicas=3"), "deployment.apps/web scaled")
	// kubectl scale sends no fieldManager: the manager is the User-Agent's
	// product, the kubectl binary's name.
	wantMatch(t, jsonpath(t, k, `{range .metadata.managedFields[?(@.subresource=="scale")]}{.manager}/{.operation}/{.apiVersion} {end}`, "-n", ns, "get", "deploy", "web", "--show-managed-fields"),
		`^kubectl[.0-9]*/Update/apps/v1 $`)

	// A custom resource: the CRD's schema drives the merge.
	const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.ssa.e2e.skiff.sh
spec:
  group: ssa.e2e.skiff.sh
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
`
	wantLines(t, k.withStdin(crd).ok(t, "apply", "--server-side", "-f", "-"), "customresourcedefinition.apiextensions.k8s.io/gizmos.ssa.e2e.skiff.sh serverside-applied")
	k.waitEstablished(t, "crd/gizmos.ssa.e2e.skiff.sh")
	gizmo := func(size, port string) string {
		return fmt.Sprintf("apiVersion: ssa.e2e.skiff.sh/v1\nkind: Gizmo\nmetadata:\n  name: g\n  namespace: %s\nspec:\n  size: %s\n  ports:\n  - {name: %s, port: 80}\n", ns, size, port)
	}
	eventually(t, 30*time.Second, "gizmos served", func() (bool, string) {
		_, errOut, err := k.withStdin(gizmo("1", "http")).run(t, "apply", "--server-side", "-f", "-")
		return err == nil, errOut
	})
	wantLines(t, k.withStdin(gizmo("1", "metrics")).ok(t, "apply", "--server-side", "--field-manager=monitoring", "-f", "-"), "gizmo.ssa.e2e.skiff.sh/g serverside-applied")
	// Fully qualified: the namespace suite has a gizmos.e2e.skiff.sh of its
	// own on the shared cluster, and kubectl may resolve "gizmo" to it.
	wantEqual(t, "gizmo ports", jsonpath(t, k, `{range .spec.ports[*]}{.name} {end}`, "-n", ns, "get", "gizmos.ssa.e2e.skiff.sh", "g"), "http metrics ")
	errOut = k.withStdin(gizmo("3", "metrics")).fails(t, "apply", "--server-side", "--field-manager=monitoring", "-f", "-")
	wantContains(t, errOut, `error: Apply failed with 1 conflict: conflict with "kubectl": .spec.size`)
	wantLines(t, k.withStdin(gizmo("3", "metrics")).ok(t, "apply", "--server-side", "--field-manager=monitoring", "--force-conflicts", "-f", "-"), "gizmo.ssa.e2e.skiff.sh/g serverside-applied")
	wantEqual(t, "gizmo size", jsonpath(t, k, "{.spec.size}", "-n", ns, "get", "gizmos.ssa.e2e.skiff.sh", "g"), "3")
	wantLines(t, k.ok(t, "delete", "crd", "gizmos.ssa.e2e.skiff.sh"), `customresourcedefinition.apiextensions.k8s.io "gizmos.ssa.e2e.skiff.sh" deleted`)
}
