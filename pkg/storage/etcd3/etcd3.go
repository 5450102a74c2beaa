package etcd3

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/skiff-sh/skiff/pkg/storage"
)

// KV is a storage.KV over an etcd v3 client.
type KV struct {
	client *clientv3.Client
	// watcher serves Watch and RequestProgress (client unless set apart).
	watcher *clientv3.Client
	// owned is closed with the KV.
	owned bool
}

var _ storage.KV = (*KV)(nil)

// New wraps client. If own is true, Close closes the client.
func New(client *clientv3.Client, own bool) *KV {
	return &KV{client: client, watcher: client, owned: own}
}

// NewEmbedded wraps an embedded member's clients: requests go through the
// in-process client, watches through the gRPC one (see Embedded). Close
// leaves both to the member.
func NewEmbedded(e *Embedded) *KV {
	return &KV{client: e.Client(), watcher: e.watchClient}
}

func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpctypes.ErrCompacted):
		return storage.ErrCompacted
	case errors.Is(err, rpctypes.ErrFutureRev):
		return storage.ErrFutureRev
	}
	return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
}

func toKV(kv *mvccpb.KeyValue) *storage.KeyValue {
	return &storage.KeyValue{Key: string(kv.Key), Value: kv.Value, CreateRev: kv.CreateRevision, ModRev: kv.ModRevision}
}

// Get implements storage.KV.
func (kv *KV) Get(ctx context.Context, key string) (*storage.KeyValue, int64, error) {
	resp, err := kv.client.Get(ctx, key)
	if err != nil {
		return nil, 0, mapErr(err)
	}
	if len(resp.Kvs) == 0 {
		return nil, resp.Header.Revision, nil
	}
	return toKV(resp.Kvs[0]), resp.Header.Revision, nil
}

// List implements storage.KV.
func (kv *KV) List(ctx context.Context, start, end string, limit int64, rev int64) (storage.ListResult, error) {
	opts := []clientv3.OpOption{clientv3.WithRange(end)}
	if limit > 0 {
		opts = append(opts, clientv3.WithLimit(limit))
	}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := kv.client.Get(ctx, start, opts...)
	if err != nil {
		res := storage.ListResult{}
		if errors.Is(err, rpctypes.ErrFutureRev) {
			if r, gerr := kv.client.Get(ctx, start, clientv3.WithCountOnly()); gerr == nil {
				res.Rev = r.Header.Revision
			}
		}
		return res, mapErr(err)
	}
	res := storage.ListResult{More: resp.More, Count: resp.Count, Rev: resp.Header.Revision, KVs: make([]*storage.KeyValue, len(resp.Kvs))}
	if rev > 0 {
		res.Rev = rev
	}
	for i, k := range resp.Kvs {
		res.KVs[i] = toKV(k)
	}
	return res, nil
}

// Count implements storage.KV.
func (kv *KV) Count(ctx context.Context, start, end string) (int64, error) {
	resp, err := kv.client.Get(ctx, start, clientv3.WithRange(end), clientv3.WithCountOnly())
	if err != nil {
		return 0, mapErr(err)
	}
	return resp.Count, nil
}

// Create implements storage.KV.
func (kv *KV) Create(ctx context.Context, key string, value []byte) (int64, error) {
	resp, err := kv.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return 0, mapErr(err)
	}
	if !resp.Succeeded {
		return 0, storage.ErrKeyExists
	}
	return resp.Header.Revision, nil
}

// Update implements storage.KV.
func (kv *KV) Update(ctx context.Context, key string, value []byte, modRev int64) (int64, *storage.KeyValue, error) {
	resp, err := kv.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpPut(key, string(value))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, nil, mapErr(err)
	}
	if !resp.Succeeded {
		return 0, current(resp), storage.ErrConflict
	}
	return resp.Header.Revision, nil, nil
}

// Delete implements storage.KV.
func (kv *KV) Delete(ctx context.Context, key string, modRev int64) (int64, *storage.KeyValue, error) {
	resp, err := kv.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, nil, mapErr(err)
	}
	if !resp.Succeeded {
		return 0, current(resp), storage.ErrConflict
	}
	return resp.Header.Revision, nil, nil
}

// current extracts the Else-branch Get of a failed transaction.
func current(resp *clientv3.TxnResponse) *storage.KeyValue {
	if len(resp.Responses) == 0 {
		return nil
	}
	get := resp.Responses[0].GetResponseRange()
	if get == nil || len(get.Kvs) == 0 {
		return nil
	}
	return toKV(get.Kvs[0])
}

// Compact implements storage.KV.
func (kv *KV) Compact(ctx context.Context, rev int64) error {
	_, err := kv.client.Compact(ctx, rev)
	return mapErr(err)
}

// RequestProgress implements storage.KV.
func (kv *KV) RequestProgress(ctx context.Context) error {
	// Watches run under WithRequireLeader; the progress request must name
	// the same stream.
	return mapErr(kv.watcher.RequestProgress(clientv3.WithRequireLeader(ctx)))
}

// Close implements storage.KV.
func (kv *KV) Close() error {
	if kv.owned {
		return kv.client.Close()
	}
	return nil
}

// Watch implements storage.KV.
func (kv *KV) Watch(ctx context.Context, prefix string, rev int64, progressNotify bool) <-chan storage.WatchResponse {
	out := make(chan storage.WatchResponse, 16)
	go func() {
		defer close(out)
		ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		defer cancel()
		opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithPrevKV()}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev+1))
		}
		if progressNotify {
			opts = append(opts, clientv3.WithProgressNotify())
		}
		send := func(r storage.WatchResponse) bool {
			select {
			case out <- r:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for wr := range kv.watcher.Watch(ctx, prefix, opts...) {
			if err := wr.Err(); err != nil {
				if errors.Is(err, rpctypes.ErrCompacted) {
					send(storage.WatchResponse{Err: storage.ErrCompacted, Revision: wr.CompactRevision})
				} else if ctx.Err() == nil {
					send(storage.WatchResponse{Err: mapErr(err)})
				}
				return
			}
			if wr.IsProgressNotify() {
				if !send(storage.WatchResponse{Progress: true, Revision: wr.Header.Revision}) {
					return
				}
				continue
			}
			if len(wr.Events) == 0 {
				continue
			}
			evs := make([]storage.Event, 0, len(wr.Events))
			for _, e := range wr.Events {
				ev := storage.Event{Key: string(e.Kv.Key), Rev: e.Kv.ModRevision}
				if e.PrevKv != nil {
					ev.PrevValue = e.PrevKv.Value
				}
				if e.Type == clientv3.EventTypeDelete {
					ev.Type = storage.EventDelete
				} else {
					ev.Type, ev.Value, ev.Created = storage.EventPut, e.Kv.Value, e.IsCreate()
				}
				evs = append(evs, ev)
			}
			if !send(storage.WatchResponse{Events: evs, Revision: evs[len(evs)-1].Rev}) {
				return
			}
		}
		// The client closed the channel without an error: ctx ended or the
		// client is closing.
		if ctx.Err() == nil {
			send(storage.WatchResponse{Err: storage.ErrUnavailable})
		}
	}()
	return out
}
