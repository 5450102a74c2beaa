package etcd3

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/storage/storagetest"
)

func TestConformance(t *testing.T) {
	e, err := StartEmbedded(context.Background(), EmbeddedConfig{Dir: t.TempDir(), UnsafeNoFsync: true, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	n := 0
	storagetest.Run(t, func(t *testing.T) storage.KV {
		// Each test gets its own key space in the one member: wipe it first.
		n++
		c := e.Client()
		if _, err := c.Delete(context.Background(), "/registry/", withPrefix()); err != nil {
			t.Fatal(err)
		}
		return NewEmbedded(e)
	})
}

func withPrefix() clientv3.OpOption { return clientv3.WithPrefix() }
