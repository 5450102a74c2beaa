package apiserver_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// nodePortService is a NodePort Service body with a fixed cluster IP and
// node port.
func nodePortService(name, ip string, nodePort int, extra map[string]any) map[string]any {
	md := map[string]any{"name": name}
	for k, v := range extra {
		md[k] = v
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": md,
		"spec": map[string]any{
			"type": "NodePort", "clusterIP": ip, "selector": map[string]any{"app": name},
			"ports": []any{map[string]any{"port": 80, "nodePort": nodePort}},
		},
	}
}

func (c *client) ipAddress(ip string) (*networkingv1.IPAddress, int) {
	code, _, body := c.do(http.MethodGet, "/apis/networking.k8s.io/v1/ipaddresses/"+ip, nil, "", "")
	if code != http.StatusOK {
		return nil, code
	}
	out := &networkingv1.IPAddress{}
	if err := jsonUnmarshal(body, out); err != nil {
		c.t.Fatal(err)
	}
	return out, code
}

// Every path that removes a Service releases its cluster IP and node port:
// re-creating a Service with the same fixed address and port right after
// succeeds (upstream's allocator; skiff's used to release only on DELETE).
func TestServiceAllocationReleasedOnEveryDeletePath(t *testing.T) {
	c := start(t, withGC(testenv.Config{}))
	paths := []struct {
		name   string
		extra  map[string]any
		remove func(c *client, ns, name string)
	}{
		{name: "delete", remove: func(c *client, ns, name string) {
			c.call(http.MethodDelete, "/api/v1/namespaces/"+ns+"/services/"+name, nil, http.StatusOK, nil)
		}},
		{name: "deletecollection", remove: func(c *client, ns, name string) {
			c.call(http.MethodDelete, "/api/v1/namespaces/"+ns+"/services", nil, http.StatusOK, nil)
		}},
		{name: "namespace", remove: func(c *client, ns, name string) {
			c.call(http.MethodDelete, "/api/v1/namespaces/"+ns, nil, http.StatusOK, nil)
		}},
		{name: "last finalizer", extra: map[string]any{"finalizers": []any{"example.com/hold"}}, remove: func(c *client, ns, name string) {
			c.call(http.MethodDelete, "/api/v1/namespaces/"+ns+"/services/"+name, nil, http.StatusOK, nil)
			code, body := c.patch("/api/v1/namespaces/"+ns+"/services/"+name, "application/merge-patch+json",
				map[string]any{"metadata": map[string]any{"finalizers": nil}})
			if code != http.StatusOK {
				c.t.Fatalf("removing the finalizer: %d %s", code, body)
			}
		}},
		{name: "garbage collector", remove: func(c *client, ns, name string) {
			// The Service is owned by a ConfigMap; deleting the owner
			// lets the garbage collector delete the Service.
			c.call(http.MethodDelete, "/api/v1/namespaces/"+ns+"/configmaps/owner", nil, http.StatusOK, nil)
		}},
	}
	for i, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			c := c.on(t)
			ns := c.namespace(fmt.Sprintf("alloc-%d", i))
			ip, port := fmt.Sprintf("10.96.200.%d", 10+i), 31000+i
			extra := p.extra
			if p.name == "garbage collector" {
				owner := metaOf(t, c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", configMap("owner", nil, nil), http.StatusCreated, nil))
				extra = map[string]any{"ownerReferences": []any{map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": string(owner.UID)}}}
			}
			c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", nodePortService("web", ip, port, extra), http.StatusCreated, nil)
			if got, code := c.ipAddress(ip); code != http.StatusOK || got.Spec.ParentRef == nil ||
				got.Spec.ParentRef.Namespace != ns || got.Spec.ParentRef.Name != "web" || got.Spec.ParentRef.Resource != "services" {
				t.Fatalf("IPAddress %s = %d %+v", ip, code, got)
			}
			p.remove(c, ns, "web")
			eventually(t, "the service to go", func() bool {
				code, _, _ := c.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/services/web", nil, "", "")
				return code == http.StatusNotFound
			})
			// The release follows the deletion (the delete's after-hook,
			// run by whoever deleted: the API server for a DELETE, or for a
			// controller's request).
			eventually(t, "the IPAddress to be released", func() bool {
				_, code := c.ipAddress(ip)
				return code == http.StatusNotFound
			})
			// Re-create at once, elsewhere: the address and port are free.
			other := c.namespace(fmt.Sprintf("alloc-%d-again", i))
			c.call(http.MethodPost, "/api/v1/namespaces/"+other+"/services", nodePortService("web", ip, port, nil), http.StatusCreated, nil)
		})
	}
}

func TestServiceAllocationConflicts(t *testing.T) {
	c := start(t)
	ns := c.namespace("conflicts")
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", nodePortService("a", "10.96.100.1", 30100, nil), http.StatusCreated, nil)
	code, _, body := c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", nodePortService("b", "10.96.100.1", 30101, nil), "", "")
	expectStatus(t, code, body, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`Service "b" is invalid: spec.clusterIPs[0]: Invalid value: "10.96.100.1": failed to allocate IP 10.96.100.1: provided IP is already allocated`)
	code, _, body = c.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", nodePortService("c", "10.96.100.2", 30100, nil), "", "")
	expectStatus(t, code, body, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 30100: provided port is already allocated`)
	// The failed creates left nothing behind: c's address is free.
	if _, code := c.ipAddress("10.96.100.2"); code != http.StatusNotFound {
		t.Fatalf("a failed create kept its address (%d)", code)
	}
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", nodePortService("c", "10.96.100.2", 30102, nil), http.StatusCreated, nil)
	// A dry-run create allocates nothing.
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services?dryRun=All", nodePortService("d", "10.96.100.3", 30103, nil), http.StatusCreated, nil)
	if _, code := c.ipAddress("10.96.100.3"); code != http.StatusNotFound {
		t.Fatalf("a dry-run create allocated its address (%d)", code)
	}
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", nodePortService("d", "10.96.100.3", 30103, nil), http.StatusCreated, nil)
	// Changing the type to ClusterIP releases the node port.
	code, body2 := c.patch("/api/v1/namespaces/"+ns+"/services/d", "application/merge-patch+json",
		map[string]any{"spec": map[string]any{"type": "ClusterIP", "externalTrafficPolicy": nil, "ports": []any{map[string]any{"port": 80}}}})
	if code != http.StatusOK {
		t.Fatalf("type change: %d %s", code, body2)
	}
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/services", nodePortService("e", "", 30103, nil), http.StatusCreated, nil)
}

func TestServiceCIDRAndKubernetesServiceAddress(t *testing.T) {
	c := start(t)
	var cidr networkingv1.ServiceCIDR
	c.call(http.MethodGet, "/apis/networking.k8s.io/v1/servicecidrs/kubernetes", nil, http.StatusOK, &cidr)
	if len(cidr.Spec.CIDRs) != 1 || cidr.Spec.CIDRs[0] != "10.96.0.0/12" {
		t.Errorf("cidrs = %v", cidr.Spec.CIDRs)
	}
	if len(cidr.Status.Conditions) != 1 || cidr.Status.Conditions[0].Type != "Ready" || cidr.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("conditions = %+v", cidr.Status.Conditions)
	}
	ip, code := c.ipAddress("10.96.0.1")
	if code != http.StatusOK || ip.Spec.ParentRef.Namespace != "default" || ip.Spec.ParentRef.Name != "kubernetes" {
		t.Fatalf("kubernetes service address: %d %+v", code, ip)
	}
	if ip.Labels["ipaddress.kubernetes.io/managed-by"] != "ipallocator.k8s.io" || ip.Labels["ipaddress.kubernetes.io/ip-family"] != "IPv4" {
		t.Errorf("labels = %v", ip.Labels)
	}
}

// Repair: an address whose Service is gone (a crash between allocation
// and the Service write) is released after three repairs; a Service whose
// record is missing gets it back.
func TestServiceAllocationRepair(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := start(t, testenv.Config{Clock: fake})
	leak := map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
		"metadata": map[string]any{"name": "10.96.50.50", "labels": map[string]any{
			"ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io", "ipaddress.kubernetes.io/ip-family": "IPv4"}},
		"spec": map[string]any{"parentRef": map[string]any{"resource": "services", "namespace": "default", "name": "gone"}},
	}
	c.call(http.MethodPost, "/apis/networking.k8s.io/v1/ipaddresses", leak, http.StatusCreated, nil)
	c.call(http.MethodDelete, "/apis/networking.k8s.io/v1/ipaddresses/10.96.0.1", nil, http.StatusOK, nil)
	ctx := t.Context()
	for i := 0; i < 3; i++ {
		if _, code := c.ipAddress("10.96.50.50"); code != http.StatusOK {
			t.Fatalf("leaked address released after %d repairs, want 3", i)
		}
		if err := c.env.Server.Repair(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, code := c.ipAddress("10.96.50.50"); code != http.StatusNotFound {
		t.Fatalf("leaked address still there after 3 repairs (%d)", code)
	}
	if _, code := c.ipAddress("10.96.0.1"); code != http.StatusOK {
		t.Fatalf("the kubernetes service's address was not recorded again (%d)", code)
	}
	// The periodic loop runs the same repair every registry.RepairInterval.
	leak["metadata"].(map[string]any)["name"] = "10.96.50.51"
	c.call(http.MethodPost, "/apis/networking.k8s.io/v1/ipaddresses", leak, http.StatusCreated, nil)
	eventually(t, "the periodic repair to release the leaked address", func() bool {
		fake.Step(registry.RepairInterval)
		_, code := c.ipAddress("10.96.50.51")
		return code == http.StatusNotFound
	})
}

// Two API servers on one storage never hand out the same address or port.
func TestTwoServersNoDuplicateAllocations(t *testing.T) {
	var shared storage.KV
	a := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) { shared = cfg.KV }})
	b := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) { cfg.KV = shared }})
	const n = 500
	var mu sync.Mutex
	ips, ports := map[string]string{}, map[int32]string{}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				c := a
				if i%2 == 1 {
					c = b
				}
				name := fmt.Sprintf("svc-%d", i)
				var svc corev1.Service
				code, _, body := c.do(http.MethodPost, "/api/v1/namespaces/default/services", nodePortService(name, "", 0, nil), "", "")
				if code != http.StatusCreated {
					errs <- fmt.Errorf("%s: %d %s", name, code, body)
					continue
				}
				if err := jsonUnmarshal(body, &svc); err != nil {
					errs <- err
					continue
				}
				mu.Lock()
				if other, dup := ips[svc.Spec.ClusterIP]; dup {
					errs <- fmt.Errorf("%s and %s share cluster IP %s", name, other, svc.Spec.ClusterIP)
				}
				ips[svc.Spec.ClusterIP] = name
				p := svc.Spec.Ports[0].NodePort
				if other, dup := ports[p]; dup {
					errs <- fmt.Errorf("%s and %s share node port %d", name, other, p)
				}
				ports[p] = name
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(ips) != n || len(ports) != n {
		t.Errorf("%d addresses and %d ports for %d services", len(ips), len(ports), n)
	}
}
