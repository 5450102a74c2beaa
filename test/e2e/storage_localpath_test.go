package e2e

import (
	"strings"
	"testing"
	"time"
)

// skiff up's storage controllers: the default local-path StorageClass;
// a claim of it waits for its first consumer; a pod naming a node makes
// the local-path provisioner create a hostPath volume there, which the
// PV binder binds; kubectl get pv,pvc show upstream's columns; deleting
// the claim deletes the volume (reclaim policy Delete).
func TestLocalPathProvisioner(t *testing.T) {
	c := shared(t)
	k := c.k()
	const ns = "storage-local-path"
	k.ok(t, "create", "namespace", ns)
	defer k.run(t, "delete", "namespace", ns, "--wait=false")
	// The pods below name node-1 (no scheduler yet): it must exist, or the
	// pod garbage collector deletes them as orphans after 40s.
	k.withStdin("apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n").ok(t, "apply", "-f", "-")

	eventually(t, 30*time.Second, "the default local-path StorageClass", func() (bool, string) {
		out, _, _ := k.run(t, "get", "storageclass", "local-path")
		return strings.Contains(out, "local-path (default)"), out
	})
	out := k.ok(t, "get", "storageclass", "local-path")
	wantTable(t, out, []string{"NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"},
		[]string{"local-path", `\(default\)`, "skiff.io/local-path", "Delete", "WaitForFirstConsumer", "false", age})

	k.withStdin(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
`).ok(t, "-n", ns, "apply", "-f", "-")
	eventually(t, 30*time.Second, "WaitForFirstConsumer", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "describe", "pvc", "data")
		return strings.Contains(out, "waiting for first consumer to be created before binding"), out
	})
	out = k.ok(t, "-n", ns, "get", "pvc", "data")
	wantTable(t, out, []string{"NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"},
		[]string{"data", "Pending", "local-path", "<unset>", age})

	k.withStdin(`apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  nodeName: node-1
  containers:
  - name: c
    image: busybox
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
`).ok(t, "-n", ns, "apply", "-f", "-")
	eventually(t, 30*time.Second, "the claim Bound", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pvc", "data", "-o", "jsonpath={.status.phase}")
		return out == "Bound", out
	})
	pv := k.ok(t, "-n", ns, "get", "pvc", "data", "-o", "jsonpath={.spec.volumeName}")
	if !strings.HasPrefix(pv, "pvc-") {
		t.Fatalf("volume name %q", pv)
	}
	out = k.ok(t, "-n", ns, "get", "pvc", "data")
	wantTable(t, out, []string{"NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"},
		[]string{"data", "Bound", pv, "1Gi", "RWO", "local-path", "<unset>", age})
	out = k.ok(t, "get", "pv", pv)
	wantTable(t, out, []string{"NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"},
		[]string{pv, "1Gi", "RWO", "Delete", "Bound", ns + "/data", "local-path", "<unset>", age})
	out = k.ok(t, "get", "pv", pv, "-o", "jsonpath={.spec.hostPath.path} {.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]} {.metadata.annotations.pv\\.kubernetes\\.io/provisioned-by}")
	wantMatch(t, out, `^\S+/storage/`+pv+`_`+ns+`_data node-1 skiff\.io/local-path$`)
	out = k.ok(t, "-n", ns, "describe", "pvc", "data")
	wantContains(t, out, "ExternalProvisioning", "ProvisioningSucceeded", "Successfully provisioned volume "+pv)

	k.ok(t, "-n", ns, "delete", "pod", "web", "--grace-period=0", "--force")
	k.ok(t, "-n", ns, "delete", "pvc", "data")
	eventually(t, 30*time.Second, "the volume deleted", func() (bool, string) {
		_, errOut, err := k.run(t, "get", "pv", pv)
		return err != nil && strings.Contains(errOut, "NotFound"), errOut
	})
}

// A generic ephemeral volume: the ephemeral-volume controller makes the
// pod's claim <pod>-<volume> (owned by the pod), the local-path
// provisioner and the binder give it a volume on the pod's node, and
// deleting the pod deletes the claim (garbage collection) and then the
// volume.
func TestEphemeralVolumeLocalPath(t *testing.T) {
	c := shared(t)
	k := c.k()
	const ns = "storage-ephemeral"
	k.ok(t, "create", "namespace", ns)
	defer k.run(t, "delete", "namespace", ns, "--wait=false")
	// The pods below name node-1 (no scheduler yet): it must exist, or the
	// pod garbage collector deletes them as orphans after 40s.
	k.withStdin("apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n").ok(t, "apply", "-f", "-")
	k.withStdin(`apiVersion: v1
kind: Pod
metadata:
  name: job
spec:
  nodeName: node-1
  containers:
  - name: c
    image: busybox
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec:
          accessModes: [ReadWriteOnce]
          resources:
            requests:
              storage: 1Gi
`).ok(t, "-n", ns, "apply", "-f", "-")
	eventually(t, 30*time.Second, "the ephemeral claim Bound", func() (bool, string) {
		out, _, _ := k.run(t, "-n", ns, "get", "pvc", "job-scratch", "-o",
			`jsonpath={.status.phase} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.spec.storageClassName}`)
		return out == "Bound Pod/job local-path", out
	})
	pv := k.ok(t, "-n", ns, "get", "pvc", "job-scratch", "-o", "jsonpath={.spec.volumeName}")
	k.ok(t, "-n", ns, "delete", "pod", "job", "--grace-period=0", "--force")
	eventually(t, 30*time.Second, "the claim and its volume deleted", func() (bool, string) {
		_, e1, err1 := k.run(t, "-n", ns, "get", "pvc", "job-scratch")
		_, e2, err2 := k.run(t, "get", "pv", pv)
		return err1 != nil && err2 != nil && strings.Contains(e1, "NotFound") && strings.Contains(e2, "NotFound"), e1 + e2
	})
}
