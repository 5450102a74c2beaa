package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"runtime/debug"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/registry"
)

type ctxKey int

const (
	requestInfoKey ctxKey = iota
	userKey
)

// publicPaths answer without credentials.
func isPublicPath(p string) bool {
	switch {
	case p == "/healthz", p == "/livez", p == "/readyz", p == "/version":
		return true
	case hasPrefixAny(p, "/healthz/", "/livez/", "/readyz/"):
		return true
	}
	return false
}

// statusRecorder remembers the response code for metrics and logs.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// buildHandlerChain wraps the router in the filters every request passes, in
// upstream's order: panic recovery, request info, metrics, authentication,
// impersonation, in-flight limit, timeout, authorization.
func (s *Server) buildHandlerChain() http.Handler {
	router := http.HandlerFunc(s.route)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.active.begin()
		defer s.active.end()
		start := s.cfg.Clock.Now()
		rec := &statusRecorder{ResponseWriter: w}
		info := parseRequestInfo(r)
		var userName string
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.cfg.Logger.Error("panic serving request", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				if rec.code == 0 {
					s.writeError(rec, r, apierrors.NewInternalError(fmt.Errorf("%v", p)))
				}
			}
			latency := s.cfg.Clock.Since(start)
			s.metrics.observe(info, rec.code, latency)
			s.logRequest(r, rec.code, latency, userName)
		}()
		ctx := context.WithValue(r.Context(), requestInfoKey, info)
		r = r.WithContext(ctx)

		user, err := s.authenticate(r)
		// Without anonymous authentication the health and version paths
		// stay open to anyone, unauthorized (they were before skiff
		// authorized requests); with it they are authorized like every
		// path (upstream's system:public-info-viewer grants them).
		public := err != nil && !s.cfg.AnonymousAuth && isPublicPath(r.URL.Path)
		if public {
			user, err = anonymousUser, nil
		}
		if err != nil {
			s.writeError(rec, r, err)
			return
		}
		if user, err = s.impersonate(r.Context(), r, user); err != nil {
			s.writeAuthzError(rec, r, err)
			return
		}
		s.notePriority(rec, info, user)
		ui := user.userInfo()
		ctx = context.WithValue(r.Context(), userKey, user)
		ctx = registry.WithUser(ctx, ui)
		r = r.WithContext(ctx)
		userName = user.Name

		longRunning := info.Verb == "watch" || (info.IsResourceRequest && info.Subresource != "" && isLongRunningSubresource(info.Subresource))
		if !longRunning {
			limit := s.inflight
			if info.Verb == "create" || info.Verb == "update" || info.Verb == "patch" || info.Verb == "delete" || info.Verb == "deletecollection" {
				limit = s.inflightMutating
			}
			select {
			case limit <- struct{}{}:
				defer func() { <-limit }()
			default:
				s.writeError(rec, r, apierrors.NewTooManyRequests("Too many requests, please try again later.", 1))
				return
			}
			timeout := s.cfg.RequestTimeout
			if t := r.URL.Query().Get("timeout"); t != "" {
				if d, err := time.ParseDuration(t); err == nil && d > 0 && d < timeout {
					timeout = d
				}
			}
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		if s.authorizer != nil && !public {
			if err := s.authorize(r.Context(), requestAttributes(r, info, ui)); err != nil {
				s.writeAuthzError(rec, r, err)
				return
			}
		}
		router.ServeHTTP(rec, r)
	})
}

// logRequest writes one line per request at debug level (skiff -v 2), as
// upstream's httplog does at -v 3.
func (s *Server) logRequest(r *http.Request, code int, latency time.Duration, user string) {
	if !s.cfg.Logger.Enabled(r.Context(), slog.LevelDebug) {
		return
	}
	s.cfg.Logger.LogAttrs(r.Context(), slog.LevelDebug, "HTTP",
		slog.String("verb", r.Method), slog.String("URI", r.URL.RequestURI()), slog.Duration("latency", latency),
		slog.String("userAgent", r.UserAgent()), slog.String("user", user), slog.String("srcIP", r.RemoteAddr), slog.Int("resp", code))
}

func isLongRunningSubresource(sub string) bool {
	switch sub {
	case "exec", "attach", "portforward", "proxy", "log":
		return true
	}
	return false
}

// timeoutError maps a request context that ran out to upstream's 504.
func timeoutError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
	}
	return err
}

// route dispatches a request by path.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/healthz" || p == "/livez" || p == "/readyz" || hasPrefixAny(p, "/healthz/", "/livez/", "/readyz/"):
		s.serveHealth(w, r)
	case p == "/version" || p == "/version/":
		s.serveVersion(w, r)
	case p == "/metrics":
		s.metrics.ServeHTTP(w, r)
	case s.cfg.Profiling && strings.HasPrefix(p, "/debug/pprof/"):
		servePprof(w, r)
	case p == "/openapi/v2" || strings.HasPrefix(p, "/openapi/v3"):
		s.openapi.ServeHTTP(w, r)
	case p == "/api" || p == "/api/" || p == "/apis" || p == "/apis/":
		s.serveDiscoveryRoot(w, r)
	case p == "/":
		s.serveRootPaths(w, r)
	default:
		if rem := s.agg.lookup(p); rem != nil {
			s.serveAggregated(w, r, rem)
			return
		}
		info := r.Context().Value(requestInfoKey).(*RequestInfo)
		if !info.IsResourceRequest {
			if info.APIPrefix != "" && s.serveGroupDiscovery(w, r, info) {
				return
			}
			s.writeError(w, r, pageNotFound())
			return
		}
		s.serveResource(w, r, info)
	}
}

// pageNotFound is upstream's answer for an unknown path.
func pageNotFound() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}

// methodNotSupported is the 405 for a verb a resource lacks.
func methodNotSupported(gr schema.GroupResource, verb string) error {
	return apierrors.NewMethodNotSupported(gr, verb)
}

// servePprof serves Go's runtime profiles, as upstream's --profiling.
func servePprof(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, "/debug/pprof/") {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r) // the index and the named profiles (heap, goroutine, ...)
	}
}
