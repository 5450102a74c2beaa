package apiserver_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// quotaWithStatus creates a ResourceQuota and writes its status as the
// quota controller would (status.hard = spec.hard, used as given, zero
// for the rest).
func (c *client) quotaWithStatus(ns, name string, hard, used map[string]string, spec map[string]any) {
	c.t.Helper()
	if spec == nil {
		spec = map[string]any{}
	}
	spec["hard"] = hard
	var q corev1.ResourceQuota
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/resourcequotas", map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": name}, "spec": spec,
	}, http.StatusCreated, &q)
	u := map[string]string{}
	for k := range hard {
		u[k] = "0"
	}
	for k, v := range used {
		u[k] = v
	}
	c.call(http.MethodPut, "/api/v1/namespaces/"+ns+"/resourcequotas/"+name+"/status", map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": name, "resourceVersion": q.ResourceVersion},
		"spec": spec, "status": map[string]any{"hard": hard, "used": u},
	}, http.StatusOK, nil)
}

func (c *client) quotaUsed(ns, name string) corev1.ResourceList {
	c.t.Helper()
	var q corev1.ResourceQuota
	c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/resourcequotas/"+name, nil, http.StatusOK, &q)
	return q.Status.Used
}

func usedOf(l corev1.ResourceList, name string) string {
	q, ok := l[corev1.ResourceName(name)]
	if !ok {
		return "<none>"
	}
	return q.String()
}

// ResourceQuota admission as upstream's: charges are written to
// status.used before the object is stored; a charge past status.hard is
// refused with upstream's "exceeded quota" message; compute quotas
// require containers to state the resource; scopes select the pods
// charged; object counts, services and dry runs.
func TestResourceQuotaAdmission(t *testing.T) {
	c := start(t)
	bestEffort := func(name string) map[string]any { return pod(name, "nginx") }
	limited := func(name, cpu string) map[string]any {
		return sizedPod(name, []map[string]any{containerResources(map[string]any{"cpu": cpu}, map[string]any{"cpu": cpu})}, nil)
	}
	post := func(t *testing.T, ns, resource string, body any) (int, []byte) {
		code, _, data := c.on(t).do(http.MethodPost, "/api/v1/namespaces/"+ns+"/"+resource, body, "", "")
		return code, data
	}
	forbidden := func(t *testing.T, code int, data []byte, msg string) {
		t.Helper()
		expectStatus(t, code, data, http.StatusForbidden, metav1.StatusReasonForbidden, msg)
	}

	t.Run("pod count", func(t *testing.T) {
		ns := c.on(t).namespace("rq-pods")
		c.on(t).quotaWithStatus(ns, "q", map[string]string{"pods": "1", "count/pods": "5"}, nil, nil)
		if code, data := post(t, ns, "pods", bestEffort("a")); code != http.StatusCreated {
			t.Fatalf("first pod: %d %s", code, data)
		}
		used := c.on(t).quotaUsed(ns, "q")
		if usedOf(used, "pods") != "1" || usedOf(used, "count/pods") != "1" {
			t.Errorf("used after one pod = %v, want pods=1 count/pods=1", used)
		}
		code, data := post(t, ns, "pods", bestEffort("b"))
		forbidden(t, code, data, `pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`)
		// Dry run: checked, never charged.
		code, _, data = c.on(t).do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods?dryRun=All", bestEffort("c"), "", "")
		forbidden(t, code, data, `pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`)
	})

	t.Run("compute requires containers to state it", func(t *testing.T) {
		ns := c.on(t).namespace("rq-cpu")
		c.on(t).quotaWithStatus(ns, "compute", map[string]string{"limits.cpu": "1", "requests.memory": "1Gi"}, nil, nil)
		code, data := post(t, ns, "pods", bestEffort("none"))
		forbidden(t, code, data, `pods "none" is forbidden: failed quota: compute: must specify limits.cpu for: app; requests.memory for: app`)
		big := sizedPod("big", []map[string]any{containerResources(map[string]any{"cpu": "2", "memory": "100Mi"}, map[string]any{"cpu": "2"})}, nil)
		code, data = post(t, ns, "pods", big)
		forbidden(t, code, data, `pods "big" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=1`)
		ok := sizedPod("ok", []map[string]any{containerResources(map[string]any{"cpu": "500m", "memory": "100Mi"}, map[string]any{"cpu": "500m"})}, nil)
		if code, data := post(t, ns, "pods", ok); code != http.StatusCreated {
			t.Fatalf("pod within quota: %d %s", code, data)
		}
		used := c.on(t).quotaUsed(ns, "compute")
		if usedOf(used, "limits.cpu") != "500m" || usedOf(used, "requests.memory") != "100Mi" {
			t.Errorf("used = %v, want limits.cpu=500m requests.memory=100Mi", used)
		}
		again := sizedPod("again", []map[string]any{containerResources(map[string]any{"cpu": "600m", "memory": "1Mi"}, map[string]any{"cpu": "600m"})}, nil)
		code, data = post(t, ns, "pods", again)
		forbidden(t, code, data, `pods "again" is forbidden: exceeded quota: compute, requested: limits.cpu=600m, used: limits.cpu=500m, limited: limits.cpu=1`)
	})

	t.Run("scopes", func(t *testing.T) {
		ns := c.on(t).namespace("rq-scopes")
		c.on(t).quotaWithStatus(ns, "besteffort", map[string]string{"pods": "0"}, nil, map[string]any{"scopes": []string{"BestEffort"}})
		c.on(t).quotaWithStatus(ns, "terminating", map[string]string{"pods": "0"}, nil, map[string]any{"scopes": []string{"Terminating"}})
		c.on(t).quotaWithStatus(ns, "high", map[string]string{"pods": "0"}, nil, map[string]any{"scopeSelector": map[string]any{
			"matchExpressions": []any{map[string]any{"scopeName": "PriorityClass", "operator": "In", "values": []string{"high"}}}}})
		code, data := post(t, ns, "pods", bestEffort("be"))
		forbidden(t, code, data, `pods "be" is forbidden: exceeded quota: besteffort, requested: pods=1, used: pods=0, limited: pods=0`)
		if code, data := post(t, ns, "pods", limited("burst", "100m")); code != http.StatusCreated {
			t.Fatalf("NotBestEffort pod: %d %s", code, data)
		}
		job := limited("deadline", "100m")
		job["spec"].(map[string]any)["activeDeadlineSeconds"] = 60
		code, data = post(t, ns, "pods", job)
		forbidden(t, code, data, `pods "deadline" is forbidden: exceeded quota: terminating, requested: pods=1, used: pods=0, limited: pods=0`)
		// The PriorityClass scope: the class need not exist for the
		// scope to match (Priority admission resolves it first, so
		// use one that exists).
		c.call(http.MethodPost, "/apis/scheduling.k8s.io/v1/priorityclasses", map[string]any{
			"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": "high"}, "value": 1000,
		}, http.StatusCreated, nil)
		hp := limited("hp", "100m")
		hp["spec"].(map[string]any)["priorityClassName"] = "high"
		code, data = post(t, ns, "pods", hp)
		forbidden(t, code, data, `pods "hp" is forbidden: exceeded quota: high, requested: pods=1, used: pods=0, limited: pods=0`)
	})

	t.Run("object counts and services", func(t *testing.T) {
		ns := c.on(t).namespace("rq-counts")
		c.on(t).quotaWithStatus(ns, "objects", map[string]string{"count/configmaps": "1", "services.nodeports": "1", "services": "5"}, nil, nil)
		if code, data := post(t, ns, "configmaps", configMap("a", nil, nil)); code != http.StatusCreated {
			t.Fatalf("first configmap: %d %s", code, data)
		}
		code, data := post(t, ns, "configmaps", configMap("b", nil, nil))
		forbidden(t, code, data, `configmaps "b" is forbidden: exceeded quota: objects, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1`)
		svc := func(name string, ports int) map[string]any {
			var ps []any
			for i := range ports {
				ps = append(ps, map[string]any{"name": fmt.Sprint("p", i), "port": 80 + i})
			}
			return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": name},
				"spec": map[string]any{"type": "NodePort", "ports": ps, "selector": map[string]any{"app": "x"}}}
		}
		code, data = post(t, ns, "services", svc("two", 2))
		forbidden(t, code, data, `services "two" is forbidden: exceeded quota: objects, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1`)
		if code, data := post(t, ns, "services", svc("one", 1)); code != http.StatusCreated {
			t.Fatalf("service within quota: %d %s", code, data)
		}
	})

	t.Run("claims, and their status charged without refusal", func(t *testing.T) {
		ns := c.on(t).namespace("rq-claims")
		c.on(t).quotaWithStatus(ns, "storage", map[string]string{"requests.storage": "2Gi", "persistentvolumeclaims": "5"}, nil, nil)
		code, data := post(t, ns, "persistentvolumeclaims", sizedClaim("big", "3Gi"))
		forbidden(t, code, data, `persistentvolumeclaims "big" is forbidden: exceeded quota: storage, requested: requests.storage=3Gi, used: requests.storage=0, limited: requests.storage=2Gi`)
		var pvc corev1.PersistentVolumeClaim
		c.on(t).call(http.MethodPost, "/api/v1/namespaces/"+ns+"/persistentvolumeclaims", sizedClaim("one", "1Gi"), http.StatusCreated, &pvc)
		// The volume got more than asked for: the claim is charged what
		// it was allocated, past the quota (a status write is never
		// refused by quota, as upstream).
		pvc.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")}
		c.on(t).call(http.MethodPut, "/api/v1/namespaces/"+ns+"/persistentvolumeclaims/one/status", &pvc, http.StatusOK, nil)
		if got := usedOf(c.on(t).quotaUsed(ns, "storage"), "requests.storage"); got != "3Gi" {
			t.Errorf("used requests.storage = %s, want 3Gi", got)
		}
		code, data = post(t, ns, "persistentvolumeclaims", sizedClaim("small", "1Mi"))
		forbidden(t, code, data, `persistentvolumeclaims "small" is forbidden: exceeded quota: storage, requested: requests.storage=1Mi, used: requests.storage=3Gi, limited: requests.storage=2Gi`)
	})

	t.Run("a quota the controller has not observed yet is not enforced", func(t *testing.T) {
		ns := c.on(t).namespace("rq-new")
		c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/resourcequotas", map[string]any{
			"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": "q"}, "spec": map[string]any{"hard": map[string]string{"pods": "0"}},
		}, http.StatusCreated, nil)
		if code, data := post(t, ns, "pods", bestEffort("a")); code != http.StatusCreated {
			t.Fatalf("pod: %d %s", code, data)
		}
	})
}

// Concurrent creates cannot all take the last room of a quota: with room
// for 3 pods, exactly 3 of 12 concurrent creates succeed and status.used
// says 3.
func TestResourceQuotaConcurrentCreates(t *testing.T) {
	c := start(t)
	ns := c.namespace("rq-race")
	c.quotaWithStatus(ns, "q", map[string]string{"pods": "3"}, nil, nil)
	var wg sync.WaitGroup
	codes := make([]int, 12)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod(fmt.Sprint("p", i), "nginx"), "", "")
		}()
	}
	wg.Wait()
	created := 0
	for _, code := range codes {
		switch code {
		case http.StatusCreated:
			created++
		case http.StatusForbidden:
		default:
			t.Errorf("unexpected status %d", code)
		}
	}
	if created != 3 {
		t.Errorf("%d pods created, want 3 (codes %v)", created, codes)
	}
	if got := usedOf(c.quotaUsed(ns, "q"), "pods"); got != "3" {
		t.Errorf("status.used pods = %s, want 3", got)
	}
}
