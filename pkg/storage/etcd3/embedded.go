package etcd3

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// EmbeddedConfig configures an etcd server inside this process.
type EmbeddedConfig struct {
	// Dir holds etcd's data (member/snap, member/wal).
	Dir string
	// ClientURL and PeerURL are the addresses etcd listens on; empty means
	// unix sockets in Dir (client.sock, peer.sock), reachable only by the
	// user running skiff.
	ClientURL, PeerURL string
	// UnsafeNoFsync trades durability for speed (tests only).
	UnsafeNoFsync bool
	// LogLevel is etcd's zap level ("error" by default).
	LogLevel string
}

// Embedded is a running in-process etcd member.
type Embedded struct {
	etcd        *embed.Etcd
	client      *clientv3.Client // in-process
	watchClient *clientv3.Client // gRPC over the client listener
	level       zap.AtomicLevel
}

// StartEmbedded starts a single-member etcd cluster in Dir (creating it or
// reopening the data already there) and waits until it serves.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	ec := embed.NewConfig()
	ec.Name = "skiff"
	ec.Dir = cfg.Dir
	ec.Logger = "zap"
	ec.LogLevel = cfg.LogLevel
	if ec.LogLevel == "" {
		ec.LogLevel = "error"
	}
	ec.LogOutputs = []string{"stderr"}
	// Our own zap logger, so that Close can silence the errors etcd logs
	// about its listeners closing during a normal shutdown.
	level, err := zap.ParseAtomicLevel(ec.LogLevel)
	if err != nil {
		return nil, fmt.Errorf("etcd log level: %w", err)
	}
	zcfg := zap.NewProductionConfig()
	zcfg.Level = level
	zcfg.OutputPaths, zcfg.ErrorOutputPaths = []string{"stderr"}, []string{"stderr"}
	zcfg.Sampling = nil
	lg, err := zcfg.Build(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return benignFilter{c} }))
	if err != nil {
		return nil, err
	}
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	ec.UnsafeNoFsync = cfg.UnsafeNoFsync
	// Keep the in-memory raft log small: skiff's objects live in the API
	// server's watch cache as well.
	ec.SnapshotCount = 5000
	ec.SnapshotCatchUpEntries = 1000
	ec.QuotaBackendBytes = 8 << 30
	ec.MaxRequestBytes = 4 << 20
	ec.WatchProgressNotifyInterval = 5 * time.Second
	// A single member elects itself: short ticks make that (and start-up) fast.
	ec.TickMs = 10
	ec.ElectionMs = 100
	// By default the member listens on unix sockets in Dir (made 0700), not
	// on TCP: skiff reaches it in-process, and a loopback port would let any
	// local user read every object, Secrets included, past the API server's
	// authentication.
	clientURL, peerURL := cfg.ClientURL, cfg.PeerURL
	if clientURL == "" || peerURL == "" {
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return nil, err
		}
		if err := os.Chmod(cfg.Dir, 0o700); err != nil {
			return nil, err
		}
	}
	if clientURL == "" {
		clientURL = "unix://" + filepath.Join(cfg.Dir, "client.sock")
	}
	if peerURL == "" {
		peerURL = "unix://" + filepath.Join(cfg.Dir, "peer.sock")
	}
	cu, err := url.Parse(clientURL)
	if err != nil {
		return nil, fmt.Errorf("etcd client URL: %w", err)
	}
	pu, err := url.Parse(peerURL)
	if err != nil {
		return nil, fmt.Errorf("etcd peer URL: %w", err)
	}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)

	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd did not become ready in 60s")
	}
	// Watches use a gRPC client over the member's own (unix socket)
	// listener: etcd's in-process client can deadlock when many watches are
	// cancelled at once (etcd-io/etcd#18879), as every watch cache's are at
	// shutdown or after an etcd hiccup. Requests keep the in-process client,
	// which costs less CPU and memory per write.
	watchClient, err := NewClient([]string{e.Config().AdvertiseClientUrls[0].String()}, 10*time.Second)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("connecting to the embedded etcd: %w", err)
	}
	return &Embedded{etcd: e, client: v3client.New(e.Server), watchClient: watchClient, level: level}, nil
}

// Client is an in-process client of the member (no network hop).
func (e *Embedded) Client() *clientv3.Client { return e.client }

// ClientURL is where external etcd clients can reach the member.
func (e *Embedded) ClientURL() string { return e.etcd.Config().AdvertiseClientUrls[0].String() }

// Close stops the member after in-flight requests finish.
func (e *Embedded) Close() {
	e.level.SetLevel(zap.FatalLevel)
	e.watchClient.Close()
	e.client.Close()
	e.etcd.Close()
}

// benignFilter drops the one error etcd logs on every fresh single-member
// start: its storage-version monitor runs before the first raft term is
// persisted, fails with "missing term information", and succeeds on its
// next round. Everything else passes through.
type benignFilter struct{ zapcore.Core }

func (c benignFilter) With(fs []zapcore.Field) zapcore.Core { return benignFilter{c.Core.With(fs)} }

func (c benignFilter) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c benignFilter) Write(e zapcore.Entry, fs []zapcore.Field) error {
	if isBenign(e, fs) {
		return nil
	}
	return c.Core.Write(e, fs)
}

// isBenign reports whether an etcd log entry is the known start-up noise.
func isBenign(e zapcore.Entry, fs []zapcore.Field) bool {
	if e.Message != "failed to update storage version" {
		return false
	}
	for _, f := range fs {
		if err, ok := f.Interface.(error); ok && f.Type == zapcore.ErrorType && strings.Contains(err.Error(), "missing term information") {
			return true
		}
	}
	return false
}

// NewClient connects to an external etcd cluster.
func NewClient(endpoints []string, dialTimeout time.Duration) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:          endpoints,
		DialTimeout:        dialTimeout,
		MaxCallSendMsgSize: 4 << 20,
	})
}
