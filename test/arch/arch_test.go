package arch

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "github.com/skiff-sh/skiff/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

const mod = "github.com/skiff-sh/skiff/"

func TestDependencyRules(t *testing.T) {
	forbiddenEverywhere := []string{
		"k8s.io/client-go", "k8s.io/apiserver", "k8s.io/kubernetes",
		"sigs.k8s.io/controller-runtime", "k8s.io/component-base",
	}
	rules := []struct {
		from      string   // package prefix the rule applies to
		forbidden []string // import prefixes it may not depend on (directly or not)
		direct    bool     // only direct imports
		except    []string // exact packages exempt from forbidden
	}{
		{from: mod + "pkg/storage", forbidden: []string{mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/client"}},
		{from: mod + "pkg/storage", forbidden: []string{"net/http"}, direct: true},
		{from: mod + "pkg/registry", forbidden: []string{mod + "pkg/apiserver", "net/http"}, direct: true},
		// Group packages hold pure strategy code: they never reach storage,
		// the client or the table that assembles them.
		{from: mod + "pkg/registry/resource", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/builtin"}, direct: true},
		{from: mod + "pkg/registry/networking", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/builtin"}, direct: true},
		{from: mod + "pkg/registry/storagemigration", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/builtin"}, direct: true},
		{from: mod + "pkg/registry/node", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/builtin"}, direct: true},
		{from: mod + "pkg/registry/storageapi", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/builtin"}, direct: true},
		{from: mod + "pkg/client", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry"}},
		// Controllers and the controller manager (prefix "pkg/controller")
		// reach the API only through pkg/client.
		{from: mod + "pkg/controller", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/cluster", mod + "pkg/testenv"}},
		// The metrics-server is an aggregated API server of its own: the
		// API server only through pkg/client, kubelets over HTTPS.
		{from: mod + "pkg/metricsserver", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/cluster", mod + "pkg/kubelet", mod + "pkg/controller"}},
		// What the controller manager and the scheduler share (serving,
		// delegated auth, leader election) reaches the API only through
		// pkg/client and knows neither component.
		{from: mod + "pkg/component", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/cluster",
			mod + "pkg/testenv", mod + "pkg/controllermanager", mod + "pkg/controller/", mod + "pkg/scheduler"}},
		{from: mod + "pkg/scheduler", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry"}},
		// The scheduler's plugin API never depends on the scheduler, its
		// queue and cache, or a plugin; plugins never on the scheduler's
		// internals.
		{from: mod + "pkg/scheduler/framework", forbidden: []string{mod + "pkg/scheduler/internal", mod + "pkg/controller", mod + "pkg/cluster", mod + "pkg/testenv"}},
		// (the plugin names are a leaf the configuration API uses)
		{from: mod + "pkg/scheduler/framework/runtime", forbidden: []string{mod + "pkg/scheduler/framework/plugins"}, except: []string{mod + "pkg/scheduler/framework/plugins/names"}},
		{from: mod + "pkg/scheduler/framework/plugins", forbidden: []string{mod + "pkg/scheduler/framework/runtime"}, direct: true},
		// The scheduler cache is pure bookkeeping over the plugin API's
		// types: no client, no runtime, no plugin.
		{from: mod + "pkg/scheduler/internal/cache", forbidden: []string{mod + "pkg/client", mod + "pkg/scheduler/framework/runtime", mod + "pkg/scheduler/framework/plugins"}, direct: true},
		// The scheduling queue is pure bookkeeping: no API calls, no plugin
		// implementations (only their names), no framework runtime.
		{from: mod + "pkg/scheduler/internal/queue", forbidden: []string{mod + "pkg/client", mod + "pkg/scheduler/framework/runtime", mod + "pkg/scheduler/internal/cache"}, direct: true},
		// The kubelet reaches the API only through pkg/client; it knows
		// neither the control plane's components nor the cluster assembly.
		{from: mod + "pkg/kubelet", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry",
			mod + "pkg/controller", mod + "pkg/scheduler", mod + "pkg/cluster", mod + "pkg/testenv"}},
		// The runtime interface and the simulated runtime know nothing of
		// the API server, the client or the kubelet itself.
		{from: mod + "pkg/kubelet/cri", forbidden: []string{mod + "pkg/"}},
		{from: mod + "pkg/kubelet/sim", forbidden: []string{mod + "pkg/"}, except: []string{mod + "pkg/kubelet/cri", mod + "pkg/clock"}},
		// The CRI gRPC client is an adapter: the cri interfaces, gRPC and
		// k8s.io/cri-api only (TestKubeletRemoteImports checks the rest).
		{from: mod + "pkg/kubelet/remote", forbidden: []string{mod + "pkg/"}, except: []string{mod + "pkg/kubelet/cri"}},
		// The containerd supervisor runs a process and talks CRI: it knows
		// nothing of the control plane.
		{from: mod + "pkg/containerd", forbidden: []string{mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/storage",
			mod + "pkg/client", mod + "pkg/controller", mod + "pkg/scheduler", mod + "pkg/cluster"}},
		// Probes know the runtime and the clock, nothing of the API server or client.
		{from: mod + "pkg/kubelet/prober", forbidden: []string{mod + "pkg/"}, except: []string{mod + "pkg/kubelet/cri", mod + "pkg/clock"}},
		// Garbage collection knows the runtime and the clock, nothing of the
		// API server, the client or the kubelet.
		{from: mod + "pkg/kubelet/gc", forbidden: []string{mod + "pkg/"}, except: []string{mod + "pkg/kubelet/cri", mod + "pkg/clock"}},
		// Eviction decides from observations and pods: no client, no API
		// server, no runtime, no kubelet.
		{from: mod + "pkg/kubelet/eviction", forbidden: []string{mod + "pkg/"}, except: []string{mod + "pkg/clock", mod + "pkg/componenthelpers/scheduling/corev1helpers"}},
		// The volume manager reaches the API through pkg/client and knows
		// nothing of the kubelet that calls it (nor of its runtime).
		{from: mod + "pkg/kubelet/volume", forbidden: []string{mod + "pkg/kubelet"}},
		// The kubelet's HTTPS API sees the kubelet only through its Host
		// interface (never the kubelet package) and the API only through
		// pkg/client (reviews).
		{from: mod + "pkg/kubelet/server", forbidden: []string{mod + "pkg/kubelet"}, direct: true,
			except: []string{mod + "pkg/kubelet/cri"}},
		// Bootstrap tokens are made through pkg/client: no control plane
		// internals, no kubelet.
		{from: mod + "pkg/bootstraptoken", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/cluster",
			mod + "pkg/kubelet", mod + "pkg/controller", mod + "pkg/testenv"}},
		// Proxying upgraded connections is a leaf: the standard library only.
		{from: mod + "pkg/upgradeproxy", forbidden: []string{mod + "pkg/"}},
		// Translating WebSocket streams to SPDY builds on the upgrade proxy
		// only: it knows nothing of the API server or the kubelet.
		{from: mod + "pkg/streamtranslator", forbidden: []string{mod + "pkg/"}, except: []string{mod + "pkg/upgradeproxy"}},
		// field management sees the server only through its Config (definitions, conversions)
		{from: mod + "pkg/apiserver/fieldmanager", forbidden: []string{mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/storage"}},
		{from: mod + "pkg/apiserver/fieldmanager", forbidden: []string{"net/http"}, direct: true},
		{from: mod + "examples", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry"}},
		// Group packages hold pure strategy: no storage, no client, no
		// other group's package (what they share lives in pkg/registry).
		{from: mod + "pkg/registry/flowcontrol", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/core"}, direct: true},
		{from: mod + "pkg/registry/certificates", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/core"}, direct: true},
		{from: mod + "pkg/registry/apiregistration", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/core"}, direct: true},
		// Helpers shared by the scheduler and the controllers (upstream's
		// component-helpers) depend on k8s.io/api and apimachinery only.
		{from: mod + "pkg/componenthelpers", forbidden: []string{mod + "pkg/"}},
		// The bootstrap RBAC policy is data (and its reconciliation, which
		// shares the RBAC rule coverage): k8s.io/api, apimachinery and
		// pkg/auth only, so that the API server, the controller manager and
		// tests share it.
		{from: mod + "pkg/auth/bootstrappolicy", forbidden: []string{mod + "pkg/"},
			except: []string{mod + "pkg/auth/rbac", mod + "pkg/auth/authorizer"}},
		// The Node authorizer is policy over a graph the API server feeds:
		// k8s.io/api, apimachinery and the authorizer contract and RBAC rule
		// matching only.
		{from: mod + "pkg/auth/node", forbidden: []string{mod + "pkg/"},
			except: []string{mod + "pkg/auth/rbac", mod + "pkg/auth/authorizer"}},
		// What the quota controller and the ResourceQuota admission plugin
		// share (usage evaluators) depends on k8s.io/api and apimachinery
		// only; the Pod Security Standards checks likewise.
		{from: mod + "pkg/quota", forbidden: []string{mod + "pkg/"}},
		{from: mod + "pkg/podsecurity", forbidden: []string{mod + "pkg/"}},
		// API types depend on apimachinery only.
		{from: mod + "pkg/apis/", forbidden: []string{mod + "pkg", "k8s.io/api/"}},
		// Authorization (the contract and RBAC) is pure policy over k8s.io/api
		// types: the API server and the registry use it, never the reverse.
		{from: mod + "pkg/auth", forbidden: []string{mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/storage", mod + "pkg/client", mod + "pkg/cluster"}},
		{from: mod + "pkg/auth", forbidden: []string{"net/http"}, direct: true},
		// Admission webhooks see the server only through admission's Getter
		// and Versions.
		{from: mod + "pkg/apiserver/admission/webhook", forbidden: []string{mod + "pkg/apiserver/fieldmanager", mod + "pkg/storage", mod + "pkg/client"}},
		{from: mod + "pkg/apiserver/admission/webhook", forbidden: []string{mod + "pkg/apiserver"}, direct: true,
			except: []string{mod + "pkg/apiserver/admission", mod + "pkg/apiserver/admission/matching", mod + "pkg/apiserver/admission/policy"}},
		// Admission policies and the shared admission matching see the server
		// only through admission's Getter and their own small interfaces.
		{from: mod + "pkg/apiserver/admission/policy", forbidden: []string{mod + "pkg/apiserver/fieldmanager", mod + "pkg/storage", mod + "pkg/client"}},
		{from: mod + "pkg/apiserver/admission/policy", forbidden: []string{mod + "pkg/apiserver"}, direct: true,
			except: []string{mod + "pkg/apiserver/admission", mod + "pkg/apiserver/admission/matching"}},
		{from: mod + "pkg/apiserver/admission/matching", forbidden: []string{mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/storage", mod + "pkg/client"}, direct: true,
			except: []string{mod + "pkg/apiserver/admission"}},
		// Images (archives, the pause program, import into containerd) know
		// nothing of the control plane.
		{from: mod + "pkg/image", forbidden: []string{mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/storage", mod + "pkg/client",
			mod + "pkg/cluster", mod + "pkg/controller", mod + "pkg/scheduler"}},
		{from: mod + "pkg/registry/admissionregistration", forbidden: []string{mod + "pkg/storage", mod + "pkg/client", mod + "pkg/registry/core"}, direct: true},
	}
	for _, p := range listPackages(t) {
		for _, d := range p.Deps {
			for _, f := range forbiddenEverywhere {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s (forbidden in the product; only test/compat may use it)", p.ImportPath, d)
				}
			}
		}
		for _, r := range rules {
			if !strings.HasPrefix(p.ImportPath, r.from) {
				continue
			}
			deps := p.Deps
			if r.direct {
				deps = p.Imports
			}
		deps:
			for _, d := range deps {
				for _, e := range r.except {
					if d == e {
						continue deps
					}
				}
				for _, f := range r.forbidden {
					if d == f || strings.HasPrefix(d, f+"/") {
						t.Errorf("%s depends on %s", p.ImportPath, d)
					}
				}
			}
		}
	}
}

// The scheduler configuration API and the plugin names are leaves: the
// config package imports only the standard library, apimachinery, k8s.io/api,
// sigs.k8s.io/yaml and sigs.k8s.io/json, and skiff's plugin names (which
// import nothing), so that the framework, the plugins and the scheduler can
// all depend on them.
func TestSchedulerConfigImports(t *testing.T) {
	allowed := map[string][]string{
		mod + "pkg/scheduler/apis/config": {"k8s.io/apimachinery/", "k8s.io/api/", "sigs.k8s.io/yaml", "sigs.k8s.io/json",
			mod + "pkg/scheduler/framework/plugins/names"},
		mod + "pkg/scheduler/framework/plugins/names": {},
	}
	found := map[string]bool{}
	for _, p := range listPackages(t) {
		prefixes, ok := allowed[p.ImportPath]
		if !ok {
			continue
		}
		found[p.ImportPath] = true
	imports:
		for _, d := range p.Imports {
			if !strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
				continue // standard library
			}
			for _, a := range prefixes {
				if d == a || strings.HasPrefix(d, a) {
					continue imports
				}
			}
			t.Errorf("%s imports %s (allowed: standard library, %v)", p.ImportPath, d, prefixes)
		}
	}
	for p := range allowed {
		if !found[p] {
			t.Errorf("package %s not found", p)
		}
	}
}

// Every package under pkg/registry, pkg/controller, pkg/scheduler,
// pkg/controllermanager and pkg/component says in its doc.go what it
// provides and the invariants it keeps.
func TestRegistryPackagesHaveDocGo(t *testing.T) {
	for _, p := range listPackages(t) {
		if !strings.HasPrefix(p.ImportPath, mod+"pkg/registry") && !strings.HasPrefix(p.ImportPath, mod+"pkg/controller") &&
			!strings.HasPrefix(p.ImportPath, mod+"pkg/scheduler") && !strings.HasPrefix(p.ImportPath, mod+"pkg/component") {
			continue
		}
		dir := filepath.Join("../..", strings.TrimPrefix(p.ImportPath, mod))
		if _, err := os.Stat(filepath.Join(dir, "doc.go")); err != nil {
			t.Errorf("%s has no doc.go", p.ImportPath)
		}
	}
}

// Every controller package says in its doc.go what it does and the
// invariants it keeps, and controllers never import one another (what they
// share lives under pkg/controller/internal or pkg/client).
func TestControllerPackages(t *testing.T) {
	const ctrl = mod + "pkg/controller/"
	for _, p := range listPackages(t) {
		if !strings.HasPrefix(p.ImportPath, ctrl) {
			continue
		}
		dir := filepath.Join("../..", strings.TrimPrefix(p.ImportPath, mod))
		if _, err := os.Stat(filepath.Join(dir, "doc.go")); err != nil {
			t.Errorf("%s has no doc.go", p.ImportPath)
		}
		if strings.HasPrefix(p.ImportPath, ctrl+"internal/") {
			continue
		}
		for _, d := range p.Imports {
			if strings.HasPrefix(d, ctrl) && !strings.HasPrefix(d, ctrl+"internal/") {
				t.Errorf("%s imports controller %s", p.ImportPath, d)
			}
		}
	}
}

// The CRI client imports only the standard library, gRPC, k8s.io/cri-api
// and pkg/kubelet/cri.
func TestKubeletRemoteImports(t *testing.T) {
	allowed := []string{"google.golang.org/grpc", "k8s.io/cri-api/", mod + "pkg/kubelet/cri"}
	found := false
	for _, p := range listPackages(t) {
		if p.ImportPath != mod+"pkg/kubelet/remote" {
			continue
		}
		found = true
	imports:
		for _, d := range p.Imports {
			if !strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
				continue // standard library
			}
			for _, a := range allowed {
				if d == a || strings.HasPrefix(d, a) {
					continue imports
				}
			}
			t.Errorf("%s imports %s (allowed: standard library, %v)", p.ImportPath, d, allowed)
		}
	}
	if !found {
		t.Error("package pkg/kubelet/remote not found")
	}
}
