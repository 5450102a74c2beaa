package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// forbiddenLog records the requests the server answered 403, from its
// per-request "HTTP" log line (logged at debug level), and passes every
// record the wrapped handler wants on to it.
type forbiddenLog struct {
	next  slog.Handler
	mu    *sync.Mutex
	lines *[]Forbidden
}

// Forbidden is one request the server refused with 403.
type Forbidden struct {
	User, Verb, URI, UserAgent string
}

func (f Forbidden) String() string {
	return fmt.Sprintf("%s %s %s (%s)", f.User, f.Verb, f.URI, f.UserAgent)
}

func newForbiddenLog(next slog.Handler) *forbiddenLog {
	return &forbiddenLog{next: next, mu: &sync.Mutex{}, lines: new([]Forbidden)}
}

func (h *forbiddenLog) Enabled(ctx context.Context, l slog.Level) bool {
	return l == slog.LevelDebug || h.next.Enabled(ctx, l)
}

func (h *forbiddenLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "HTTP" {
		var f Forbidden
		var code int64
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "resp":
				code = a.Value.Int64()
			case "user":
				f.User = a.Value.String()
			case "verb":
				f.Verb = a.Value.String()
			case "URI":
				f.URI = a.Value.String()
			case "userAgent":
				f.UserAgent = a.Value.String()
			}
			return true
		})
		if code == 403 {
			h.mu.Lock()
			*h.lines = append(*h.lines, f)
			h.mu.Unlock()
		}
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *forbiddenLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &forbiddenLog{next: h.next.WithAttrs(as), mu: h.mu, lines: h.lines}
}

func (h *forbiddenLog) WithGroup(name string) slog.Handler {
	return &forbiddenLog{next: h.next.WithGroup(name), mu: h.mu, lines: h.lines}
}

// Forbidden returns the requests the server refused with 403 so far
// (recorded with Config.RBAC only), for tests that check a component works
// with exactly its permissions. A 403 from admission (a create in a
// terminating namespace, a quota) is listed too.
func (env *Environment) Forbidden() []Forbidden {
	if env.forbidden == nil {
		return nil
	}
	env.forbidden.mu.Lock()
	defer env.forbidden.mu.Unlock()
	return append([]Forbidden(nil), *env.forbidden.lines...)
}

// RecordForbidden wraps a server's log handler (the server must log at
// debug level through it: it enables that level) and returns what it
// recorded so far: the requests answered 403, for tests of a server
// testenv does not start (skiff up).
func RecordForbidden(next slog.Handler) (slog.Handler, func() []Forbidden) {
	h := newForbiddenLog(next)
	return h, func() []Forbidden {
		h.mu.Lock()
		defer h.mu.Unlock()
		return append([]Forbidden(nil), *h.lines...)
	}
}
