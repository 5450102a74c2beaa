package arch

import (
	"encoding/json"
	"os/exec"
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
	}{
		{from: mod + "pkg/storage", forbidden: []string{mod + "pkg/apiserver", mod + "pkg/registry", mod + "pkg/client"}},
		{from: mod + "pkg/storage", forbidden: []string{"net/http"}, direct: true},
		{from: mod + "pkg/registry", forbidden: []string{mod + "pkg/apiserver", "net/http"}, direct: true},
		{from: mod + "pkg/client", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry"}},
		{from: mod + "pkg/controller", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry"}},
		{from: mod + "pkg/scheduler", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry"}},
		{from: mod + "pkg/kubelet", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry"}},
		{from: mod + "examples", forbidden: []string{mod + "pkg/storage", mod + "pkg/apiserver", mod + "pkg/registry"}},
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
			for _, d := range deps {
				for _, f := range r.forbidden {
					if d == f || strings.HasPrefix(d, f+"/") {
						t.Errorf("%s depends on %s", p.ImportPath, d)
					}
				}
			}
		}
	}
}
