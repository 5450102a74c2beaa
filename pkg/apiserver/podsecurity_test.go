package apiserver_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/storage/memory"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func (c *client) labelledNamespace(name string, labels map[string]string) string {
	c.t.Helper()
	c.call(http.MethodPost, "/api/v1/namespaces", map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": labels},
	}, http.StatusCreated, nil)
	c.call(http.MethodPost, "/api/v1/namespaces/"+name+"/serviceaccounts", map[string]any{
		"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"},
	}, http.StatusCreated, nil)
	return name
}

func privilegedPod(name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx",
			"securityContext": map[string]any{"privileged": true}}}},
	}
}

func warningsOf(h http.Header) []string {
	var out []string
	for _, w := range h.Values("Warning") {
		out = append(out, w)
	}
	return out
}

func wantWarnings(t *testing.T, h http.Header, want ...string) {
	t.Helper()
	got := warningsOf(h)
	var quoted []string
	for _, w := range want {
		quoted = append(quoted, "299 - "+strconv.Quote(w))
	}
	if len(got) != len(quoted) {
		t.Fatalf("warnings\n  %q\nwant\n  %q", got, quoted)
	}
	for i := range got {
		if got[i] != quoted[i] {
			t.Errorf("warning %d\n  %s\nwant\n  %s", i, got[i], quoted[i])
		}
	}
}

// PodSecurity as upstream's plugin with its default configuration:
// enforce refuses with upstream's message, warn sends upstream's warning,
// pod controllers are warned about their templates only, invalid labels
// are refused, and raising a namespace's enforce level warns about the
// pods already there.
func TestPodSecurityAdmission(t *testing.T) {
	c := start(t)
	restrictedMsg := `privileged (container "app" must not set securityContext.privileged=true), ` +
		`allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), ` +
		`runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

	t.Run("enforce", func(t *testing.T) {
		ns := c.on(t).labelledNamespace("psa-enforce", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		code, _, data := c.on(t).do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", privilegedPod("priv"), "", "")
		expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
			`pods "priv" is forbidden: violates PodSecurity "restricted:latest": `+restrictedMsg)
		// A pod template is only warned about (warn follows enforce).
		code, h, data := c.on(t).do(http.MethodPost, "/apis/apps/v1/namespaces/"+ns+"/deployments", map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
					"spec": privilegedPod("x")["spec"]}},
		}, "", "")
		if code != http.StatusCreated {
			t.Fatalf("deployment: %d %s", code, data)
		}
		wantWarnings(t, h, `would violate PodSecurity "restricted:latest": `+restrictedMsg)
	})

	t.Run("warn", func(t *testing.T) {
		ns := c.on(t).labelledNamespace("psa-warn", map[string]string{"pod-security.kubernetes.io/warn": "baseline"})
		code, h, data := c.on(t).do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", privilegedPod("priv"), "", "")
		if code != http.StatusCreated {
			t.Fatalf("pod: %d %s", code, data)
		}
		wantWarnings(t, h, `would violate PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)`)
		code, h, _ = c.on(t).do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod("fine", "nginx"), "", "")
		if code != http.StatusCreated {
			t.Fatalf("pod: %d", code)
		}
		wantWarnings(t, h)

		// Raising enforce warns about the pods already there.
		code, h, data = c.on(t).do(http.MethodPatch, "/api/v1/namespaces/"+ns, map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"pod-security.kubernetes.io/enforce": "baseline"}},
		}, "application/merge-patch+json", "")
		if code != http.StatusOK {
			t.Fatalf("label: %d %s", code, data)
		}
		wantWarnings(t, h, `existing pods in namespace "psa-warn" violate the new PodSecurity enforce level "baseline:latest"`, `priv: privileged`)
	})

	t.Run("invalid labels", func(t *testing.T) {
		code, _, data := c.on(t).do(http.MethodPost, "/api/v1/namespaces", map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": "psa-bad", "labels": map[string]any{"pod-security.kubernetes.io/enforce": "strict"}},
		}, "", "")
		expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`Namespace "psa-bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`)
	})

	t.Run("unlabelled namespaces are privileged", func(t *testing.T) {
		ns := c.on(t).namespace("psa-none")
		code, h, data := c.on(t).do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", privilegedPod("priv"), "", "")
		if code != http.StatusCreated {
			t.Fatalf("pod: %d %s", code, data)
		}
		wantWarnings(t, h)
	})
}

// The admission plugin flags reach the chain: PodSecurity and
// ResourceQuota disabled enforce nothing; AlwaysDeny enabled refuses
// every write with upstream's message.
func TestAdmissionPluginConfig(t *testing.T) {
	c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) {
		cfg.DisableAdmissionPlugins = []string{"PodSecurity", "ResourceQuota"}
	}})
	ns := c.labelledNamespace("psa-off", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	c.quotaWithStatus(ns, "none", map[string]string{"pods": "0"}, nil, nil)
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", privilegedPod("priv"), http.StatusCreated, nil)

	d := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) {
		cfg.EnableAdmissionPlugins = []string{"AlwaysDeny"}
	}})
	code, _, data := d.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", configMap("x", nil, nil), "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`configmaps "x" is forbidden: admission control is denying all modifications`)

	_, err := apiserver.New(apiserver.Config{KV: memory.New(memory.Config{}), EnableAdmissionPlugins: []string{"Nope"}})
	if err == nil || !strings.Contains(err.Error(), `enable-admission-plugins plugin "Nope" is unknown`) {
		t.Errorf("New with an unknown plugin: %v", err)
	}
}

// Upstream's optional plugins, enabled by the flag: AlwaysPullImages,
// LimitPodHardAntiAffinityTopology, DenyServiceExternalIPs,
// ExtendedResourceToleration.
func TestOptionalAdmissionPlugins(t *testing.T) {
	c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) {
		cfg.EnableAdmissionPlugins = []string{"DenyServiceExternalIPs", "AlwaysPullImages", "ExtendedResourceToleration",
			"LimitPodHardAntiAffinityTopology", "NamespaceExists"}
	}})
	ns := c.namespace("optional")
	var p corev1.Pod
	body := pod("pull", "nginx")
	body["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["imagePullPolicy"] = "IfNotPresent"
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", body, http.StatusCreated, &p)
	if got := p.Spec.Containers[0].ImagePullPolicy; got != corev1.PullAlways {
		t.Errorf("imagePullPolicy %s, want Always", got)
	}

	gpu := sizedPod("gpu", []map[string]any{containerResources(map[string]any{"example.com/gpu": "1"}, map[string]any{"example.com/gpu": "1"})}, nil)
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", gpu, http.StatusCreated, &p)
	want := corev1.Toleration{Key: "example.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	found := false
	for _, tol := range p.Spec.Tolerations {
		found = found || tol == want
	}
	if !found {
		t.Errorf("tolerations %v lack %v", p.Spec.Tolerations, want)
	}

	aa := pod("aa", "nginx")
	aa["spec"].(map[string]any)["affinity"] = map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{
		map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}, "topologyKey": "topology.kubernetes.io/zone"}}}}
	code, _, data := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", aa, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`pods "aa" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed`)

	code, _, data = c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "ext"},
		"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}, "externalIPs": []string{"192.0.2.1"}},
	}, "", "")
	expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden,
		`services "ext" is forbidden: Use of external IPs is denied by admission control`)
}
