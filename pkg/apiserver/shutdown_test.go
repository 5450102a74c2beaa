package apiserver_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// gatedKV holds a Create of a key containing gate until release is closed,
// telling entered when one arrives.
type gatedKV struct {
	storage.KV
	gate    string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gatedKV) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if strings.Contains(key, g.gate) {
		g.once.Do(func() { close(g.entered) })
		<-g.release
	}
	return g.KV.Create(ctx, key, value)
}

// TestGracefulShutdown: when the server is told to stop, it stops accepting
// connections, ends open watches cleanly (the stream finishes, the
// connection is not reset), lets an in-flight request finish and answer,
// and only then returns (without error).
func TestGracefulShutdown(t *testing.T) {
	kv := &gatedKV{gate: "/slow", entered: make(chan struct{}), release: make(chan struct{})}
	env, err := testenv.Start(context.Background(), testenv.Config{Tweak: func(c *apiserver.Config) {
		kv.KV = c.KV
		c.KV = kv
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	c := &client{t: t, env: env, hc: env.HTTPClient()}
	ns := c.namespace("shutdown")
	base := env.URL + "/api/v1/namespaces/" + ns + "/configmaps"

	// An open watch.
	resp, err := c.hc.Get(base + "?watch=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	watchEnded := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
		}
		watchEnded <- sc.Err()
	}()

	// An in-flight create, held in storage.
	type answer struct {
		code int
		err  error
	}
	created := make(chan answer, 1)
	go func() {
		resp, err := c.hc.Post(base, "application/json", encodeBody(t, configMap("slow", nil, nil)))
		if err != nil {
			created <- answer{err: err}
			return
		}
		resp.Body.Close()
		created <- answer{code: resp.StatusCode}
	}()
	waitFor(t, kv.entered, "the create to reach storage")

	stopped := make(chan error, 1)
	go func() { stopped <- env.Stop() }()

	// The watch ends cleanly while the create is still held.
	select {
	case err := <-watchEnded:
		if err != nil {
			t.Fatalf("watch stream ended with %v, want a clean end", err)
		}
	case <-timeout():
		t.Fatal("the watch did not end on shutdown")
	}
	// New connections are refused.
	u, _ := url.Parse(env.URL)
	eventually(t, "the listener to close", func() bool {
		conn, err := net.Dial("tcp", u.Host)
		if err == nil {
			conn.Close()
		}
		return err != nil
	})
	select {
	case err := <-stopped:
		t.Fatalf("server stopped (%v) with a request in flight", err)
	default:
	}

	close(kv.release)
	a := <-created
	if a.err != nil || a.code != http.StatusCreated {
		t.Fatalf("in-flight create: %d %v, want 201", a.code, a.err)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Stop: %v", err)
		}
	case <-timeout():
		t.Fatal("the server did not stop after the last request")
	}
}

// timeout bounds a wait on a channel.
func timeout() <-chan time.Time { return time.After(waitTimeout) }

// waitFor waits for ch to be closed, failing the test if it never is.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-timeout():
		t.Fatalf("timed out waiting for %s", what)
	}
}
