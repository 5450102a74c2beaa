package apiserver_test

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/testenv"
)

// policyObj is a ValidatingAdmissionPolicy body.
func policyObj(name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}
}

// bindingObj is a ValidatingAdmissionPolicyBinding body for policy,
// limited to namespace ns (by its kubernetes.io/metadata.name label) unless
// spec has matchResources.
func bindingObj(name, policy, ns string, spec map[string]any) map[string]any {
	if spec == nil {
		spec = map[string]any{}
	}
	spec["policyName"] = policy
	if _, ok := spec["validationActions"]; !ok {
		spec["validationActions"] = []any{"Deny"}
	}
	if _, ok := spec["matchResources"]; !ok && ns != "" {
		spec["matchResources"] = map[string]any{"namespaceSelector": map[string]any{
			"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}}
	}
	return map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}
}

var deploymentRules = map[string]any{"resourceRules": []any{map[string]any{
	"apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE", "UPDATE"}, "resources": []any{"deployments"},
}}}

// replicasPolicy is the policy of upstream's documentation: deployments
// may have at most 5 replicas.
func replicasPolicy(extra map[string]any) map[string]any {
	spec := map[string]any{
		"failurePolicy":    "Fail",
		"matchConstraints": deploymentRules,
		"validations":      []any{map[string]any{"expression": "object.spec.replicas <= 5"}},
	}
	for k, v := range extra {
		spec[k] = v
	}
	return spec
}

func sizedDeployment(name string, replicas int, labels map[string]any) map[string]any {
	d := deployment(name)
	d["spec"].(map[string]any)["replicas"] = replicas
	if labels != nil {
		md := d["metadata"].(map[string]any)
		for k, v := range md["labels"].(map[string]any) {
			labels[k] = v
		}
		md["labels"] = labels
	}
	return d
}

// createPolicy creates a policy and its binding.
func (c *client) createPolicy(policy, binding map[string]any) {
	c.t.Helper()
	c.call(http.MethodPost, "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", policy, http.StatusCreated, nil)
	c.call(http.MethodPost, "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", binding, http.StatusCreated, nil)
}

// postUntil creates body in ns with dryRun until the answer is not 201
// (the policy reached the watch cache), then returns the real answer.
func (c *client) postDeploymentUntilRefused(ns string, body map[string]any) (int, http.Header, []byte) {
	c.t.Helper()
	path := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	eventually(c.t, "policy in effect", func() bool {
		code, _, _ := c.do(http.MethodPost, path+"?dryRun=All", body, "", "")
		return code != http.StatusCreated
	})
	return c.do(http.MethodPost, path, body, "", "")
}

// ValidatingAdmissionPolicy as upstream's: bindings with Deny, Warn and
// Audit, params from a ConfigMap and a custom resource,
// parameterNotFoundAction, selectors, matchConditions, variables,
// messageExpression, reason, failurePolicy.
func TestValidatingAdmissionPolicy(t *testing.T) {
	c := start(t)
	deploys := func(ns string) string { return "/apis/apps/v1/namespaces/" + ns + "/deployments" }

	t.Run("deny", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-deny")
		c.createPolicy(policyObj("demo-policy.example.com", replicasPolicy(nil)),
			bindingObj("demo-binding-test.example.com", "demo-policy.example.com", ns, nil))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("big", 10, nil))
		st := expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5`)
		if st.Details == nil || len(st.Details.Causes) != 1 || !strings.HasPrefix(st.Details.Causes[0].Message, "ValidatingAdmissionPolicy 'demo-policy.example.com'") {
			t.Errorf("details = %+v", st.Details)
		}
		c.call(http.MethodPost, deploys(ns), sizedDeployment("small", 5, nil), http.StatusCreated, nil)
		// an update is checked too
		code, data = c.patch(deploys(ns)+"/small", "application/merge-patch+json", map[string]any{"spec": map[string]any{"replicas": 6}})
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	})

	t.Run("warn and audit", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-warn")
		c.createPolicy(policyObj("warn-policy", replicasPolicy(nil)),
			bindingObj("warn-binding", "warn-policy", ns, map[string]any{"validationActions": []any{"Warn", "Audit"}}))
		want := `Validation failed for ValidatingAdmissionPolicy 'warn-policy' with binding 'warn-binding': failed expression: object.spec.replicas <= 5`
		var hdr http.Header
		eventually(t, "warning", func() bool {
			var code int
			code, hdr, _ = c.do(http.MethodPost, deploys(ns)+"?dryRun=All", sizedDeployment("big", 10, nil), "", "")
			return code == http.StatusCreated && hdr.Get("Warning") != ""
		})
		if got := hdr.Get("Warning"); !strings.Contains(got, want) || !strings.HasPrefix(got, "299 - ") {
			t.Errorf("Warning = %q, want 299 - %q", got, want)
		}
		code, hdr, _ := c.do(http.MethodPost, deploys(ns), sizedDeployment("ok", 2, nil), "", "")
		if code != http.StatusCreated || hdr.Get("Warning") != "" {
			t.Errorf("valid object: %d, Warning %q", code, hdr.Get("Warning"))
		}
	})

	t.Run("reason and messageExpression", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-msg")
		c.createPolicy(policyObj("msg-policy", replicasPolicy(map[string]any{
			"validations": []any{map[string]any{
				"expression":        "object.spec.replicas <= 5",
				"messageExpression": "'replicas ' + string(object.spec.replicas) + ' exceed 5 in ' + namespaceObject.metadata.name",
				"message":           "static message",
				"reason":            "Forbidden",
			}},
		})), bindingObj("msg-binding", "msg-policy", ns, nil))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("big", 7, nil))
		expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
			`deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'msg-policy' with binding 'msg-binding' denied request: replicas 7 exceed 5 in vap-msg`)
	})

	t.Run("params from a ConfigMap", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-params")
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("limits", nil, map[string]string{"maxReplicas": "3"}), http.StatusCreated, nil)
		c.createPolicy(policyObj("param-policy", replicasPolicy(map[string]any{
			"paramKind":   map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
			"validations": []any{map[string]any{"expression": "object.spec.replicas <= int(params.data.maxReplicas)", "message": "too many replicas"}},
		})), bindingObj("param-binding", "param-policy", ns, map[string]any{
			"paramRef": map[string]any{"name": "limits", "parameterNotFoundAction": "Deny"}}))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("four", 4, nil))
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "four" is forbidden: ValidatingAdmissionPolicy 'param-policy' with binding 'param-binding' denied request: too many replicas`)
		c.call(http.MethodPost, deploys(ns), sizedDeployment("three", 3, nil), http.StatusCreated, nil)

		// the param is read from the watch cache: a change applies promptly
		c.call(http.MethodPut, "/api/v1/namespaces/"+ns+"/configmaps/limits", configMap("limits", nil, map[string]string{"maxReplicas": "4"}), http.StatusOK, nil)
		eventually(t, "new param", func() bool {
			code, _, _ := c.do(http.MethodPost, deploys(ns)+"?dryRun=All", sizedDeployment("four", 4, nil), "", "")
			return code == http.StatusCreated
		})

		// parameterNotFoundAction Deny
		c.call(http.MethodDelete, "/api/v1/namespaces/"+ns+"/configmaps/limits", nil, http.StatusOK, nil)
		var body []byte
		eventually(t, "param gone", func() bool {
			var code int
			code, _, body = c.do(http.MethodPost, deploys(ns)+"?dryRun=All", sizedDeployment("one", 1, nil), "", "")
			return code != http.StatusCreated
		})
		st := decodeStatus(t, body)
		if want := `deployments.apps "one" is forbidden: ValidatingAdmissionPolicy 'param-policy' with binding 'param-binding' denied request: failed to configure binding: no params found for policy binding with ` + "`Deny`" + ` parameterNotFoundAction`; st.Message != want {
			t.Errorf("message %q, want %q", st.Message, want)
		}
	})

	t.Run("params from a custom resource, parameterNotFoundAction Allow", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-crparams")
		c.createCRD(crontabCRD("params.example.com"), "/apis/params.example.com/v1/crontabs")
		c.createPolicy(policyObj("cr-policy", replicasPolicy(map[string]any{
			"paramKind":   map[string]any{"apiVersion": "params.example.com/v1", "kind": "CronTab"},
			"validations": []any{map[string]any{"expression": "object.spec.replicas <= params.spec.replicas"}},
		})), bindingObj("cr-binding", "cr-policy", ns, map[string]any{
			"paramRef": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"limits": "true"}}, "parameterNotFoundAction": "Allow"}}))
		// no param: allowed
		c.call(http.MethodPost, deploys(ns), sizedDeployment("nine", 9, nil), http.StatusCreated, nil)
		c.call(http.MethodPost, "/apis/params.example.com/v1/namespaces/"+ns+"/crontabs", crontab("limits", "params.example.com/v1",
			map[string]any{"replicas": 2}, map[string]string{"limits": "true"}), http.StatusCreated, nil)
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("three", 3, nil))
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "three" is forbidden: ValidatingAdmissionPolicy 'cr-policy' with binding 'cr-binding' denied request: failed expression: object.spec.replicas <= params.spec.replicas`)
	})

	t.Run("selectors and matchConditions", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-select")
		c.createPolicy(policyObj("select-policy", replicasPolicy(map[string]any{
			"matchConditions": []any{map[string]any{"name": "not-skipped", "expression": "!has(object.metadata.labels) || !('skip' in object.metadata.labels)"}},
		})), bindingObj("select-binding", "select-policy", "", map[string]any{"matchResources": map[string]any{
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
			"objectSelector":    map[string]any{"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"web"}}}},
		}}))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("web", 9, map[string]any{"tier": "web"}))
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
		// objectSelector does not match
		c.call(http.MethodPost, deploys(ns), sizedDeployment("db", 9, map[string]any{"tier": "db"}), http.StatusCreated, nil)
		// matchCondition false
		c.call(http.MethodPost, deploys(ns), sizedDeployment("skipped", 9, map[string]any{"tier": "web", "skip": "yes"}), http.StatusCreated, nil)
		// namespaceSelector does not match
		other := c.namespace("vap-select-other")
		c.call(http.MethodPost, deploys(other), sizedDeployment("web", 9, map[string]any{"tier": "web"}), http.StatusCreated, nil)
	})

	t.Run("variables", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-vars")
		c.createPolicy(policyObj("vars-policy", replicasPolicy(map[string]any{
			"variables": []any{
				map[string]any{"name": "replicas", "expression": "object.spec.replicas"},
				map[string]any{"name": "limit", "expression": "variables.replicas > 2 ? 5 : 0"},
				map[string]any{"name": "names", "expression": "object.spec.template.spec.containers.map(c, c.name)"},
			},
			"validations": []any{
				map[string]any{"expression": "variables.replicas <= variables.limit"},
				map[string]any{"expression": "!('forbidden' in variables.names)", "messageExpression": "'container names: ' + variables.names.join(',')"},
			},
		})), bindingObj("vars-binding", "vars-policy", ns, nil))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("six", 6, nil))
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "six" is forbidden: ValidatingAdmissionPolicy 'vars-policy' with binding 'vars-binding' denied request: failed expression: variables.replicas <= variables.limit`)
		d := sizedDeployment("named", 3, nil)
		d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[1].(map[string]any)["name"] = "forbidden"
		code, _, data = c.do(http.MethodPost, deploys(ns), d, "", "")
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "named" is forbidden: ValidatingAdmissionPolicy 'vars-policy' with binding 'vars-binding' denied request: container names: a,forbidden`)
		c.call(http.MethodPost, deploys(ns), sizedDeployment("three", 3, nil), http.StatusCreated, nil)
	})

	t.Run("failurePolicy on a runtime error", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-fail")
		bad := []any{map[string]any{"expression": "object.spec.nope == 1"}}
		c.createPolicy(policyObj("fail-policy", replicasPolicy(map[string]any{"validations": bad})), bindingObj("fail-binding", "fail-policy", ns, nil))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("x", 1, nil))
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "x" is forbidden: ValidatingAdmissionPolicy 'fail-policy' with binding 'fail-binding' denied request: expression 'object.spec.nope == 1' resulted in error: no such key: nope`)

		ns2 := c.namespace("vap-ignore")
		c.createPolicy(policyObj("ignore-policy", replicasPolicy(map[string]any{"validations": bad, "failurePolicy": "Ignore"})), bindingObj("ignore-binding", "ignore-policy", ns2, nil))
		// A second policy in the namespace shows the first is in effect.
		c.createPolicy(policyObj("ignore-probe", replicasPolicy(nil)), bindingObj("ignore-probe", "ignore-probe", ns2, nil))
		c.postDeploymentUntilRefused(ns2, sizedDeployment("big", 9, nil))
		c.call(http.MethodPost, deploys(ns2), sizedDeployment("x", 1, nil), http.StatusCreated, nil)
	})

	t.Run("scale subresource", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-scale")
		c.createPolicy(policyObj("scale-policy", map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "operations": []any{"UPDATE"}, "resources": []any{"deployments/scale"},
			}}},
			"validations": []any{map[string]any{"expression": "object.kind == 'Scale' && object.spec.replicas <= 5",
				"messageExpression": "request.subResource + ': ' + string(object.spec.replicas) + ' > 5'"}},
		}), bindingObj("scale-binding", "scale-policy", ns, nil))
		c.call(http.MethodPost, deploys(ns), sizedDeployment("web", 1, nil), http.StatusCreated, nil)
		scale := func(n int) map[string]any {
			return map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "web", "namespace": ns}, "spec": map[string]any{"replicas": n}}
		}
		var code int
		var data []byte
		eventually(t, "policy in effect", func() bool {
			code, _, data = c.do(http.MethodPut, deploys(ns)+"/web/scale?dryRun=All", scale(9), "", "")
			return code != http.StatusOK
		})
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'scale-policy' with binding 'scale-binding' denied request: scale: 9 > 5`)
		c.call(http.MethodPut, deploys(ns)+"/web/scale", scale(4), http.StatusOK, nil)
	})

	t.Run("binding subresource", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-bind")
		c.createPolicy(policyObj("bind-policy", map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods/binding"},
			}}},
			"validations": []any{map[string]any{"expression": "object.kind == 'Binding' && object.target.name != 'forbidden-node'",
				"messageExpression": "request.subResource + ' of ' + object.metadata.name + ' to ' + object.target.name"}},
		}), bindingObj("bind-binding", "bind-policy", ns, nil))
		pods := "/api/v1/namespaces/" + ns + "/pods"
		c.call(http.MethodPost, pods, pod("p", "nginx"), http.StatusCreated, nil)
		var code int
		var data []byte
		eventually(t, "policy in effect", func() bool {
			code, _, data = c.do(http.MethodPost, pods+"/p/binding?dryRun=All", bindingTo("p", "forbidden-node"), "", "")
			return code != http.StatusCreated
		})
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`pods "p" is forbidden: ValidatingAdmissionPolicy 'bind-policy' with binding 'bind-binding' denied request: binding of p to forbidden-node`)
		c.call(http.MethodPost, pods+"/p/binding", bindingTo("p", "node-1"), http.StatusCreated, nil)
	})

	t.Run("matchPolicy Equivalent", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-equivalent")
		// The rule names events.k8s.io/v1 events: a core/v1 event matches
		// with matchPolicy Equivalent and the policy sees it as an
		// events.k8s.io/v1 Event (note, not message).
		for _, mp := range []string{"Equivalent", "Exact"} {
			name := "events-" + strings.ToLower(mp)
			c.createPolicy(policyObj(name, map[string]any{
				"matchConstraints": map[string]any{"matchPolicy": mp, "resourceRules": []any{map[string]any{
					"apiGroups": []any{"events.k8s.io"}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"events"},
				}}},
				"validations": []any{map[string]any{"expression": "object.note != 'forbidden'",
					"messageExpression": "request.resource.group + '/' + request.resource.version + ' ' + request.kind.kind + ' via ' + request.requestResource.version + ' ' + object.apiVersion"}},
			}), bindingObj(name, name, ns, nil))
		}
		event := func(name string) map[string]any {
			return map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": name},
				"involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": ns}, "reason": "Test", "message": "forbidden", "type": "Normal"}
		}
		path := "/api/v1/namespaces/" + ns + "/events"
		eventually(t, "policy in effect", func() bool {
			code, _, _ := c.do(http.MethodPost, path+"?dryRun=All", event("probe"), "", "")
			return code != http.StatusCreated
		})
		code, _, data := c.do(http.MethodPost, path, event("e1"), "", "")
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`events "e1" is forbidden: ValidatingAdmissionPolicy 'events-equivalent' with binding 'events-equivalent' denied request: events.k8s.io/v1 Event via v1 events.k8s.io/v1`)
		// the Exact policy does not match a core/v1 event
		c.call(http.MethodDelete, "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/events-equivalent", nil, http.StatusOK, nil)
		eventually(t, "only the Exact policy left", func() bool {
			code, _, _ := c.do(http.MethodPost, path+"?dryRun=All", event("probe"), "", "")
			return code == http.StatusCreated
		})
		e2 := map[string]any{
			"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": map[string]any{"name": "e2"}, "eventTime": "2026-01-01T00:00:00.000000Z",
			"reportingController": "test", "reportingInstance": "test", "action": "Test", "reason": "Test", "type": "Normal", "note": "forbidden",
			"regarding": map[string]any{"kind": "Pod", "name": "p", "namespace": ns}}
		// Policies and bindings have watch caches of their own: the
		// bindings' cache having seen the deletion does not mean the
		// policies' has seen the Exact policy yet (as upstream's informers).
		eventually(t, "the Exact policy refusing an events.k8s.io/v1 event", func() bool {
			code, _, _ := c.do(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/"+ns+"/events?dryRun=All", e2, "", "")
			return code != http.StatusCreated
		})
		code, _, data = c.do(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/"+ns+"/events", e2, "", "")
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`events.events.k8s.io "e2" is forbidden: ValidatingAdmissionPolicy 'events-exact' with binding 'events-exact' denied request: events.k8s.io/v1 Event via v1 events.k8s.io/v1`)
	})

	t.Run("authorizer and request", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("vap-authz")
		c.createPolicy(policyObj("authz-policy", replicasPolicy(map[string]any{"validations": []any{
			map[string]any{"expression": "authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()"},
			map[string]any{"expression": "authorizer.requestResource.check('create').allowed()"},
			map[string]any{"expression": "request.operation == 'CREATE' && request.kind.kind == 'Deployment' && request.resource.resource == 'deployments'", "message": "request"},
			map[string]any{"expression": "!('system:masters' in request.userInfo.groups) || object.spec.replicas < 8", "messageExpression": "request.userInfo.username + ' may not'"},
		}})), bindingObj("authz-binding", "authz-policy", ns, nil))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("nine", 9, nil))
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "nine" is forbidden: ValidatingAdmissionPolicy 'authz-policy' with binding 'authz-binding' denied request: kubernetes-admin may not`)
		c.call(http.MethodPost, deploys(ns), sizedDeployment("two", 2, nil), http.StatusCreated, nil)
	})
}

func mutatingPolicyObj(name string, spec map[string]any) map[string]any {
	if _, ok := spec["reinvocationPolicy"]; !ok {
		spec["reinvocationPolicy"] = "Never"
	}
	return map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}
}

func mutatingBindingObj(name, policy, ns string) map[string]any {
	return map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{
			"policyName": policy,
			"matchResources": map[string]any{"namespaceSelector": map[string]any{
				"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}},
		},
	}
}

// MutatingAdmissionPolicy as upstream's: ApplyConfiguration merged with
// server-side apply semantics, JSONPatch, params, and the mutated object
// validated afterwards (by the registry and by validating policies).
func TestMutatingAdmissionPolicy(t *testing.T) {
	c := start(t)
	deploys := func(ns string) string { return "/apis/apps/v1/namespaces/" + ns + "/deployments" }
	create := func(c *client, policy, binding map[string]any) {
		c.t.Helper()
		c.call(http.MethodPost, "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies", policy, http.StatusCreated, nil)
		c.call(http.MethodPost, "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings", binding, http.StatusCreated, nil)
	}
	type deploymentOut struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Spec     struct {
			Replicas int `json:"replicas"`
			Template struct {
				Spec struct {
					Containers []struct {
						Name  string `json:"name"`
						Image string `json:"image"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	// createMutated creates d until the policy has mutated it (dry run),
	// then for real.
	createMutated := func(c *client, ns string, d map[string]any, mutated func(deploymentOut) bool) deploymentOut {
		c.t.Helper()
		eventually(c.t, "policy in effect", func() bool {
			code, _, data := c.do(http.MethodPost, deploys(ns)+"?dryRun=All", d, "", "")
			var out deploymentOut
			return code == http.StatusCreated && jsonUnmarshal(data, &out) == nil && mutated(out)
		})
		var out deploymentOut
		c.call(http.MethodPost, deploys(ns), d, http.StatusCreated, &out)
		return out
	}

	t.Run("ApplyConfiguration", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("map-apply")
		create(c, mutatingPolicyObj("apply-policy", map[string]any{
			"matchConstraints":   deploymentRules,
			"reinvocationPolicy": "Never",
			"mutations": []any{map[string]any{"patchType": "ApplyConfiguration", "applyConfiguration": map[string]any{
				"expression": `Object{metadata: Object.metadata{labels: {"policy": "applied"}}, spec: Object.spec{replicas: object.spec.replicas > 3 ? 3 : object.spec.replicas}}`,
			}}},
		}), mutatingBindingObj("apply-binding", "apply-policy", ns))
		out := createMutated(c, ns, sizedDeployment("web", 8, nil), func(d deploymentOut) bool { return d.Metadata.Labels["policy"] == "applied" })
		if out.Spec.Replicas != 3 || out.Metadata.Labels["app"] != "web" || len(out.Spec.Template.Spec.Containers) != 2 {
			t.Errorf("mutated deployment: %+v", out)
		}
	})

	t.Run("JSONPatch with params", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("map-jsonpatch")
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("images", nil, map[string]string{"registry": "mirror.example.com"}), http.StatusCreated, nil)
		create(c, mutatingPolicyObj("patch-policy", map[string]any{
			"matchConstraints": deploymentRules,
			"paramKind":        map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
			"mutations": []any{map[string]any{"patchType": "JSONPatch", "jsonPatch": map[string]any{
				"expression": `[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/registry"), value: params.data.registry}] + ` +
					`object.spec.template.spec.containers.map(c, JSONPatch{op: "replace", path: "/spec/template/spec/containers/" + string(object.spec.template.spec.containers.indexOf(c)) + "/image", value: params.data.registry + "/" + c.image})`,
			}}},
		}), map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
			"metadata": map[string]any{"name": "patch-binding"}, "spec": map[string]any{
				"policyName": "patch-policy",
				"paramRef":   map[string]any{"name": "images", "parameterNotFoundAction": "Deny"},
				"matchResources": map[string]any{"namespaceSelector": map[string]any{
					"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}},
			},
		})
		out := createMutated(c, ns, sizedDeployment("web", 1, nil), func(d deploymentOut) bool { return d.Metadata.Labels["example.com/registry"] != "" })
		if got := out.Metadata.Labels["example.com/registry"]; got != "mirror.example.com" {
			t.Errorf("label = %q", got)
		}
		if cs := out.Spec.Template.Spec.Containers; len(cs) != 2 || cs[0].Image != "mirror.example.com/nginx:1.27" || cs[1].Image != "mirror.example.com/busybox:1.36" {
			t.Errorf("containers = %+v", cs)
		}
	})

	t.Run("mutated object is validated", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("map-validate")
		create(c, mutatingPolicyObj("bad-policy", map[string]any{
			"matchConstraints": deploymentRules,
			"mutations": []any{map[string]any{"patchType": "JSONPatch", "jsonPatch": map[string]any{
				"expression": `[JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas * 10}]`,
			}}},
		}), mutatingBindingObj("bad-binding", "bad-policy", ns))
		c.createPolicy(policyObj("after-mutation", replicasPolicy(nil)), bindingObj("after-mutation", "after-mutation", ns, nil))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("one", 1, nil))
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`deployments.apps "one" is forbidden: ValidatingAdmissionPolicy 'after-mutation' with binding 'after-mutation' denied request: failed expression: object.spec.replicas <= 5`)
	})

	t.Run("reinvocation", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("map-reinvoke")
		// "a-copy" runs first and copies label b, which "b-set" sets
		// afterwards: with reinvocationPolicy IfNeeded it runs again.
		create(c, mutatingPolicyObj("a-copy", map[string]any{
			"matchConstraints":   deploymentRules,
			"reinvocationPolicy": "IfNeeded",
			"mutations": []any{map[string]any{"patchType": "ApplyConfiguration", "applyConfiguration": map[string]any{
				"expression": `Object{metadata: Object.metadata{labels: {"a": object.metadata.labels.?b.orValue("none")}}}`,
			}}},
		}), mutatingBindingObj("a-copy", "a-copy", ns))
		create(c, mutatingPolicyObj("b-set", map[string]any{
			"matchConstraints": deploymentRules,
			"mutations": []any{map[string]any{"patchType": "ApplyConfiguration", "applyConfiguration": map[string]any{
				"expression": `Object{metadata: Object.metadata{labels: {"b": "from-b"}}}`,
			}}},
		}), mutatingBindingObj("b-set", "b-set", ns))
		out := createMutated(c, ns, sizedDeployment("web", 1, nil), func(d deploymentOut) bool { return d.Metadata.Labels["b"] != "" })
		if out.Metadata.Labels["a"] != "from-b" || out.Metadata.Labels["b"] != "from-b" {
			t.Errorf("labels = %v", out.Metadata.Labels)
		}
	})

	t.Run("atomic fields", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("map-atomic")
		create(c, mutatingPolicyObj("atomic-policy", map[string]any{
			"matchConstraints": deploymentRules,
			"mutations": []any{map[string]any{"patchType": "ApplyConfiguration", "applyConfiguration": map[string]any{
				"expression": `Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {"app": "other"}}}}`,
			}}},
		}), mutatingBindingObj("atomic-binding", "atomic-policy", ns))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("x", 1, nil))
		expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonInvalid,
			`policy 'atomic-policy' with binding 'atomic-binding' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector`)
	})

	t.Run("evaluation error with failurePolicy Fail", func(t *testing.T) {
		c := c.on(t)
		ns := c.namespace("map-fail")
		create(c, mutatingPolicyObj("fail-policy", map[string]any{
			"matchConstraints": deploymentRules,
			"mutations": []any{map[string]any{"patchType": "JSONPatch", "jsonPatch": map[string]any{
				"expression": `[JSONPatch{op: "add", path: "/metadata/labels/x", value: object.spec.nope}]`,
			}}},
		}), mutatingBindingObj("fail-binding", "fail-policy", ns))
		code, _, data := c.postDeploymentUntilRefused(ns, sizedDeployment("x", 1, nil))
		// upstream sets the reason (Invalid) and keeps Forbidden's code
		expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonInvalid,
			`policy 'fail-policy' with binding 'fail-binding' denied request: expression '[JSONPatch{op: "add", path: "/metadata/labels/x", value: object.spec.nope}]' resulted in error: no such key: nope`)
	})
}

// Status type checking as upstream's controller: each generation is
// checked against the schemas of the kinds its rules name (built-in and
// custom resources) and the expressions that do not compile are listed.
func TestValidatingAdmissionPolicyTypeChecking(t *testing.T) {
	c := start(t)
	c.createCRD(crontabCRD("typecheck.example.com"), "/apis/typecheck.example.com/v1/crontabs")
	type status struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Status   struct {
			ObservedGeneration int64 `json:"observedGeneration"`
			TypeChecking       *struct {
				ExpressionWarnings []struct{ FieldRef, Warning string } `json:"expressionWarnings"`
			} `json:"typeChecking"`
		} `json:"status"`
	}
	const path = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/"
	checked := func(t *testing.T, name string) status {
		var st status
		eventually(t, "type checking of "+name, func() bool {
			c.on(t).call(http.MethodGet, path+name, nil, http.StatusOK, &st)
			return st.Status.TypeChecking != nil && st.Status.ObservedGeneration == st.Metadata.Generation
		})
		return st
	}
	rules := func(group, version, resource string) map[string]any {
		return map[string]any{"resourceRules": []any{map[string]any{
			"apiGroups": []any{group}, "apiVersions": []any{version}, "operations": []any{"CREATE"}, "resources": []any{resource},
		}}}
	}
	for _, tt := range []struct {
		name        string
		constraints map[string]any
		validations []any
		want        map[string]string // fieldRef → warning substring
	}{
		{"typecheck-deployments", rules("apps", "v1", "deployments"), []any{
			map[string]any{"expression": "object.spec.replicas <= 5"},
			map[string]any{"expression": "object.spec.replicass <= 5", "messageExpression": "'x' + object.metadata.nam"},
			map[string]any{"expression": "object.spec.template.spec.containers.all(c, c.image.startsWith('r/'))"},
			map[string]any{"expression": "object.spec.replicas == 'three'"},
		}, map[string]string{
			"spec.validations[1].expression":        "apps/v1, Kind=Deployment: compilation failed: ERROR: <input>:1:12: undefined field 'replicass'",
			"spec.validations[1].messageExpression": "undefined field 'nam'",
			"spec.validations[3].expression":        "found no matching overload for '_==_' applied to '(int, string)'",
		}},
		{"typecheck-crontabs", rules("typecheck.example.com", "v1", "crontabs"), []any{
			map[string]any{"expression": "object.spec.replicas <= 5 && object.spec.cronSpec != ''"},
			map[string]any{"expression": "object.spec.schedule != ''"},
		}, map[string]string{
			"spec.validations[1].expression": "typecheck.example.com/v1, Kind=CronTab: compilation failed: ERROR: <input>:1:12: undefined field 'schedule'",
		}},
		{"typecheck-params-variables", rules("apps", "v1", "deployments"), []any{
			map[string]any{"expression": "variables.replicas <= int(params.data.max) && variables.names.all(n, n != '')"},
			map[string]any{"expression": "variables.replicas == 'three'"},
			map[string]any{"expression": "variables.nope"},
			map[string]any{"expression": "params.spec.max > 1"},
		}, map[string]string{
			"spec.validations[1].expression": "found no matching overload for '_==_' applied to '(int, string)'",
			"spec.validations[2].expression": "undefined field 'nope'",
			"spec.validations[3].expression": "undefined field 'spec'",
		}},
		{"typecheck-wildcard", rules("*", "*", "*"), []any{
			map[string]any{"expression": "object.spec.whatever"},
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := map[string]any{"matchConstraints": tt.constraints, "validations": tt.validations}
			if tt.name == "typecheck-params-variables" {
				spec["paramKind"] = map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}
				spec["variables"] = []any{
					map[string]any{"name": "replicas", "expression": "object.spec.replicas"},
					map[string]any{"name": "names", "expression": "object.spec.template.spec.containers.map(c, c.name)"},
				}
			}
			c.on(t).call(http.MethodPost, path[:len(path)-1], policyObj(tt.name, spec), http.StatusCreated, nil)
			st := checked(t, tt.name)
			got := map[string]string{}
			for _, w := range st.Status.TypeChecking.ExpressionWarnings {
				got[w.FieldRef] = w.Warning
			}
			if len(got) != len(tt.want) {
				t.Errorf("warnings %v, want %d", got, len(tt.want))
			}
			for ref, sub := range tt.want {
				if !strings.Contains(got[ref], sub) {
					t.Errorf("warning of %s = %q, want it to contain %q", ref, got[ref], sub)
				}
			}
		})
	}
}

// The CEL authorizer answers from the server's authorizer (RBAC here)
// for the requesting user: a policy letting only users who may read the
// namespace's secrets create configmaps labelled sensitive.
func TestValidatingAdmissionPolicyAuthorizerRBAC(t *testing.T) {
	c := start(t, testenv.Config{RBAC: true})
	ns := c.namespace("vap-rbac")
	for _, r := range []struct{ name, verb, resource string }{{"cm", "create", "configmaps"}, {"secrets", "get", "secrets"}} {
		c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/roles", rbacObject("Role", ns, r.name, map[string]any{
			"rules": []map[string]any{policyRule([]string{r.verb}, []string{""}, []string{r.resource})}}), http.StatusCreated, nil)
	}
	bind := func(role, user string) {
		c.call(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings", rbacObject("RoleBinding", ns, role+"-"+user, map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
			"subjects": userSubjects(user)}), http.StatusCreated, nil)
	}
	bind("cm", "alice")
	bind("cm", "bob")
	bind("secrets", "bob")
	c.createPolicy(policyObj("sensitive-policy", map[string]any{
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"configmaps"},
		}}},
		"matchConditions": []any{map[string]any{"name": "sensitive", "expression": "has(object.metadata.labels) && 'sensitive' in object.metadata.labels"}},
		"validations": []any{map[string]any{
			"expression":        "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get').allowed()",
			"messageExpression": "request.userInfo.username + ' may not read secrets: ' + authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get').reason()",
			"reason":            "Forbidden",
		}},
	}), bindingObj("sensitive-binding", "sensitive-policy", ns, nil))
	alice, bob := c.as("alice"), c.as("bob")
	sensitive := func(name string) map[string]any {
		return configMap(name, map[string]string{"sensitive": "true"}, nil)
	}
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	var code int
	var data []byte
	eventually(t, "policy and roles in effect", func() bool {
		code, _, data = alice.do(http.MethodPost, path+"?dryRun=All", sensitive("probe"), "", "")
		return code != http.StatusCreated && !strings.Contains(string(data), "cannot create resource")
	})
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`configmaps "probe" is forbidden: ValidatingAdmissionPolicy 'sensitive-policy' with binding 'sensitive-binding' denied request: alice may not read secrets:`)
	eventually(t, "bob's roles in effect", func() bool {
		code, _, _ := bob.do(http.MethodPost, path+"?dryRun=All", sensitive("by-bob"), "", "")
		return code == http.StatusCreated
	})
	bob.call(http.MethodPost, path, sensitive("by-bob"), http.StatusCreated, nil)
	alice.call(http.MethodPost, path, configMap("plain", nil, nil), http.StatusCreated, nil)
}
