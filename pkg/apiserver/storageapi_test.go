package apiserver_test

import (
	"net/http"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The storage.k8s.io resources upstream's scheduler and CSI sidecars watch:
// invalid objects get a 422 naming upstream's field paths, and a
// VolumeAttachment's status changes only through volumeattachments/status.
func TestStorageAPIResources(t *testing.T) {
	c := start(t)
	const base = "/apis/storage.k8s.io/v1"
	t.Run("invalid", func(t *testing.T) {
		tests := []struct {
			name, path string
			body       jsonObj
			msg        string
		}{
			{"csidriver", base + "/csidrivers", jsonObj{"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
				"metadata": jsonObj{"name": "d.example.com"}, "spec": jsonObj{"fsGroupPolicy": "Sometimes"}},
				`CSIDriver.storage.k8s.io "d.example.com" is invalid: spec.fsGroupPolicy: Unsupported value: "Sometimes": supported values: "File", "None", "ReadWriteOnceWithFSType"`},
			{"volumeattachment", base + "/volumeattachments", jsonObj{"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
				"metadata": jsonObj{"name": "va"}, "spec": jsonObj{"attacher": "csi.example.com", "nodeName": "n1", "source": jsonObj{}}},
				`VolumeAttachment.storage.k8s.io "va" is invalid: spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName`},
			{"volumeattributesclass", base + "/volumeattributesclasses", jsonObj{"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass",
				"metadata": jsonObj{"name": "gold"}, "driverName": "csi.example.com"},
				`VolumeAttributesClass.storage.k8s.io "gold" is invalid: parameters: Required value: must contain at least one key/value pair`},
			{"csistoragecapacity", base + "/namespaces/default/csistoragecapacities", jsonObj{"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
				"metadata": jsonObj{"name": "cap"}, "storageClassName": "fast", "capacity": "-1"},
				`CSIStorageCapacity.storage.k8s.io "cap" is invalid: capacity: Invalid value: "-1": must be greater than or equal to 0`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				code, _, data := c.on(t).do(http.MethodPost, tc.path, tc.body, "", "")
				expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, tc.msg)
			})
		}
	})
	t.Run("csidriver updates", func(t *testing.T) {
		c := c.on(t)
		var d storagev1.CSIDriver
		c.call(http.MethodPost, base+"/csidrivers", jsonObj{"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
			"metadata": jsonObj{"name": "gen.example.com"}}, http.StatusCreated, &d)
		if d.Generation != 0 {
			t.Errorf("generation at creation = %d, want unset as upstream", d.Generation)
		}
		d.Spec.PodInfoOnMount = new(true)
		c.call(http.MethodPut, base+"/csidrivers/gen.example.com", d, http.StatusOK, &d)
		if d.Generation != 1 {
			t.Errorf("generation after a spec change = %d, want 1", d.Generation)
		}
		d.Labels = map[string]string{"a": "b"}
		c.call(http.MethodPut, base+"/csidrivers/gen.example.com", d, http.StatusOK, &d)
		if d.Generation != 1 {
			t.Errorf("generation after a label change = %d, want 1", d.Generation)
		}
		// no unconditional update
		d.ResourceVersion = ""
		code, _, data := c.do(http.MethodPut, base+"/csidrivers/gen.example.com", d, "", "")
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`CSIDriver.storage.k8s.io "gen.example.com" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`)
	})
	t.Run("csinodes/status", func(t *testing.T) {
		c := c.on(t)
		var n storagev1.CSINode
		c.call(http.MethodPost, base+"/csinodes", jsonObj{"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
			"metadata": jsonObj{"name": "node-status"}, "spec": jsonObj{"drivers": []any{}}}, http.StatusCreated, &n)
		// storage health is behind the CSIVolumeHealth gate (off): dropped
		n.Status.StorageHealth = []storagev1.StorageHealth{{Name: "a.csi.example.com"}}
		var got storagev1.CSINode
		c.call(http.MethodPut, base+"/csinodes/node-status/status", n, http.StatusOK, &got)
		if got.Name != "node-status" || len(got.Status.StorageHealth) != 0 {
			t.Errorf("status update answered %s with status %+v, want the gated field dropped", got.Name, got.Status)
		}
	})
	t.Run("volumeattachments/status", func(t *testing.T) {
		c := c.on(t)
		var va storagev1.VolumeAttachment
		c.call(http.MethodPost, base+"/volumeattachments", jsonObj{"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
			"metadata": jsonObj{"name": "va-status"},
			"spec":     jsonObj{"attacher": "csi.example.com", "nodeName": "n1", "source": jsonObj{"persistentVolumeName": "pv1"}}}, http.StatusCreated, &va)
		va.Status.Attached = true
		va.Status.AttachmentMetadata = map[string]string{"devicePath": "/dev/xvdb"}
		va.Spec.NodeName = "n2" // ignored by the status subresource
		var got storagev1.VolumeAttachment
		c.call(http.MethodPut, base+"/volumeattachments/va-status/status", va, http.StatusOK, &got)
		if !got.Status.Attached || got.Status.AttachmentMetadata["devicePath"] != "/dev/xvdb" || got.Spec.NodeName != "n1" {
			t.Errorf("after a status update: spec.nodeName %q status %+v", got.Spec.NodeName, got.Status)
		}
		// The main resource ignores status and refuses spec changes.
		got.Status.Attached = false
		got.Spec.NodeName = "n2"
		code, _, data := c.do(http.MethodPut, base+"/volumeattachments/va-status", got, "", "")
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	})
}
