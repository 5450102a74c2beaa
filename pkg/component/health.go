package component

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// HealthChecker is one named health check (upstream's
// healthz.HealthChecker; leaderelection.HealthzAdaptor is one).
type HealthChecker interface {
	Name() string
	Check(*http.Request) error
}

type namedCheck struct {
	name string
	fn   func(*http.Request) error
}

func (c namedCheck) Name() string                { return c.name }
func (c namedCheck) Check(r *http.Request) error { return c.fn(r) }

// NamedCheck makes a HealthChecker of a function.
func NamedCheck(name string, fn func(*http.Request) error) HealthChecker {
	return namedCheck{name, fn}
}

// Health holds a component's health checks: the fixed checks given to
// NewHealth in their order, then the named checks of the running parts
// (Add, Fail, Remove) sorted by name; with no check at all, "ping" (always
// healthy), as upstream's healthz handler installs ping only when given no
// check. It is safe for concurrent use.
type Health struct {
	fixed []HealthChecker

	mu    sync.Mutex
	parts map[string]error // running parts; non-nil: failed
}

// NewHealth returns the checks fixed (none: ping alone until a part is
// added).
func NewHealth(fixed ...HealthChecker) *Health {
	return &Health{fixed: slices.Clone(fixed), parts: map[string]error{}}
}

// Add adds a healthy check name (a part that started).
func (h *Health) Add(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.parts[name] = nil
}

// Fail makes the check name fail with err from now on.
func (h *Health) Fail(name string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.parts[name] = err
}

// Remove drops the check name (a part that stopped).
func (h *Health) Remove(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.parts, name)
}

// Checks returns the current checks in the order they are reported.
func (h *Health) Checks() []HealthChecker {
	out := slices.Clone(h.fixed)
	h.mu.Lock()
	defer h.mu.Unlock()
	names := make([]string, 0, len(h.parts))
	for n := range h.parts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		err := h.parts[n]
		out = append(out, NamedCheck(n, func(*http.Request) error { return err }))
	}
	if len(out) == 0 {
		out = append(out, NamedCheck("ping", func(*http.Request) error { return nil }))
	}
	return out
}

// Install mounts Handler(path) on path and path+"/" of mux.
func (h *Health) Install(mux *http.ServeMux, path string) {
	hh := h.Handler(path)
	mux.Handle(path, hh)
	mux.Handle(path+"/", hh)
}

// Handler answers path and path/<check> as upstream's healthz handler
// does, name being path's first segment (healthz, livez, readyz): "ok",
// or 500 with one [+]/[-] line per check ("reason withheld") followed by
// "<name> check failed"; ?verbose lists the lines when healthy too,
// followed by "<name> check passed"; ?exclude=<check> (repeatable) counts
// a check as "[+]<check> excluded: ok" and warns about names that match
// no check. path/<check> runs one check ("ok", or 500 with its error), 404
// for an unknown check.
func (h *Health) Handler(path string) http.Handler {
	name, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checks := h.Checks()
		if check, ok := strings.CutPrefix(r.URL.Path, path+"/"); ok {
			for _, c := range checks {
				if c.Name() == check {
					w.Header().Set("Content-Type", "text/plain; charset=utf-8")
					w.Header().Set("X-Content-Type-Options", "nosniff")
					if err := c.Check(r); err != nil {
						http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
						return
					}
					fmt.Fprint(w, "ok")
					return
				}
			}
			http.NotFound(w, r)
			return
		}
		excluded := map[string]bool{}
		for _, n := range r.URL.Query()["exclude"] {
			excluded[n] = true
		}
		var b strings.Builder
		failed := false
		for _, c := range checks {
			if excluded[c.Name()] {
				delete(excluded, c.Name())
				fmt.Fprintf(&b, "[+]%s excluded: ok\n", c.Name())
				continue
			}
			if err := c.Check(r); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.Name())
			} else {
				fmt.Fprintf(&b, "[+]%s ok\n", c.Name())
			}
		}
		if len(excluded) > 0 {
			unmatched := make([]string, 0, len(excluded))
			for n := range excluded {
				unmatched = append(unmatched, n)
			}
			slices.Sort(unmatched)
			for i, n := range unmatched {
				unmatched[i] = strconv.Quote(n)
			}
			fmt.Fprintf(&b, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(unmatched, ","))
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "%s%s check failed\n", b.String(), name)
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			fmt.Fprintf(w, "%s%s check passed\n", b.String(), name)
			return
		}
		fmt.Fprint(w, "ok")
	})
}

// ShutdownCheck is upstream's "shutdown" check (kube-scheduler's
// /readyz): it fails with "process is shutting down" once done is closed.
func ShutdownCheck(done <-chan struct{}) HealthChecker {
	return NamedCheck("shutdown", func(*http.Request) error {
		select {
		case <-done:
			return errors.New("process is shutting down")
		default:
			return nil
		}
	})
}
