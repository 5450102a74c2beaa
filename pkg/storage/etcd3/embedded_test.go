package etcd3

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEmbeddedListensOnPrivateSockets: by default the member serves its
// client API on a unix socket in its data directory, which only the owner
// can enter, and an external client reaches it there.
func TestEmbeddedListensOnPrivateSockets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	e, err := StartEmbedded(context.Background(), EmbeddedConfig{Dir: dir, UnsafeNoFsync: true, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if u := e.ClientURL(); !strings.HasPrefix(u, "unix://"+dir+"/") {
		t.Fatalf("ClientURL = %q, want a unix socket in %s", u, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v, want 0700", fi.Mode().Perm())
	}
	c, err := NewClient([]string{e.ClientURL()}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, "/probe", "x"); err != nil {
		t.Fatalf("put through the socket: %v", err)
	}
}
