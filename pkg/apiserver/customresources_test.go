package apiserver_test

import (
	"encoding/json"
	"fmt"
	"github.com/skiff-sh/skiff/pkg/testenv"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// crontabCRD is a namespaced CRD with two served versions, status and
// scale subresources, printer columns and a selectable field.
func crontabCRD(group string) map[string]any {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{"type": "object", "x-kubernetes-validations": []any{
				map[string]any{"rule": "!has(self.image) || self.image != 'forbidden'", "message": "image is forbidden"},
			}, "properties": map[string]any{
				"cronSpec": map[string]any{"type": "string"},
				"image":    map[string]any{"type": "string"},
				"replicas": map[string]any{"type": "integer", "maximum": 10, "default": 1},
			}},
			"status": map[string]any{"type": "object", "properties": map[string]any{
				"replicas": map[string]any{"type": "integer"},
				"selector": map[string]any{"type": "string"},
			}},
		},
	}
	version := func(name string, storage bool) map[string]any {
		return map[string]any{
			"name": name, "served": true, "storage": storage,
			"schema": map[string]any{"openAPIV3Schema": schema},
			"subresources": map[string]any{
				"status": map[string]any{},
				"scale":  map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"},
			},
			"additionalPrinterColumns": []any{
				map[string]any{"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
				map[string]any{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
			},
			"selectableFields": []any{map[string]any{"jsonPath": ".spec.image"}},
		}
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "crontabs." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names":    map[string]any{"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": []any{"ct"}, "categories": []any{"all"}},
			"versions": []any{version("v1", true), version("v2", false)},
		},
	}
}

type crdStatus struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Status   struct {
		AcceptedNames map[string]any `json:"acceptedNames"`
		Conditions    []struct {
			Type, Status, Reason, Message string
		} `json:"conditions"`
	} `json:"status"`
}

func (c *client) crdCondition(name, typ string) (status, reason, message string) {
	c.t.Helper()
	code, _, data := c.do(http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil, "", "")
	if code != http.StatusOK {
		return "", "", ""
	}
	var crd crdStatus
	if err := json.Unmarshal(data, &crd); err != nil {
		c.t.Fatal(err)
	}
	for _, cond := range crd.Status.Conditions {
		if cond.Type == typ {
			return cond.Status, cond.Reason, cond.Message
		}
	}
	return "", "", ""
}

// createCRD creates a CRD and waits until its resource is served.
func (c *client) createCRD(crd map[string]any, servedPath string) {
	c.t.Helper()
	c.call(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, http.StatusCreated, nil)
	eventually(c.t, "custom resource served", func() bool {
		code, _, _ := c.do(http.MethodGet, servedPath, nil, "", "")
		return code == http.StatusOK
	})
}

func crontab(name, apiVersion string, spec map[string]any, labels map[string]string) map[string]any {
	md := map[string]any{"name": name}
	if labels != nil {
		md["labels"] = labels
	}
	return map[string]any{"apiVersion": apiVersion, "kind": "CronTab", "metadata": md, "spec": spec}
}

func TestCustomResourceServing(t *testing.T) {
	c := start(t, withGC(testenv.Config{}))
	ns := c.namespace("cr")
	base := "/apis/stable.example.com/v1/namespaces/" + ns + "/crontabs"
	c.createCRD(crontabCRD("stable.example.com"), base)

	if st, reason, _ := c.crdCondition("crontabs.stable.example.com", "Established"); st != "True" || reason != "InitialNamesAccepted" {
		t.Errorf("Established = %s/%s", st, reason)
	}
	if st, reason, msg := c.crdCondition("crontabs.stable.example.com", "NamesAccepted"); st != "True" || reason != "NoConflicts" || msg != "no conflicts found" {
		t.Errorf("NamesAccepted = %s/%s/%s", st, reason, msg)
	}

	t.Run("discovery", func(t *testing.T) {
		c := c.on(t)
		var list metav1.APIResourceList
		c.call(http.MethodGet, "/apis/stable.example.com/v1", nil, http.StatusOK, &list)
		found := map[string]metav1.APIResource{}
		for _, r := range list.APIResources {
			found[r.Name] = r
		}
		r := found["crontabs"]
		if r.Kind != "CronTab" || !r.Namespaced || r.SingularName != "crontab" || strings.Join(r.ShortNames, ",") != "ct" || strings.Join(r.Categories, ",") != "all" {
			t.Errorf("crontabs = %+v", r)
		}
		if _, ok := found["crontabs/status"]; !ok {
			t.Error("no crontabs/status")
		}
		if s := found["crontabs/scale"]; s.Kind != "Scale" || s.Group != "autoscaling" {
			t.Errorf("crontabs/scale = %+v", s)
		}
		var groups metav1.APIGroupList
		c.call(http.MethodGet, "/apis", nil, http.StatusOK, &groups)
		ok := false
		for _, g := range groups.Groups {
			if g.Name == "stable.example.com" {
				ok = len(g.Versions) == 2 && g.PreferredVersion.Version == "v2"
			}
		}
		if !ok {
			t.Errorf("group stable.example.com missing or wrong in /apis")
		}
		_, _, agg := c.do(http.MethodGet, "/apis", nil, "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		if !strings.Contains(string(agg), `"resource":"crontabs"`) {
			t.Errorf("aggregated discovery lacks crontabs")
		}
		code, _, doc := c.do(http.MethodGet, "/openapi/v3/apis/stable.example.com/v1", nil, "", "")
		if code != http.StatusOK || !strings.Contains(string(doc), "com.example.stable.v1.CronTab") {
			t.Errorf("openapi v3: %d %.200s", code, doc)
		}
	})

	t.Run("crud in two versions", func(t *testing.T) {
		c := c.on(t)
		var created map[string]any
		c.call(http.MethodPost, base, crontab("a", "stable.example.com/v1", map[string]any{"cronSpec": "* * * * */5", "image": "img:1", "replicas": 2}, map[string]string{"app": "x"}), http.StatusCreated, &created)
		md := created["metadata"].(map[string]any)
		if md["generation"] != float64(1) || md["uid"] == "" || md["namespace"] != ns {
			t.Errorf("created metadata = %v", md)
		}
		c.call(http.MethodPost, "/apis/stable.example.com/v2/namespaces/"+ns+"/crontabs", crontab("b", "stable.example.com/v2", map[string]any{"image": "img:2"}, nil), http.StatusCreated, nil)

		var got map[string]any
		c.call(http.MethodGet, "/apis/stable.example.com/v2/namespaces/"+ns+"/crontabs/a", nil, http.StatusOK, &got)
		if got["apiVersion"] != "stable.example.com/v2" {
			t.Errorf("v2 read apiVersion = %v", got["apiVersion"])
		}
		c.call(http.MethodGet, base+"/b", nil, http.StatusOK, &got)
		if got["apiVersion"] != "stable.example.com/v1" {
			t.Errorf("v1 read of v2 object apiVersion = %v", got["apiVersion"])
		}

		var list struct {
			Kind       string           `json:"kind"`
			APIVersion string           `json:"apiVersion"`
			Items      []map[string]any `json:"items"`
		}
		c.call(http.MethodGet, base+"?labelSelector=app%3Dx", nil, http.StatusOK, &list)
		if list.Kind != "CronTabList" || len(list.Items) != 1 || list.Items[0]["metadata"].(map[string]any)["name"] != "a" {
			t.Errorf("label selector list = %+v", list)
		}
		c.call(http.MethodGet, "/apis/stable.example.com/v2/crontabs?fieldSelector=spec.image%3Dimg:2", nil, http.StatusOK, &list)
		if len(list.Items) != 1 || list.Items[0]["apiVersion"] != "stable.example.com/v2" {
			t.Errorf("field selector list = %+v", list)
		}
		code, _, data := c.do(http.MethodGet, base+"?fieldSelector=spec.cronSpec%3Dx", nil, "", "")
		expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "field label not supported: spec.cronSpec")

		// PUT without resourceVersion is refused, as upstream.
		got["metadata"].(map[string]any)["resourceVersion"] = ""
		code, _, data = c.do(http.MethodPut, base+"/b", got, "", "")
		if code != http.StatusUnprocessableEntity {
			t.Errorf("unconditional PUT: %d %s", code, data)
		}

		code, data = c.patch(base+"/a", "application/merge-patch+json", map[string]any{"spec": map[string]any{"image": "img:3"}, "status": map[string]any{"replicas": 5}})
		if code != http.StatusOK {
			t.Fatalf("patch: %d %s", code, data)
		}
		json.Unmarshal(data, &got)
		if got["metadata"].(map[string]any)["generation"] != float64(2) || got["status"] != nil {
			t.Errorf("after spec patch: generation %v status %v", got["metadata"].(map[string]any)["generation"], got["status"])
		}
		code, data = c.patch(base+"/a/status", "application/merge-patch+json", map[string]any{"spec": map[string]any{"image": "ignored"}, "status": map[string]any{"replicas": 5, "selector": "app=x"}})
		if code != http.StatusOK {
			t.Fatalf("status patch: %d %s", code, data)
		}
		json.Unmarshal(data, &got)
		if got["metadata"].(map[string]any)["generation"] != float64(2) || got["spec"].(map[string]any)["image"] != "img:3" || got["status"].(map[string]any)["replicas"] != float64(5) {
			t.Errorf("after status patch: %v", got)
		}

		var scale map[string]any
		c.call(http.MethodGet, base+"/a/scale", nil, http.StatusOK, &scale)
		if scale["spec"].(map[string]any)["replicas"] != float64(2) || scale["status"].(map[string]any)["replicas"] != float64(5) || scale["status"].(map[string]any)["selector"] != "app=x" {
			t.Errorf("scale = %v", scale)
		}
		code, data = c.patch(base+"/a/scale", "application/merge-patch+json", map[string]any{"spec": map[string]any{"replicas": 7}})
		if code != http.StatusOK {
			t.Fatalf("scale patch: %d %s", code, data)
		}
		c.call(http.MethodGet, base+"/a", nil, http.StatusOK, &got)
		if got["spec"].(map[string]any)["replicas"] != float64(7) {
			t.Errorf("after scale: %v", got["spec"])
		}

		code, _, data = c.do(http.MethodGet, base, nil, "", "application/json;as=Table;v=v1;g=meta.k8s.io")
		var table metav1.Table
		if code != http.StatusOK || json.Unmarshal(data, &table) != nil {
			t.Fatalf("table: %d %s", code, data)
		}
		var cols []string
		for _, col := range table.ColumnDefinitions {
			cols = append(cols, col.Name)
		}
		if strings.Join(cols, ",") != "Name,Spec,Replicas" || len(table.Rows) != 2 || fmt.Sprint(table.Rows[0].Cells) != "[a * * * * */5 7]" {
			t.Errorf("table columns %v rows %v", cols, table.Rows)
		}
	})

	t.Run("schema", func(t *testing.T) {
		c := c.on(t)
		code, _, data := c.do(http.MethodPost, base, crontab("bad", "stable.example.com/v1", map[string]any{"cronSpec": 5}, nil), "", "")
		st := expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`CronTab.stable.example.com "bad" is invalid: [spec.cronSpec: Invalid value: "integer": spec.cronSpec in body must be of type string: "integer", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)
		if st.Details == nil || len(st.Details.Causes) != 2 || st.Details.Causes[0].Field != "spec.cronSpec" || st.Details.Causes[0].Type != metav1.CauseTypeTypeInvalid {
			t.Errorf("causes = %+v", st.Details)
		}
		code, _, data = c.do(http.MethodPost, base, crontab("bad", "stable.example.com/v1", map[string]any{"image": "forbidden"}, nil), "", "")
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`CronTab.stable.example.com "bad" is invalid: spec: Invalid value: image is forbidden`)
		// The scale subresource's replicas path is checked too, as upstream.
		code, _, data = c.do(http.MethodPost, base, crontab("bad", "stable.example.com/v1", map[string]any{"replicas": "three"}, nil), "", "")
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`CronTab.stable.example.com "bad" is invalid: [spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", .spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)
		code, _, data = c.do(http.MethodPost, base+"?fieldValidation=Strict", crontab("bad", "stable.example.com/v1", map[string]any{"nope": 1}, nil), "", "")
		expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest,
			`CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.nope"`)
		code, hdr, data := c.do(http.MethodPost, base, crontab("pruned", "stable.example.com/v1", map[string]any{"nope": 1}, nil), "", "")
		if code != http.StatusCreated || !strings.Contains(hdr.Get("Warning"), `unknown field \"spec.nope\"`) {
			t.Errorf("warn: %d %q %s", code, hdr.Get("Warning"), data)
		}
		var got map[string]any
		json.Unmarshal(data, &got)
		if spec := got["spec"].(map[string]any); spec["nope"] != nil || spec["replicas"] != float64(1) {
			t.Errorf("pruned/defaulted spec = %v", spec)
		}
		code, _, data = c.do(http.MethodPatch, base+"/pruned", map[string]any{"spec": map[string]any{"replicas": 1}}, "application/strategic-merge-patch+json", "")
		if code != http.StatusUnsupportedMediaType {
			t.Errorf("strategic merge patch: %d %s", code, data)
		}
		c.call(http.MethodDelete, base+"/pruned", nil, http.StatusOK, nil)

		// Unknown metadata fields are dropped with a warning too.
		cr := crontab("meta", "stable.example.com/v1", map[string]any{}, nil)
		cr["metadata"].(map[string]any)["unknownMeta"] = "x"
		code, hdr, _ = c.do(http.MethodPost, base, cr, "", "")
		if code != http.StatusCreated || !strings.Contains(hdr.Get("Warning"), `unknown field \"metadata.unknownMeta\"`) {
			t.Errorf("unknown metadata: %d %q", code, hdr.Values("Warning"))
		}
		c.call(http.MethodDelete, base+"/meta", nil, http.StatusOK, nil)
	})

	t.Run("media types", func(t *testing.T) {
		c := c.on(t)
		// Protobuf is not offered for custom resources: a client that
		// prefers it gets JSON, one that only takes it a 406.
		code, hdr, _ := c.do(http.MethodGet, base+"/a", nil, "", "application/vnd.kubernetes.protobuf, application/json")
		if code != http.StatusOK || hdr.Get("Content-Type") != "application/json" {
			t.Errorf("protobuf then JSON: %d %s", code, hdr.Get("Content-Type"))
		}
		code, _, data := c.do(http.MethodGet, base, nil, "", "application/vnd.kubernetes.protobuf")
		if code != http.StatusNotAcceptable || !strings.Contains(string(data), "only the following media types are accepted: application/json, application/yaml") {
			t.Errorf("protobuf only: %d %q", code, data)
		}
		code, _, data = c.do(http.MethodPost, base, "x", "application/vnd.kubernetes.protobuf", "")
		expectStatus(t, code, data, http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "")
		// Metadata-only lists work in protobuf (the garbage collector's).
		code, hdr, _ = c.do(http.MethodGet, base, nil, "", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
		if code != http.StatusOK || hdr.Get("Content-Type") != "application/vnd.kubernetes.protobuf" {
			t.Errorf("PartialObjectMetadataList: %d %s", code, hdr.Get("Content-Type"))
		}
	})

	t.Run("managed fields and server-side apply", func(t *testing.T) {
		c := c.on(t)
		var got map[string]any
		c.call(http.MethodGet, base+"/a", nil, http.StatusOK, &got)
		if mf, _ := got["metadata"].(map[string]any)["managedFields"].([]any); len(mf) == 0 {
			t.Errorf("no managedFields after create: %v", got["metadata"])
		}
		apply := "apiVersion: stable.example.com/v2\nkind: CronTab\nmetadata:\n  name: applied\nspec:\n  image: img:9\n"
		code, _, data := c.do(http.MethodPatch, "/apis/stable.example.com/v2/namespaces/"+ns+"/crontabs/applied?fieldManager=me", apply, "application/apply-patch+yaml", "")
		if code != http.StatusCreated {
			t.Fatalf("apply: %d %s", code, data)
		}
		if !strings.Contains(string(data), `"manager":"me"`) || !strings.Contains(string(data), `"operation":"Apply"`) {
			t.Errorf("apply managedFields: %s", data)
		}
		apply2 := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: applied\nspec:\n  image: img:10\n"
		code, _, data = c.do(http.MethodPatch, base+"/applied?fieldManager=other", apply2, "application/apply-patch+yaml", "")
		if code != http.StatusConflict || !strings.Contains(string(data), ".spec.image") {
			t.Errorf("conflicting apply: %d %s", code, data)
		}
		c.call(http.MethodDelete, base+"/applied", nil, http.StatusOK, nil)
	})

	t.Run("watch", func(t *testing.T) {
		c := c.on(t)
		w := c.watch("/apis/stable.example.com/v2/namespaces/" + ns + "/crontabs?watch=true&resourceVersion=0")
		ev := w.mustNext()
		if ev.Type != "ADDED" || !strings.Contains(string(ev.Object), `"apiVersion":"stable.example.com/v2"`) {
			t.Errorf("first event %s %s", ev.Type, ev.Object)
		}
		c.call(http.MethodDelete, base+"/b", nil, http.StatusOK, nil)
		w.until(func(ev watchEvent) bool { return ev.Type == "DELETED" })
	})

	t.Run("name conflicts", func(t *testing.T) {
		c := c.on(t)
		other := crontabCRD("stable.example.com")
		other["metadata"].(map[string]any)["name"] = "crontabz.stable.example.com"
		spec := other["spec"].(map[string]any)
		spec["names"] = map[string]any{"plural": "crontabz", "kind": "CronTabZ", "shortNames": []any{"ct"}}
		c.call(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", other, http.StatusCreated, nil)
		eventually(t, "NamesAccepted False", func() bool {
			st, reason, msg := c.crdCondition("crontabz.stable.example.com", "NamesAccepted")
			return st == "False" && reason == "ShortNamesConflict" && msg == `"ct" is already in use`
		})
		if st, reason, _ := c.crdCondition("crontabz.stable.example.com", "Established"); st != "False" || reason != "NotAccepted" {
			t.Errorf("Established = %s/%s", st, reason)
		}
		c.call(http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabz.stable.example.com", nil, http.StatusOK, nil)
	})

	t.Run("namespace deletion deletes custom resources", func(t *testing.T) {
		c := c.on(t)
		gone := c.namespace("cr-gone")
		c.call(http.MethodPost, "/apis/stable.example.com/v1/namespaces/"+gone+"/crontabs", crontab("x", "stable.example.com/v1", map[string]any{"image": "i"}, nil), http.StatusCreated, nil)
		c.call(http.MethodDelete, "/api/v1/namespaces/"+gone, nil, http.StatusOK, nil)
		eventually(t, "namespace gone", func() bool {
			code, _, _ := c.do(http.MethodGet, "/api/v1/namespaces/"+gone, nil, "", "")
			return code == http.StatusNotFound
		})
		var list struct{ Items []any }
		c.call(http.MethodGet, "/apis/stable.example.com/v1/namespaces/"+gone+"/crontabs", nil, http.StatusOK, &list)
		if len(list.Items) != 0 {
			t.Errorf("custom resources survived their namespace: %v", list.Items)
		}
	})

	t.Run("delete CRD deletes objects", func(t *testing.T) {
		c := c.on(t)
		c.call(http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com", nil, http.StatusOK, nil)
		eventually(t, "CRD gone", func() bool {
			code, _, _ := c.do(http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com", nil, "", "")
			return code == http.StatusNotFound
		})
		eventually(t, "discovery gone", func() bool {
			code, _, _ := c.do(http.MethodGet, "/apis/stable.example.com/v1", nil, "", "")
			return code == http.StatusNotFound
		})
		// Re-created, the resource is empty: the objects were deleted.
		c.createCRD(crontabCRD("stable.example.com"), base)
		var list struct{ Items []any }
		c.call(http.MethodGet, base, nil, http.StatusOK, &list)
		if len(list.Items) != 0 {
			t.Errorf("objects survived their CRD: %v", list.Items)
		}
	})
}

// A default added to the schema later applies to objects read from
// storage (upstream's "custom resource defaulting for requests and from
// storage works").
func TestCustomResourceDefaultingFromStorage(t *testing.T) {
	c := start(t)
	ns := c.namespace("crdef")
	base := "/apis/defaults.example.com/v1/namespaces/" + ns + "/crontabs"
	c.createCRD(crontabCRD("defaults.example.com"), base)
	c.call(http.MethodPost, base, crontab("a", "defaults.example.com/v1", map[string]any{"cronSpec": "x"}, nil), http.StatusCreated, nil)
	code, data := c.patch("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.defaults.example.com", "application/json-patch+json",
		[]map[string]any{{"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/image/default", "value": "def"}})
	if code != http.StatusOK {
		t.Fatalf("patch CRD: %d %s", code, data)
	}
	eventually(t, "default applied on read", func() bool {
		var got map[string]any
		c.call(http.MethodGet, base+"/a", nil, http.StatusOK, &got)
		return got["spec"].(map[string]any)["image"] == "def"
	})
	var list struct{ Items []map[string]any }
	c.call(http.MethodGet, base, nil, http.StatusOK, &list)
	if len(list.Items) != 1 || list.Items[0]["spec"].(map[string]any)["image"] != "def" {
		t.Errorf("list = %v", list.Items)
	}
}

// A cluster-scoped custom resource: no namespace in its path or object,
// storage under /registry/<group>/<plural>/<name>.
func TestClusterScopedCustomResource(t *testing.T) {
	c := start(t)
	crd := crontabCRD("cluster.example.com")
	crd["spec"].(map[string]any)["scope"] = "Cluster"
	base := "/apis/cluster.example.com/v1/crontabs"
	c.createCRD(crd, base)
	var created map[string]any
	c.call(http.MethodPost, base, crontab("c1", "cluster.example.com/v1", map[string]any{"image": "i"}, nil), http.StatusCreated, &created)
	if ns, ok := created["metadata"].(map[string]any)["namespace"]; ok {
		t.Errorf("cluster-scoped object has namespace %v", ns)
	}
	c.call(http.MethodGet, base+"/c1", nil, http.StatusOK, nil)
	code, _, _ := c.do(http.MethodGet, "/apis/cluster.example.com/v1/namespaces/default/crontabs/c1", nil, "", "")
	if code != http.StatusNotFound {
		t.Errorf("namespaced path: %d", code)
	}
	var list metav1.APIResourceList
	c.call(http.MethodGet, "/apis/cluster.example.com/v1", nil, http.StatusOK, &list)
	for _, r := range list.APIResources {
		if r.Name == "crontabs" && r.Namespaced {
			t.Errorf("discovery says namespaced")
		}
	}
	var fs struct{ Items []any }
	c.call(http.MethodGet, base+"?fieldSelector=metadata.name%3Dc1", nil, http.StatusOK, &fs)
	if len(fs.Items) != 1 {
		t.Errorf("metadata.name selector: %d items", len(fs.Items))
	}
	// Upstream's CR field label conversion knows metadata.namespace only
	// for namespaced resources.
	code, _, data := c.do(http.MethodGet, base+"?fieldSelector=metadata.namespace%3Dx", nil, "", "")
	expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest, "field label not supported: metadata.namespace")
}

// A client that saw Established (kubectl wait --for=condition=Established)
// finds the resource served: the CRD controller serves it before it
// writes the condition (it used to write first, leaving a moment of 404s).
func TestCustomResourceServedOnceEstablished(t *testing.T) {
	c := start(t, testenv.Config{})
	for i := range 5 {
		group := fmt.Sprintf("g%d.example.com", i)
		c.call(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crontabCRD(group), http.StatusCreated, nil)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if st, _, _ := c.crdCondition("crontabs."+group, "Established"); st == "True" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("crontabs.%s not Established", group)
			}
		}
		if code, _, body := c.do(http.MethodGet, "/apis/"+group+"/v1/crontabs", nil, "", ""); code != http.StatusOK {
			t.Fatalf("crontabs.%s Established but listing it answers %d: %s", group, code, body)
		}
	}
}
