package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// jsonObj is a decoded JSON object.
type jsonObj = map[string]any

// jsonField walks a decoded object along keys (a number string indexes a list).
func jsonField(o any, keys ...string) any {
	for _, k := range keys {
		switch v := o.(type) {
		case map[string]any:
			o = v[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i < 0 || i >= len(v) {
				return nil
			}
			o = v[i]
		default:
			return nil
		}
	}
	return o
}

func decodeObj(t testing.TB, data []byte) jsonObj {
	t.Helper()
	var o jsonObj
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("decoding: %v: %s", err, data)
	}
	return o
}

// crudKind is one resource under test; body builds an object named name
// carrying the suite label.
type crudKind struct {
	resource   string // e.g. "persistentvolumes"
	apiVersion string
	kind       string
	namespaced bool
	// qualified is the resource as errors name it ("storageclasses.storage.k8s.io").
	qualified string
	body      func(name string) jsonObj
	// update changes the spec in place; updated checks the change stuck.
	update  func(o jsonObj)
	updated func(o jsonObj) error
	// smp is a strategic merge patch beyond the labels; smpApplied checks it.
	smp        jsonObj
	smpApplied func(o jsonObj) error
	// deleteReturnsObject: upstream's DELETE answers with the deleted object
	// (the store's ReturnDeletedObject), not a success Status.
	deleteReturnsObject bool
}

const suiteLabel = "skiff-test/suite"

func labelled(apiVersion, kind, name string, extra jsonObj) jsonObj {
	o := jsonObj{"apiVersion": apiVersion, "kind": kind,
		"metadata": jsonObj{"name": name, "labels": jsonObj{suiteLabel: "crud"}}}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

func expectEqual(what string, got, want any) error {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("%s = %v, want %v", what, got, want)
	}
	return nil
}

var crudKinds = []crudKind{
	{
		resource: "persistentvolumes", apiVersion: "v1", kind: "PersistentVolume", qualified: "persistentvolumes",
		body: func(name string) jsonObj {
			return labelled("v1", "PersistentVolume", name, jsonObj{"spec": jsonObj{
				"capacity": jsonObj{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"},
				"hostPath": jsonObj{"path": "/tmp/" + name},
			}})
		},
		update: func(o jsonObj) { jsonField(o, "spec", "capacity").(jsonObj)["storage"] = "2Gi" },
		updated: func(o jsonObj) error {
			return expectEqual("spec.capacity.storage", jsonField(o, "spec", "capacity", "storage"), "2Gi")
		},
		smp: jsonObj{"spec": jsonObj{"mountOptions": []any{"ro"}}},
		smpApplied: func(o jsonObj) error {
			return expectEqual("spec.mountOptions", jsonField(o, "spec", "mountOptions"), []any{"ro"})
		},
		deleteReturnsObject: true,
	},
	{
		resource: "persistentvolumeclaims", apiVersion: "v1", kind: "PersistentVolumeClaim", namespaced: true, qualified: "persistentvolumeclaims",
		body: func(name string) jsonObj {
			return labelled("v1", "PersistentVolumeClaim", name, jsonObj{"spec": jsonObj{
				"accessModes": []any{"ReadWriteOnce"}, "resources": jsonObj{"requests": jsonObj{"storage": "1Gi"}},
			}})
		},
		// A pending claim's spec is immutable: the update changes metadata only.
		deleteReturnsObject: true,
	},
	{
		resource: "resourcequotas", apiVersion: "v1", kind: "ResourceQuota", namespaced: true, qualified: "resourcequotas",
		body: func(name string) jsonObj {
			return labelled("v1", "ResourceQuota", name, jsonObj{"spec": jsonObj{"hard": jsonObj{"pods": "10"}}})
		},
		update: func(o jsonObj) { jsonField(o, "spec", "hard").(jsonObj)["pods"] = "20" },
		updated: func(o jsonObj) error {
			return expectEqual("spec.hard.pods", jsonField(o, "spec", "hard", "pods"), "20")
		},
		smp: jsonObj{"spec": jsonObj{"hard": jsonObj{"configmaps": "5"}}},
		smpApplied: func(o jsonObj) error {
			if err := expectEqual("spec.hard.configmaps", jsonField(o, "spec", "hard", "configmaps"), "5"); err != nil {
				return err
			}
			return expectEqual("spec.hard.pods", jsonField(o, "spec", "hard", "pods"), "20")
		},
		deleteReturnsObject: true,
	},
	{
		resource: "storageclasses", apiVersion: "storage.k8s.io/v1", kind: "StorageClass", qualified: "storageclasses.storage.k8s.io",
		body: func(name string) jsonObj {
			return labelled("storage.k8s.io/v1", "StorageClass", name, jsonObj{"provisioner": "example.com/fake"})
		},
		update:  func(o jsonObj) { o["allowVolumeExpansion"] = true },
		updated: func(o jsonObj) error { return expectEqual("allowVolumeExpansion", o["allowVolumeExpansion"], true) },
		smp:     jsonObj{"mountOptions": []any{"debug"}},
		smpApplied: func(o jsonObj) error {
			return expectEqual("mountOptions", o["mountOptions"], []any{"debug"})
		},
		deleteReturnsObject: true,
	},
	{
		resource: "csidrivers", apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", qualified: "csidrivers.storage.k8s.io",
		body: func(name string) jsonObj {
			return labelled("storage.k8s.io/v1", "CSIDriver", name, jsonObj{"spec": jsonObj{"podInfoOnMount": true}})
		},
		update: func(o jsonObj) { o["spec"].(jsonObj)["storageCapacity"] = true },
		updated: func(o jsonObj) error {
			if err := expectEqual("spec.attachRequired (defaulted)", jsonField(o, "spec", "attachRequired"), true); err != nil {
				return err
			}
			return expectEqual("spec.storageCapacity", jsonField(o, "spec", "storageCapacity"), true)
		},
		smp: jsonObj{"spec": jsonObj{"requiresRepublish": true}},
		smpApplied: func(o jsonObj) error {
			return expectEqual("spec.requiresRepublish", jsonField(o, "spec", "requiresRepublish"), true)
		},
		deleteReturnsObject: true,
	},
	{
		resource: "csinodes", apiVersion: "storage.k8s.io/v1", kind: "CSINode", qualified: "csinodes.storage.k8s.io",
		body: func(name string) jsonObj {
			return labelled("storage.k8s.io/v1", "CSINode", name, jsonObj{"spec": jsonObj{"drivers": []any{
				jsonObj{"name": "a.csi.example.com", "nodeID": name, "topologyKeys": []any{"topology.kubernetes.io/zone"}}}}})
		},
		update: func(o jsonObj) {
			jsonField(o, "spec", "drivers", "0").(jsonObj)["allocatable"] = jsonObj{"count": 10}
		},
		updated: func(o jsonObj) error {
			return expectEqual("allocatable.count", jsonField(o, "spec", "drivers", "0", "allocatable", "count"), float64(10))
		},
		// drivers merge by name: b is added, a kept.
		smp: jsonObj{"spec": jsonObj{"drivers": []any{jsonObj{"name": "b.csi.example.com", "nodeID": "n"}}}},
		smpApplied: func(o jsonObj) error {
			ds, _ := jsonField(o, "spec", "drivers").([]any)
			return expectEqual("drivers", len(ds), 2)
		},
		deleteReturnsObject: true,
	},
	{
		resource: "csistoragecapacities", apiVersion: "storage.k8s.io/v1", kind: "CSIStorageCapacity", namespaced: true,
		qualified: "csistoragecapacities.storage.k8s.io",
		body: func(name string) jsonObj {
			return labelled("storage.k8s.io/v1", "CSIStorageCapacity", name, jsonObj{"storageClassName": "fast", "capacity": "10Gi",
				"nodeTopology": jsonObj{"matchLabels": jsonObj{"topology.kubernetes.io/zone": "a"}}})
		},
		update:     func(o jsonObj) { o["capacity"] = "5Gi" },
		updated:    func(o jsonObj) error { return expectEqual("capacity", o["capacity"], "5Gi") },
		smp:        jsonObj{"maximumVolumeSize": "1Gi"},
		smpApplied: func(o jsonObj) error { return expectEqual("maximumVolumeSize", o["maximumVolumeSize"], "1Gi") },
	},
	{
		resource: "volumeattachments", apiVersion: "storage.k8s.io/v1", kind: "VolumeAttachment", qualified: "volumeattachments.storage.k8s.io",
		body: func(name string) jsonObj {
			return labelled("storage.k8s.io/v1", "VolumeAttachment", name, jsonObj{
				"spec":   jsonObj{"attacher": "csi.example.com", "nodeName": "node-1", "source": jsonObj{"persistentVolumeName": "pv-" + name}},
				"status": jsonObj{"attached": true}, // reset on create: status is the attacher's
			})
		},
		updated: func(o jsonObj) error {
			return expectEqual("status.attached", jsonField(o, "status", "attached"), false)
		},
		deleteReturnsObject: true,
	},
	{
		resource: "volumeattributesclasses", apiVersion: "storage.k8s.io/v1", kind: "VolumeAttributesClass",
		qualified: "volumeattributesclasses.storage.k8s.io",
		body: func(name string) jsonObj {
			return labelled("storage.k8s.io/v1", "VolumeAttributesClass", name, jsonObj{"driverName": "csi.example.com",
				"parameters": jsonObj{"iops": "1000"}})
		},
		deleteReturnsObject: true,
	},
	{
		resource: "runtimeclasses", apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", qualified: "runtimeclasses.node.k8s.io",
		body: func(name string) jsonObj {
			return labelled("node.k8s.io/v1", "RuntimeClass", name, jsonObj{"handler": "runsc",
				"scheduling": jsonObj{"nodeSelector": jsonObj{"runtime": "gvisor"}}})
		},
		update: func(o jsonObj) { o["overhead"] = jsonObj{"podFixed": jsonObj{"cpu": "250m"}} },
		updated: func(o jsonObj) error {
			return expectEqual("overhead.podFixed.cpu", jsonField(o, "overhead", "podFixed", "cpu"), "250m")
		},
		smp: jsonObj{"scheduling": jsonObj{"nodeSelector": jsonObj{"zone": "a"}}},
		smpApplied: func(o jsonObj) error {
			return expectEqual("scheduling.nodeSelector", jsonField(o, "scheduling", "nodeSelector"), jsonObj{"runtime": "gvisor", "zone": "a"})
		},
	},
	{
		resource: "clusterrolebindings", apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding",
		qualified: "clusterrolebindings.rbac.authorization.k8s.io",
		body: func(name string) jsonObj {
			return labelled("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", name, jsonObj{
				"roleRef":  jsonObj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
				"subjects": []any{jsonObj{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}},
			})
		},
		update: func(o jsonObj) {
			o["subjects"] = append(o["subjects"].([]any), jsonObj{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"})
		},
		updated: func(o jsonObj) error {
			return expectEqual("subjects[1].name", jsonField(o, "subjects", "1", "name"), "devs")
		},
		// subjects has no merge key: a strategic merge patch replaces it.
		smp: jsonObj{"subjects": []any{jsonObj{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"}}},
		smpApplied: func(o jsonObj) error {
			subjects, _ := o["subjects"].([]any)
			if len(subjects) != 1 {
				return fmt.Errorf("subjects %v, want only bob", subjects)
			}
			return expectEqual("subjects[0].name", jsonField(o, "subjects", "0", "name"), "bob")
		},
		deleteReturnsObject: false,
	},
	{
		resource: "podtemplates", apiVersion: "v1", kind: "PodTemplate", namespaced: true, qualified: "podtemplates",
		body: func(name string) jsonObj {
			return labelled("v1", "PodTemplate", name, jsonObj{"template": jsonObj{
				"metadata": jsonObj{"labels": jsonObj{"app": name}},
				"spec":     jsonObj{"containers": []any{jsonObj{"name": "app", "image": "nginx:1.27"}}},
			}})
		},
		update: func(o jsonObj) { jsonField(o, "template", "spec", "containers", "0").(jsonObj)["image"] = "nginx:1.28" },
		updated: func(o jsonObj) error {
			return expectEqual("containers[0].image", jsonField(o, "template", "spec", "containers", "0", "image"), "nginx:1.28")
		},
		// containers merge by name: the sidecar is added, app kept.
		smp: jsonObj{"template": jsonObj{"spec": jsonObj{"containers": []any{jsonObj{"name": "sidecar", "image": "busybox:1.36"}}}}},
		smpApplied: func(o jsonObj) error {
			cs, _ := jsonField(o, "template", "spec", "containers").([]any)
			var names []any
			for _, c := range cs {
				names = append(names, jsonField(c, "name"))
			}
			return expectEqual("container names", names, []any{"sidecar", "app"})
		},
		deleteReturnsObject: true,
	},
}

// Create, get, list, watch, update, JSON merge patch, strategic merge patch,
// delete and deletecollection over HTTP for resources no other test covers.
func TestCRUDMoreResources(t *testing.T) {
	// The plain verbs: without StorageObjectInUseProtection's finalizers
	// (tested in admission), whose protection controllers this server does
	// not run, a deleted claim or volume goes at once.
	c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) {
		cfg.DisableAdmissionPlugins = append(cfg.DisableAdmissionPlugins, "StorageObjectInUseProtection")
	}})
	for _, k := range crudKinds {
		t.Run(k.resource, func(t *testing.T) {
			c := c.on(t)
			prefix := "/api/v1"
			if k.apiVersion != "v1" {
				prefix = "/apis/" + k.apiVersion
			}
			coll := prefix + "/" + k.resource
			if k.namespaced {
				coll = prefix + "/namespaces/" + c.namespace("crud-"+k.resource) + "/" + k.resource
			}
			name := "crud-" + strings.ToLower(k.kind) + "-a"
			other := "crud-" + strings.ToLower(k.kind) + "-b"
			sel := "labelSelector=" + url.QueryEscape(suiteLabel+"=crud")

			// create
			var created jsonObj
			created = decodeObj(t, c.call(http.MethodPost, coll, k.body(name), http.StatusCreated, nil))
			if created["kind"] != k.kind || created["apiVersion"] != k.apiVersion || jsonField(created, "metadata", "uid") == nil {
				t.Fatalf("created %v/%v uid %v, want %s %s with a uid", created["apiVersion"], created["kind"], jsonField(created, "metadata", "uid"), k.apiVersion, k.kind)
			}
			c.call(http.MethodPost, coll, k.body(other), http.StatusCreated, nil)
			code, _, data := c.do(http.MethodPost, coll, k.body(name), "", "")
			expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonAlreadyExists,
				fmt.Sprintf("%s %q already exists", k.qualified, name))

			// get
			got := decodeObj(t, c.call(http.MethodGet, coll+"/"+name, nil, http.StatusOK, nil))
			if jsonField(got, "metadata", "uid") != jsonField(created, "metadata", "uid") || got["kind"] != k.kind {
				t.Errorf("get: %v", got)
			}

			// list
			list := decodeObj(t, c.call(http.MethodGet, coll+"?"+sel, nil, http.StatusOK, nil))
			if list["kind"] != k.kind+"List" || list["apiVersion"] != k.apiVersion {
				t.Errorf("list is %v %v, want %s %sList", list["apiVersion"], list["kind"], k.apiVersion, k.kind)
			}
			items, _ := list["items"].([]any)
			if len(items) != 2 || jsonField(items[0], "metadata", "name") != name || jsonField(items[1], "metadata", "name") != other {
				t.Fatalf("list items %v, want %s and %s", items, name, other)
			}
			rv, _ := jsonField(list, "metadata", "resourceVersion").(string)
			if rv == "" {
				t.Fatalf("list without resourceVersion: %v", list["metadata"])
			}

			// watch from the list's resourceVersion
			w := c.watch(coll + "?watch=true&resourceVersion=" + rv + "&" + sel)
			if w.code != http.StatusOK {
				t.Fatalf("watch: %d %s", w.code, w.body)
			}

			// update
			stale, _ := jsonField(got, "metadata", "resourceVersion").(string)
			jsonField(got, "metadata", "labels").(jsonObj)["stage"] = "updated"
			if k.update != nil {
				k.update(got)
			}
			updated := decodeObj(t, c.call(http.MethodPut, coll+"/"+name, got, http.StatusOK, nil))
			if jsonField(updated, "metadata", "labels", "stage") != "updated" || jsonField(updated, "metadata", "resourceVersion") == stale {
				t.Errorf("update: labels %v resourceVersion %v (was %s)", jsonField(updated, "metadata", "labels"), jsonField(updated, "metadata", "resourceVersion"), stale)
			}
			if k.updated != nil {
				if err := k.updated(updated); err != nil {
					t.Errorf("update: %v", err)
				}
			}
			ev := w.expectEvent("MODIFIED", name)
			if o := decodeObj(t, ev.Object); jsonField(o, "metadata", "labels", "stage") != "updated" {
				t.Errorf("watch MODIFIED without the update: %s", ev.Object)
			}
			code, _, data = c.do(http.MethodPut, coll+"/"+name, got, "", "")
			expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonConflict,
				fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", k.qualified, name))

			// JSON merge patch
			code, data = c.patch(coll+"/"+name, "application/merge-patch+json", `{"metadata":{"annotations":{"merged":"yes"}}}`)
			if code != http.StatusOK {
				t.Fatalf("merge patch: %d %s", code, data)
			}
			merged := decodeObj(t, data)
			if jsonField(merged, "metadata", "annotations", "merged") != "yes" || jsonField(merged, "metadata", "labels", "stage") != "updated" {
				t.Errorf("merge patch: metadata %v", merged["metadata"])
			}
			w.expectEvent("MODIFIED", name)

			// strategic merge patch: every built-in kind supports it
			patch := jsonObj{"metadata": jsonObj{"labels": jsonObj{"smp": "yes"}}}
			for key, v := range k.smp {
				patch[key] = v
			}
			code, data = c.patch(coll+"/"+name, "application/strategic-merge-patch+json", patch)
			if code != http.StatusOK {
				t.Fatalf("strategic merge patch: %d %s", code, data)
			}
			smp := decodeObj(t, data)
			if jsonField(smp, "metadata", "labels", "smp") != "yes" || jsonField(smp, "metadata", "labels", "stage") != "updated" ||
				jsonField(smp, "metadata", "annotations", "merged") != "yes" {
				t.Errorf("strategic merge patch: metadata %v", smp["metadata"])
			}
			if k.smpApplied != nil {
				if err := k.smpApplied(smp); err != nil {
					t.Errorf("strategic merge patch: %v", err)
				}
			}
			w.expectEvent("MODIFIED", name)

			// delete
			code, _, data = c.do(http.MethodDelete, coll+"/"+name, nil, "", "")
			if code != http.StatusOK {
				t.Fatalf("delete: %d %s", code, data)
			}
			deleted := decodeObj(t, data)
			var problem string
			if k.deleteReturnsObject {
				if deleted["kind"] != k.kind || jsonField(deleted, "metadata", "name") != name {
					problem = fmt.Sprintf("delete answered %v %v, want the deleted %s", deleted["kind"], jsonField(deleted, "details"), k.kind)
				}
			} else {
				wantGroup := ""
				if k.apiVersion != "v1" {
					wantGroup = k.apiVersion[:len(k.apiVersion)-len("/v1")]
				}
				if deleted["kind"] != "Status" || deleted["status"] != "Success" || jsonField(deleted, "details", "name") != name ||
					jsonField(deleted, "details", "kind") != k.resource || fmt.Sprint(jsonField(deleted, "details", "group")) != fmt.Sprint(nilIfEmpty(wantGroup)) ||
					jsonField(deleted, "details", "uid") != jsonField(created, "metadata", "uid") {
					problem = fmt.Sprintf("delete answered %s, want a success Status naming %s %s", data, k.resource, name)
				}
			}
			if problem != "" {
				t.Error(problem)
			}
			code, _, data = c.do(http.MethodGet, coll+"/"+name, nil, "", "")
			expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("%s %q not found", k.qualified, name))
			w.expectEvent("DELETED", name)

			// deletecollection (only this suite's objects: cluster-scoped
			// kinds have others)
			code, _, data = c.do(http.MethodDelete, coll+"?"+sel, nil, "", "")
			if code != http.StatusOK {
				t.Fatalf("deletecollection: %d %s", code, data)
			}
			dl := decodeObj(t, data)
			items, _ = dl["items"].([]any)
			if dl["kind"] != k.kind+"List" || len(items) != 1 || jsonField(items[0], "metadata", "name") != other {
				t.Errorf("deletecollection answered %s, want a %sList of %s", data, k.kind, other)
			}
			w.expectEvent("DELETED", other)
			list = decodeObj(t, c.call(http.MethodGet, coll+"?"+sel, nil, http.StatusOK, nil))
			if items, _ := list["items"].([]any); len(items) != 0 {
				t.Errorf("after deletecollection the list has %v", items)
			}
		})
	}
}

// nilIfEmpty is how an omitted JSON string decodes.
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
