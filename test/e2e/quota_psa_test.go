package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ResourceQuota with real kubectl: `kubectl create quota`, then the pod
// past it refused with upstream's message, and a compute quota asking
// containers to state their limits.
func TestResourceQuotaKubectl(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()
	const ns = "e2e-quota-admission"
	createNS(t, c, ns)
	wantLines(t, k.ok(t, "-n", ns, "create", "quota", "pods", "--hard=pods=1"), "resourcequota/pods created")
	// The quota is enforced once the quota controller has observed it.
	eventually(t, 30*time.Second, "the quota controller to fill status.used", func() (bool, string) {
		out, errOut, err := k.run(t, "-n", ns, "get", "quota", "pods", "-o", "jsonpath={.status.used.pods}")
		return err == nil && strings.TrimSpace(out) == "0", out + errOut
	})
	wantLines(t, k.ok(t, "-n", ns, "run", "first", "--image=nginx:1.27"), "pod/first created")
	wantContains(t, k.fails(t, "-n", ns, "run", "second", "--image=nginx:1.27"),
		`Error from server (Forbidden): pods "second" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1`)
	wantEqual(t, "status.used.pods", jsonpath(t, k, "{.status.used.pods}", "-n", ns, "get", "quota", "pods"), "1")

	const ns2 = "e2e-quota-cpu"
	createNS(t, c, ns2)
	k.ok(t, "-n", ns2, "create", "quota", "compute", "--hard=limits.cpu=1")
	eventually(t, 30*time.Second, "the quota controller to fill status.used", func() (bool, string) {
		out, errOut, err := k.run(t, "-n", ns2, "get", "quota", "compute", "-o", "jsonpath={.status.used.limits\\.cpu}")
		return err == nil && strings.TrimSpace(out) == "0", out + errOut
	})
	wantContains(t, k.fails(t, "-n", ns2, "run", "nolimits", "--image=nginx:1.27"),
		`Error from server (Forbidden): pods "nolimits" is forbidden: failed quota: compute: must specify limits.cpu for: nolimits`)
	pod := `apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ` + ns2 + `}
spec:
  containers: [{name: c, image: nginx:1.27, resources: {limits: {cpu: "2"}}}]
`
	wantContains(t, k.withStdin(pod).fails(t, "apply", "-f", "-"),
		`pods "big" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=1`)
}

// createLabelledNS creates a namespace with labels (so that admission
// sees them from the first pod on) and waits for its service account.
func createLabelledNS(t *testing.T, c *cluster, ns string, labels ...string) {
	t.Helper()
	y := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + ns + "\n  labels:\n"
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		y += "    " + k + ": " + v + "\n"
	}
	wantLines(t, c.k().withStdin(y).ok(t, "apply", "-f", "-"), "namespace/"+ns+" created")
	eventually(t, 30*time.Second, "the default service account in "+ns, func() (bool, string) {
		out, errOut, err := c.k().run(t, "-n", ns, "get", "serviceaccount/default", "-o", "name")
		return err == nil && strings.TrimSpace(out) == "serviceaccount/default", errOut
	})
}

func privilegedPodYAML(ns string) string {
	return `apiVersion: v1
kind: Pod
metadata: {name: priv, namespace: ` + ns + `}
spec:
  containers: [{name: c, image: nginx:1.27, securityContext: {privileged: true}}]
`
}

// PodSecurity with real kubectl: a restricted namespace refuses a
// privileged pod with upstream's message; a warn=baseline namespace
// admits it and kubectl prints upstream's warning; raising the enforce
// level warns about the pod already there.
func TestPodSecurityKubectl(t *testing.T) {
	t.Parallel()
	c := shared(t)
	k := c.k()

	const restricted = "e2e-psa-restricted"
	createLabelledNS(t, c, restricted, "pod-security.kubernetes.io/enforce=restricted")
	wantContains(t, k.withStdin(privilegedPodYAML(restricted)).fails(t, "apply", "-f", "-"),
		`pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), `+
			`allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), `+
			`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), `+
			`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), `+
			`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`)
	k.fails(t, "-n", restricted, "get", "pod", "priv")

	const warn = "e2e-psa-warn"
	createLabelledNS(t, c, warn, "pod-security.kubernetes.io/warn=baseline")
	out, errOut, err := k.withStdin(privilegedPodYAML(warn)).run(t, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("apply: %v: %s", err, errOut)
	}
	wantLines(t, out, "pod/priv created")
	wantContains(t, errOut, `Warning: would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`)

	out, errOut, err = k.run(t, "label", "namespace", warn, "pod-security.kubernetes.io/enforce=baseline")
	if err != nil {
		t.Fatalf("label: %v: %s", err, errOut)
	}
	wantLines(t, out, "namespace/"+warn+" labeled")
	wantContains(t, errOut, `Warning: existing pods in namespace "`+warn+`" violate the new PodSecurity enforce level "baseline:latest"`)
	wantContains(t, errOut, "Warning: priv: privileged")
}

// An unknown admission plugin name stops skiff up at start with the valid
// names listed, as kube-apiserver's flag validation does.
func TestAdmissionPluginFlags(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(skiffBin, "up", "--data-dir", t.TempDir(), "--secure-port", "0", "--enable-admission-plugins=NoSuchPlugin").CombinedOutput()
	if err == nil {
		t.Fatalf("skiff up with an unknown admission plugin succeeded:\n%s", out)
	}
	wantContains(t, string(out), `enable-admission-plugins plugin "NoSuchPlugin" is unknown (valid admission plugins: AlwaysAdmit, NamespaceAutoProvision, NamespaceLifecycle,`)
}
