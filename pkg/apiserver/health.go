package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/version"
)

// The Kubernetes release whose API skiff serves (k8s.io/api v0.37.2).
const (
	kubeMajor  = "1"
	kubeMinor  = "37"
	gitVersion = "v1.37.2"
)

// VersionInfo is what /version reports. GitCommit, GitTreeState and
// BuildDate are skiff's own, from the VCS stamp Go puts in the binary; a
// build without one leaves them empty (BuildDate: upstream's unset 1970 date).
func VersionInfo() version.Info {
	info := version.Info{
		Major: kubeMajor, Minor: kubeMinor,
		EmulationMajor: kubeMajor, EmulationMinor: kubeMinor,
		MinCompatibilityMajor: kubeMajor, MinCompatibilityMinor: "36",
		GitVersion: gitVersion, GitCommit: "", GitTreeState: "",
		BuildDate: "1970-01-01T00:00:00Z", GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.GitCommit = s.Value
			case "vcs.time":
				info.BuildDate = s.Value
			case "vcs.modified":
				info.GitTreeState = map[string]string{"true": "dirty", "false": "clean"}[s.Value]
			}
		}
	}
	return info
}

func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	data, _ := jsonMarshal(VersionInfo())
	writeRaw(w, http.StatusOK, mediaJSON, append(data, '\n'))
}

type healthCheck struct {
	name  string
	check func(ctx context.Context) error
}

func (s *Server) healthChecks(kind string) []healthCheck {
	checks := []healthCheck{
		{"ping", func(context.Context) error { return nil }},
		{"log", func(context.Context) error { return nil }},
		{"etcd", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, _, err := s.cfg.KV.Get(ctx, "/registry/health")
			return err
		}},
	}
	if kind == "readyz" {
		checks = append(checks, healthCheck{"informer-sync", func(context.Context) error {
			select {
			case <-s.ready:
				return nil
			default:
				return fmt.Errorf("watch caches not synced")
			}
		}})
	}
	// Post-start hooks are checked by /healthz, /livez and /readyz alike,
	// as upstream's (livez grace period 0). Both finish in Start, before
	// the server is ready: the bootstrap objects, then the bootstrap RBAC
	// policy (bootstrap_rbac.go).
	started := func(context.Context) error {
		select {
		case <-s.ready:
			return nil
		default:
			return fmt.Errorf("not finished")
		}
	}
	checks = append(checks,
		healthCheck{"poststarthook/bootstrap-controller", started},
		healthCheck{"poststarthook/rbac/bootstrap-roles", started},
	)
	if kind == "readyz" {
		checks = append(checks, healthCheck{"shutdown", func(context.Context) error {
			select {
			case <-s.stopping:
				return fmt.Errorf("process is shutting down")
			default:
				return nil
			}
		}})
	}
	return checks
}

// serveHealth answers /healthz, /livez and /readyz (and /<kind>/<check>)
// in upstream's format: "ok", or with ?verbose one [+]/[-] line per check.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	parts := splitPath(r.URL.Path)
	kind := parts[0]
	checks := s.healthChecks(kind)
	if len(parts) > 1 {
		name := strings.Join(parts[1:], "/")
		var only []healthCheck
		for _, c := range checks {
			if c.name == name {
				only = append(only, c)
			}
		}
		if len(only) == 0 {
			http.NotFound(w, r)
			return
		}
		checks = only
	}
	exclude := map[string]bool{}
	for _, x := range r.URL.Query()["exclude"] {
		exclude[x] = true
	}
	var b strings.Builder
	failed := false
	for _, c := range checks {
		if exclude[c.name] {
			fmt.Fprintf(&b, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.check(r.Context()); err != nil {
			failed = true
			fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.name)
			s.cfg.Logger.Debug("health check failed", "check", c.name, "err", err)
		} else {
			fmt.Fprintf(&b, "[+]%s ok\n", c.name)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if failed {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%s%s check failed\n", b.String(), kind)
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		fmt.Fprintf(w, "%s%s check passed\n", b.String(), kind)
		return
	}
	fmt.Fprint(w, "ok")
}
