package apiserver_test

import (
	"encoding/json"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// deployment is an apps/v1 Deployment body with containers a and b.
func deployment(name string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app": name}},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "a", "image": "nginx:1.27"},
					map[string]any{"name": "b", "image": "busybox:1.36"},
				}},
			},
		},
	}
}

var uidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// The server sets name (from generateName), uid, creationTimestamp and
// resourceVersion; what the client sends for them is ignored.
func TestSemanticsCreateSystemFields(t *testing.T) {
	c := start(t)
	ns := c.namespace("create")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	before := time.Now().Add(-2 * time.Second)
	body := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
		"generateName": "gen-", "uid": "client-chosen", "resourceVersion": "",
		"creationTimestamp": "2001-01-01T00:00:00Z",
	}}
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		var cm corev1.ConfigMap
		c.call(http.MethodPost, base, body, http.StatusCreated, &cm)
		if !strings.HasPrefix(cm.Name, "gen-") || len(cm.Name) != len("gen-")+5 {
			t.Errorf("generated name %q, want gen- and 5 characters", cm.Name)
		}
		if !regexp.MustCompile(`^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$`).MatchString(cm.Name) {
			t.Errorf("generated suffix of %q uses characters outside upstream's alphabet", cm.Name)
		}
		if seen[cm.Name] {
			t.Errorf("name %q generated twice", cm.Name)
		}
		seen[cm.Name] = true
		if cm.GenerateName != "gen-" {
			t.Errorf("generateName = %q, want kept", cm.GenerateName)
		}
		if !uidPattern.MatchString(string(cm.UID)) {
			t.Errorf("uid %q is not a server-generated UUID", cm.UID)
		}
		if cm.CreationTimestamp.Time.Before(before) || cm.CreationTimestamp.Time.After(time.Now().Add(2*time.Second)) {
			t.Errorf("creationTimestamp %v is not now", cm.CreationTimestamp)
		}
		rvInt(t, cm.ResourceVersion)
		if cm.Generation != 0 {
			t.Errorf("configmap generation %d, want 0 (unset)", cm.Generation)
		}
	}
	// Create of an existing name is 409 AlreadyExists.
	c.call(http.MethodPost, base, configMap("dup", nil, nil), http.StatusCreated, nil)
	code, _, data := c.do(http.MethodPost, base, configMap("dup", nil, nil), "", "")
	expectStatus(t, code, data, http.StatusConflict, metav1.StatusReasonAlreadyExists, `configmaps "dup" already exists`)
	// Neither name nor generateName: 422 Invalid on metadata.name.
	code, _, data = c.do(http.MethodPost, base, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{}}, "", "")
	st := expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != "metadata.name" {
		t.Errorf("details %+v, want a metadata.name cause", st.Details)
	}
	// The namespace in the body must match the URL's.
	mismatch := configMap("m", nil, nil)
	mismatch["metadata"].(map[string]any)["namespace"] = "default"
	code, _, data = c.do(http.MethodPost, base, mismatch, "", "")
	expectStatus(t, code, data, http.StatusBadRequest, metav1.StatusReasonBadRequest,
		"the namespace of the provided object does not match the namespace sent on the request")
}

// metadata.generation is 1 on create and moves only when the spec changes;
// the status subresource ignores spec changes and the main resource ignores
// status changes.
func TestSemanticsGenerationAndStatusSubresource(t *testing.T) {
	c := start(t)
	ns := c.namespace("generation")
	base := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	body := deployment("d")
	body["status"] = map[string]any{"replicas": 5} // dropped on create
	var d appsv1.Deployment
	c.call(http.MethodPost, base, body, http.StatusCreated, &d)
	if d.Generation != 1 {
		t.Fatalf("generation on create = %d, want 1", d.Generation)
	}
	if d.Status.Replicas != 0 {
		t.Errorf("status on create kept %d replicas, want reset", d.Status.Replicas)
	}

	steps := []struct {
		name           string
		path           string // "" main resource, "/status"
		mutate         func(*appsv1.Deployment)
		wantGeneration int64
		check          func(t *testing.T, d *appsv1.Deployment)
	}{
		{"label change", "", func(d *appsv1.Deployment) { d.Labels["extra"] = "1" }, 1,
			func(t *testing.T, d *appsv1.Deployment) {
				if d.Labels["extra"] != "1" {
					t.Errorf("label not stored")
				}
			}},
		{"annotation change", "", func(d *appsv1.Deployment) { d.Annotations = map[string]string{"a": "b"} }, 1, nil},
		{"status via /status", "/status", func(d *appsv1.Deployment) { d.Status.Replicas = 3; d.Status.ObservedGeneration = 1 }, 1,
			func(t *testing.T, d *appsv1.Deployment) {
				if d.Status.Replicas != 3 {
					t.Errorf("status.replicas = %d, want 3", d.Status.Replicas)
				}
			}},
		{"spec change", "", func(d *appsv1.Deployment) { r := int32(2); d.Spec.Replicas = &r }, 2,
			func(t *testing.T, d *appsv1.Deployment) {
				if *d.Spec.Replicas != 2 {
					t.Errorf("spec.replicas = %d, want 2", *d.Spec.Replicas)
				}
			}},
		{"template change", "", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" }, 3, nil},
		{"status via main resource is ignored", "", func(d *appsv1.Deployment) { d.Status.Replicas = 9 }, 3,
			func(t *testing.T, d *appsv1.Deployment) {
				if d.Status.Replicas != 3 {
					t.Errorf("main resource changed status.replicas to %d", d.Status.Replicas)
				}
			}},
		{"spec via /status is ignored", "/status", func(d *appsv1.Deployment) { r := int32(7); d.Spec.Replicas = &r; d.Status.Replicas = 4 }, 3,
			func(t *testing.T, d *appsv1.Deployment) {
				if *d.Spec.Replicas != 2 {
					t.Errorf("/status changed spec.replicas to %d", *d.Spec.Replicas)
				}
				if d.Status.Replicas != 4 {
					t.Errorf("/status did not store status.replicas (%d)", d.Status.Replicas)
				}
			}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			c := c.on(t)
			var cur appsv1.Deployment
			c.call(http.MethodGet, base+"/d", nil, http.StatusOK, &cur)
			s.mutate(&cur)
			var out appsv1.Deployment
			c.call(http.MethodPut, base+"/d"+s.path, cur, http.StatusOK, &out)
			var got appsv1.Deployment
			c.call(http.MethodGet, base+"/d", nil, http.StatusOK, &got)
			if got.ResourceVersion != out.ResourceVersion {
				t.Errorf("GET rv %s differs from the update's %s", got.ResourceVersion, out.ResourceVersion)
			}
			if got.Generation != s.wantGeneration {
				t.Errorf("generation = %d, want %d", got.Generation, s.wantGeneration)
			}
			if s.check != nil {
				s.check(t, &got)
			}
		})
	}
}

// Defaulting as upstream: pods and services.
func TestSemanticsDefaulting(t *testing.T) {
	c := start(t)
	ns := c.namespace("defaults")
	body := pod("p", "nginx")
	body["spec"].(map[string]any)["containers"] = []any{
		map[string]any{"name": "untagged", "image": "nginx"},
		map[string]any{"name": "latest", "image": "nginx:latest"},
		map[string]any{"name": "tagged", "image": "nginx:1.27"},
		map[string]any{"name": "digest", "image": "busybox@sha256:" + strings.Repeat("a", 64)},
		map[string]any{"name": "explicit", "image": "nginx", "imagePullPolicy": "Never"},
	}
	var p corev1.Pod
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", body, http.StatusCreated, &p)
	t.Run("pod", func(t *testing.T) {
		if p.Spec.RestartPolicy != corev1.RestartPolicyAlways {
			t.Errorf("restartPolicy = %q, want Always", p.Spec.RestartPolicy)
		}
		if p.Spec.DNSPolicy != corev1.DNSClusterFirst {
			t.Errorf("dnsPolicy = %q, want ClusterFirst", p.Spec.DNSPolicy)
		}
		if p.Spec.TerminationGracePeriodSeconds == nil || *p.Spec.TerminationGracePeriodSeconds != 30 {
			t.Errorf("terminationGracePeriodSeconds = %v, want 30", p.Spec.TerminationGracePeriodSeconds)
		}
		if p.Spec.SchedulerName != "default-scheduler" {
			t.Errorf("schedulerName = %q", p.Spec.SchedulerName)
		}
		if p.Spec.ServiceAccountName != "default" {
			t.Errorf("serviceAccountName = %q", p.Spec.ServiceAccountName)
		}
		if p.Spec.SecurityContext == nil {
			t.Errorf("securityContext not defaulted to {}")
		}
		if p.Spec.EnableServiceLinks == nil || !*p.Spec.EnableServiceLinks {
			t.Errorf("enableServiceLinks = %v, want true", p.Spec.EnableServiceLinks)
		}
		if p.Status.Phase != corev1.PodPending || p.Status.QOSClass != corev1.PodQOSBestEffort {
			t.Errorf("status phase %q qosClass %q, want Pending BestEffort", p.Status.Phase, p.Status.QOSClass)
		}
		want := map[string]corev1.PullPolicy{
			"untagged": corev1.PullAlways, "latest": corev1.PullAlways, "tagged": corev1.PullIfNotPresent,
			"digest": corev1.PullIfNotPresent, "explicit": corev1.PullNever,
		}
		for _, ctr := range p.Spec.Containers {
			if ctr.ImagePullPolicy != want[ctr.Name] {
				t.Errorf("container %s (%s): imagePullPolicy %q, want %q", ctr.Name, ctr.Image, ctr.ImagePullPolicy, want[ctr.Name])
			}
			if ctr.TerminationMessagePath != "/dev/termination-log" || ctr.TerminationMessagePolicy != corev1.TerminationMessageReadFile {
				t.Errorf("container %s: termination message %q %q", ctr.Name, ctr.TerminationMessagePath, ctr.TerminationMessagePolicy)
			}
		}
	})

	t.Run("service", func(t *testing.T) {
		c := c.on(t)
		var svc corev1.Service
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", map[string]any{
			"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web"},
			"spec": map[string]any{"selector": map[string]any{"app": "web"}, "ports": []any{map[string]any{"port": 80}}},
		}, http.StatusCreated, &svc)
		_, cidr, _ := net.ParseCIDR("10.96.0.0/12")
		if ip := net.ParseIP(svc.Spec.ClusterIP); ip == nil || !cidr.Contains(ip) {
			t.Errorf("clusterIP %q not in 10.96.0.0/12", svc.Spec.ClusterIP)
		}
		if len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != svc.Spec.ClusterIP {
			t.Errorf("clusterIPs = %v, want [clusterIP]", svc.Spec.ClusterIPs)
		}
		if svc.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("type = %q", svc.Spec.Type)
		}
		if svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
			t.Errorf("sessionAffinity = %q, want None", svc.Spec.SessionAffinity)
		}
		if len(svc.Spec.Ports) != 1 {
			t.Fatalf("ports = %+v", svc.Spec.Ports)
		}
		port := svc.Spec.Ports[0]
		if port.Protocol != corev1.ProtocolTCP {
			t.Errorf("protocol = %q, want TCP", port.Protocol)
		}
		if port.TargetPort != intstr.FromInt32(80) {
			t.Errorf("targetPort = %v, want 80", port.TargetPort)
		}
		if len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilies[0] != corev1.IPv4Protocol {
			t.Errorf("ipFamilies = %v", svc.Spec.IPFamilies)
		}
		if svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
			t.Errorf("ipFamilyPolicy = %v", svc.Spec.IPFamilyPolicy)
		}
		if svc.Spec.InternalTrafficPolicy == nil || *svc.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster {
			t.Errorf("internalTrafficPolicy = %v", svc.Spec.InternalTrafficPolicy)
		}
	})
}

// Validation failures are 422 Invalid with the kind and name in details and
// one cause per field.
func TestSemanticsValidation(t *testing.T) {
	c := start(t)
	ns := c.namespace("validation")
	c.call(http.MethodPost, "/apis/apps/v1/namespaces/"+ns+"/deployments", deployment("d"), http.StatusCreated, nil)
	imm := configMap("frozen", nil, map[string]string{"k": "v"})
	imm["immutable"] = true
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", imm, http.StatusCreated, nil)

	var dep appsv1.Deployment
	c.call(http.MethodGet, "/apis/apps/v1/namespaces/"+ns+"/deployments/d", nil, http.StatusOK, &dep)
	dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d", "extra": "x"}}
	dep.Spec.Template.Labels = map[string]string{"app": "d", "extra": "x"}
	var frozen corev1.ConfigMap
	c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/frozen", nil, http.StatusOK, &frozen)
	frozen.Data["k"] = "changed"

	noImage := pod("p", "")
	noImage["spec"].(map[string]any)["containers"] = []any{map[string]any{"name": "app"}}

	tests := []struct {
		name, method, path string
		body               any
		wantGroup          string
		wantKind           string
		wantName           string
		wantField          string
		wantType           metav1.CauseType
		wantMsgPrefix      string
		wantMsgSuffix      string
	}{
		{
			name: "bad name", method: http.MethodPost, path: "/api/v1/namespaces/" + ns + "/configmaps",
			body: configMap("Bad_Name", nil, nil), wantKind: "ConfigMap", wantName: "Bad_Name",
			wantField: "metadata.name", wantType: metav1.CauseTypeFieldValueInvalid,
			wantMsgPrefix: `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of`,
		},
		{
			name: "missing container image", method: http.MethodPost, path: "/api/v1/namespaces/" + ns + "/pods",
			body: noImage, wantKind: "Pod", wantName: "p",
			wantField: "spec.containers[0].image", wantType: metav1.CauseTypeFieldValueRequired,
			wantMsgPrefix: `Pod "p" is invalid: spec.containers[0].image: Required value`,
		},
		{
			name: "immutable deployment selector", method: http.MethodPut, path: "/apis/apps/v1/namespaces/" + ns + "/deployments/d",
			body: dep, wantGroup: "apps", wantKind: "Deployment", wantName: "d",
			wantField: "spec.selector", wantType: metav1.CauseTypeFieldValueInvalid,
			wantMsgPrefix: `Deployment.apps "d" is invalid: spec.selector: Invalid value: `,
			wantMsgSuffix: `field is immutable`,
		},
		{
			name: "immutable configmap data", method: http.MethodPut, path: "/api/v1/namespaces/" + ns + "/configmaps/frozen",
			body: frozen, wantKind: "ConfigMap", wantName: "frozen",
			wantField: "data", wantType: metav1.CauseType("FieldValueForbidden"),
			wantMsgPrefix: "ConfigMap \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			code, _, data := c.do(tt.method, tt.path, tt.body, "", "")
			st := expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
			if !strings.HasPrefix(st.Message, tt.wantMsgPrefix) || !strings.HasSuffix(st.Message, tt.wantMsgSuffix) {
				t.Errorf("message %q, want %q...%q", st.Message, tt.wantMsgPrefix, tt.wantMsgSuffix)
			}
			if st.Details == nil {
				t.Fatalf("no details: %s", data)
			}
			if st.Details.Group != tt.wantGroup || st.Details.Kind != tt.wantKind || st.Details.Name != tt.wantName {
				t.Errorf("details group %q kind %q name %q, want %q %q %q", st.Details.Group, st.Details.Kind, st.Details.Name, tt.wantGroup, tt.wantKind, tt.wantName)
			}
			found := false
			for _, cause := range st.Details.Causes {
				if cause.Field == tt.wantField && cause.Type == tt.wantType {
					found = true
				}
			}
			if !found {
				t.Errorf("causes %+v, want %s on %s", st.Details.Causes, tt.wantType, tt.wantField)
			}
		})
	}
}

// fieldValidation: Strict refuses unknown and duplicate fields with 400,
// Warn (the default) stores the object and warns, Ignore is silent.
func TestSemanticsFieldValidation(t *testing.T) {
	c := start(t)
	ns := c.namespace("fieldvalidation")
	base := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	unknown := func(name string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `"},"spec":{"foo":1,` +
			`"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},` +
			`"spec":{"containers":[{"name":"a","image":"nginx"}]}}}}`
	}
	duplicate := func(name string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `","name":"` + name + `"},"spec":{` +
			`"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},` +
			`"spec":{"containers":[{"name":"a","image":"nginx"}]}}}}`
	}
	tests := []struct {
		name        string
		query       string
		body        string
		wantCode    int
		wantMsg     string // Strict: exact message
		wantWarning string // substring of a Warning header; "" = no Warning
	}{
		{"strict unknown", "?fieldValidation=Strict", unknown("s1"), http.StatusBadRequest,
			`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"`, ""},
		{"strict duplicate", "?fieldValidation=Strict", duplicate("s2"), http.StatusBadRequest,
			`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: duplicate field "metadata.name"`, ""},
		{"default warns", "", unknown("w1"), http.StatusCreated, "", `unknown field \"spec.foo\"`},
		{"warn unknown", "?fieldValidation=Warn", unknown("w2"), http.StatusCreated, "", `unknown field \"spec.foo\"`},
		{"warn duplicate", "?fieldValidation=Warn", duplicate("w3"), http.StatusCreated, "", `duplicate field \"metadata.name\"`},
		{"ignore", "?fieldValidation=Ignore", unknown("i1"), http.StatusCreated, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			code, hdr, data := c.do(http.MethodPost, base+tt.query, tt.body, "application/json", "")
			if tt.wantCode != http.StatusCreated {
				expectStatus(t, code, data, tt.wantCode, metav1.StatusReasonBadRequest, tt.wantMsg)
				return
			}
			if code != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", code, tt.wantCode, data)
			}
			warnings := strings.Join(hdr.Values("Warning"), "\n")
			if tt.wantWarning == "" && warnings != "" {
				t.Errorf("unexpected Warning: %s", warnings)
			}
			if tt.wantWarning != "" && !strings.Contains(warnings, tt.wantWarning) {
				t.Errorf("Warning headers %q, want one containing %q", warnings, tt.wantWarning)
			}
			if tt.wantWarning != "" && !strings.HasPrefix(warnings, `299 - "`) {
				t.Errorf("Warning %q is not in upstream's 299 - \"...\" form", warnings)
			}
		})
	}
	code, _, data := c.do(http.MethodPost, base+"?fieldValidation=Sometimes", unknown("bad"), "application/json", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
}

// dryRun=All runs create, update and delete without storing anything.
func TestSemanticsDryRun(t *testing.T) {
	c := start(t)
	ns := c.namespace("dryrun")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	var orig corev1.ConfigMap
	c.call(http.MethodPost, base, configMap("exists", nil, map[string]string{"k": "v"}), http.StatusCreated, &orig)

	tests := []struct {
		name     string
		method   string
		path     string
		body     any
		wantCode int
		check    func(t *testing.T, resp []byte)
	}{
		{"create", http.MethodPost, base + "?dryRun=All", configMap("new", nil, nil), http.StatusCreated, func(t *testing.T, resp []byte) {
			if m := metaOf(t, resp); m.Name != "new" {
				t.Errorf("dry-run create answered %s", resp)
			}
			code, _, data := c.do(http.MethodGet, base+"/new", nil, "", "")
			expectStatus(t, code, data, http.StatusNotFound, metav1.StatusReasonNotFound, `configmaps "new" not found`)
		}},
		{"update", http.MethodPut, base + "/exists?dryRun=All", configMap("exists", nil, map[string]string{"k": "dry"}), http.StatusOK, func(t *testing.T, resp []byte) {
			var answered corev1.ConfigMap
			if err := jsonUnmarshal(resp, &answered); err != nil || answered.Data["k"] != "dry" {
				t.Errorf("dry-run update answered %s", resp)
			}
		}},
		{"patch", http.MethodPatch, base + "/exists?dryRun=All", `{"data":{"k":"patched"}}`, http.StatusOK, nil},
		{"delete", http.MethodDelete, base + "/exists?dryRun=All", nil, http.StatusOK, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			ct := ""
			if tt.method == http.MethodPatch {
				ct = "application/merge-patch+json"
			}
			code, _, data := c.do(tt.method, tt.path, tt.body, ct, "")
			if code != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", code, tt.wantCode, data)
			}
			if tt.check != nil {
				tt.check(t, data)
			}
			var now corev1.ConfigMap
			c.call(http.MethodGet, base+"/exists", nil, http.StatusOK, &now)
			if now.ResourceVersion != orig.ResourceVersion || now.Data["k"] != "v" || now.DeletionTimestamp != nil {
				t.Errorf("dry run changed the stored object: rv %s data %v", now.ResourceVersion, now.Data)
			}
		})
	}
	code, _, data := c.do(http.MethodPost, base+"?dryRun=Some", configMap("x", nil, nil), "", "")
	st := expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != "dryRun" {
		t.Errorf("details %+v, want a dryRun cause", st.Details)
	}
}

// Concurrent creates get distinct uids and generated names (the server's
// random source is shared by all requests).
func TestSemanticsConcurrentCreates(t *testing.T) {
	c := start(t)
	ns := c.namespace("concurrent")
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	const workers, each = 8, 10
	type result struct {
		name, uid string
		err       string
	}
	results := make(chan result, workers*each)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				code, _, data := doWith(t, c.hc, c.env.URL, http.MethodPost, base,
					map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": "c-"}}, "", "")
				if code != http.StatusCreated {
					results <- result{err: string(data)}
					continue
				}
				var m struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				}
				json.Unmarshal(data, &m)
				results <- result{name: m.Metadata.Name, uid: string(m.Metadata.UID)}
			}
		}()
	}
	wg.Wait()
	close(results)
	names, uids := map[string]bool{}, map[string]bool{}
	for r := range results {
		if r.err != "" {
			t.Errorf("create failed: %s", r.err)
			continue
		}
		if names[r.name] || uids[r.uid] {
			t.Errorf("duplicate name %q or uid %q", r.name, r.uid)
		}
		names[r.name], uids[r.uid] = true, true
	}
}
