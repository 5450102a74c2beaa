package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/image"
	"github.com/skiff-sh/skiff/pkg/kubelet/remote"
)

// Config configures a supervised containerd.
type Config struct {
	// Dir holds config.toml, root/, state/, containerd.sock and
	// containerd.log (LayoutOf); required. Its socket path must fit a
	// unix socket address (108 bytes with ".ttrpc").
	Dir string
	// Binary is the containerd executable (default: containerd on PATH).
	Binary string
	// SandboxImage is the CRI plugin's pod sandbox image (default
	// SandboxImage).
	SandboxImage string
	// CNIBinDirs are searched for CNI plugins (default /usr/lib/cni,
	// Debian's, and /opt/cni/bin, upstream's; those that exist).
	CNIBinDirs []string
	// CNIConfDir holds the CNI network configuration (default
	// <Dir>/../cni/net.d: <data-dir>/cni/net.d when Dir is
	// <data-dir>/containerd).
	CNIConfDir string
	// Snapshotter is the CRI plugin's snapshotter; "" chooses overlayfs
	// when an overlay mount works under Dir, native otherwise.
	Snapshotter string
	// StartTimeout bounds how long a start may take until the CRI socket
	// answers Version (default 1 min).
	StartTimeout time.Duration
	// StopTimeout is how long containerd gets after SIGTERM before
	// SIGKILL (default 10 s).
	StopTimeout time.Duration
	// Images are imported, those containerd does not have yet, after
	// every start and before Ready (skiff up: the pod sandbox image,
	// image.PauseImage; nothing can be pulled). A failed import fails the
	// first start; after a restart it is logged.
	Images []image.Image
	// RemovePodsOnStop stops and removes every pod sandbox (and so every
	// container and its shim) through CRI before containerd is stopped;
	// otherwise containers keep running, as they do across a containerd
	// restart.
	RemovePodsOnStop bool
	Clock            clock.Clock
	Logger           *slog.Logger
}

// Supervisor runs one containerd: it writes its configuration, starts it,
// restarts it with back-off when it exits, and stops it when Run's
// context ends.
type Supervisor struct {
	cfg         Config
	layout      Layout
	log         *slog.Logger
	clock       clock.Clock
	snapshotter string

	ready     chan struct{} // closed once the CRI socket first answered
	readyOnce sync.Once
	done      chan struct{} // closed when Run returns
	mu        sync.Mutex
	runErr    error
	version   *runtimeapi.VersionResponse
	pid       int
}

// Restart back-off: 1 s doubling to 30 s, reset after a minute up.
const (
	initialBackoff = time.Second
	maxBackoff     = 30 * time.Second
	resetBackoff   = time.Minute
)

// New checks cfg and returns a Supervisor; Run starts containerd.
func New(cfg Config) (*Supervisor, error) {
	if cfg.Dir == "" {
		return nil, errors.New("containerd: Config.Dir is required")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.Dir = dir
	l := LayoutOf(dir)
	if n := len(l.Socket + ".ttrpc"); n > 107 {
		return nil, fmt.Errorf("containerd: socket path %s.ttrpc is %d bytes, longer than a unix socket address allows (107): use a shorter directory", l.Socket, n)
	}
	if cfg.Binary == "" {
		cfg.Binary = "containerd"
	}
	if cfg.SandboxImage == "" {
		cfg.SandboxImage = SandboxImage
	}
	if cfg.CNIBinDirs == nil {
		cfg.CNIBinDirs = []string{"/usr/lib/cni", "/opt/cni/bin"}
	}
	if cfg.CNIConfDir == "" {
		cfg.CNIConfDir = filepath.Join(filepath.Dir(dir), "cni", "net.d")
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = time.Minute
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Supervisor{cfg: cfg, layout: l, log: cfg.Logger.With("component", "containerd"), clock: cfg.Clock,
		ready: make(chan struct{}), done: make(chan struct{})}, nil
}

// Layout is where this containerd keeps its files.
func (s *Supervisor) Layout() Layout { return s.layout }

// Socket is the containerd (and CRI) socket path.
func (s *Supervisor) Socket() string { return s.layout.Socket }

// Endpoint is the CRI endpoint ("unix://" + Socket()), as the kubelet's
// --container-runtime-endpoint takes it.
func (s *Supervisor) Endpoint() string { return "unix://" + s.layout.Socket }

// Ready is closed once containerd first answered CRI Version.
func (s *Supervisor) Ready() <-chan struct{} { return s.ready }

// Snapshotter is the snapshotter configured (known once Run wrote the
// configuration).
func (s *Supervisor) Snapshotter() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotter
}

// Pid is the process id of the running containerd (0 before the first
// start).
func (s *Supervisor) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// Version is what containerd answered to CRI Version (nil before Ready).
func (s *Supervisor) Version() *runtimeapi.VersionResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// WaitReady waits until containerd answers, Run ended before that (its
// error), or ctx ends.
func (s *Supervisor) WaitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.runErr != nil {
			return s.runErr
		}
		return errors.New("containerd: stopped before it was ready")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run writes the configuration and runs containerd until ctx ends, then
// stops it (SIGTERM, SIGKILL after StopTimeout) and returns nil. It
// returns an error when containerd cannot be started at all (no binary,
// unwritable directory) or its first start does not answer within
// StartTimeout; later exits are restarted with back-off (1 s doubling to
// 30 s).
func (s *Supervisor) Run(ctx context.Context) (err error) {
	defer func() {
		s.mu.Lock()
		s.runErr = err
		s.mu.Unlock()
		close(s.done)
	}()
	bin, err := exec.LookPath(s.cfg.Binary)
	if err != nil {
		return fmt.Errorf("containerd: %w", err)
	}
	// Another containerd serving this directory (a skiff killed without
	// stopping its containerd) would hold its database: say so at once
	// instead of timing out.
	if v := s.answering(ctx); v != nil {
		return fmt.Errorf("containerd: a containerd (%s %s) already serves %s; stop it first", v.RuntimeName, v.RuntimeVersion, s.layout.Socket)
	}
	if err := s.writeConfig(); err != nil {
		return err
	}
	rotateLog(s.layout.Log)
	backoff := initialBackoff
	for first := true; ; first = false {
		started := s.clock.Now()
		exited, err := s.runOnce(ctx, bin, first)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if s.clock.Since(started) >= resetBackoff {
			backoff = initialBackoff
		}
		s.log.Warn("containerd exited; restarting", "err", exited, "in", backoff, "log", s.layout.Log)
		select {
		case <-ctx.Done():
			return nil
		case <-s.clock.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

func (s *Supervisor) writeConfig() error {
	l := s.layout
	for _, d := range []string{l.Dir, l.Root, l.State, s.cfg.CNIConfDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("containerd: %w", err)
		}
	}
	snap := s.cfg.Snapshotter
	if snap == "" {
		snap = "native"
		if overlaySupported(l.Dir) {
			snap = "overlayfs"
		} else {
			s.log.Info("overlay mounts do not work here; using the native snapshotter (full copies)", "dir", l.Dir)
		}
	}
	bins, err := cniBinDir(l, s.cfg.CNIBinDirs)
	if err != nil {
		return fmt.Errorf("containerd: CNI plugin directory: %w", err)
	}
	s.mu.Lock()
	s.snapshotter = snap
	s.mu.Unlock()
	if err := os.WriteFile(l.Config, []byte(configFile(l, s.cfg, bins, snap)), 0o600); err != nil {
		return fmt.Errorf("containerd: %w", err)
	}
	return nil
}

// runOnce starts containerd and waits until it exits (exited: why) or ctx
// ends (then stops it). err is set when the first start fails for good.
func (s *Supervisor) runOnce(ctx context.Context, bin string, first bool) (exited, err error) {
	logf, err := os.OpenFile(s.layout.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("containerd: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--config", s.layout.Config)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = s.layout.Dir
	// Its own process group (a terminal's ^C reaches skiff, which stops
	// containerd in order), and SIGTERM when skiff dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		if first {
			return nil, fmt.Errorf("containerd: start %s: %w", bin, err)
		}
		return err, nil
	}
	s.mu.Lock()
	s.pid = cmd.Process.Pid
	s.mu.Unlock()
	s.log.Info("containerd started", "pid", cmd.Process.Pid, "config", s.layout.Config, "socket", s.layout.Socket, "log", s.layout.Log)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	answered := make(chan *runtimeapi.VersionResponse, 1)
	probeCtx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	go func() {
		if v := s.probe(probeCtx); v != nil {
			answered <- v
		}
	}()
	var startTimeout <-chan time.Time
	if first {
		startTimeout = s.clock.After(s.cfg.StartTimeout)
	}
	for {
		select {
		case v := <-answered:
			startTimeout = nil
			if names, err := EnsureImages(ctx, s.layout.Socket, s.layout.Dir, s.cfg.Images...); err != nil {
				if ctx.Err() != nil {
					continue // stopping: the next round stops containerd
				}
				if first && !isClosed(s.ready) {
					s.stop(cmd, waited)
					return nil, fmt.Errorf("containerd: importing images: %w", err)
				}
				s.log.Error("importing images after a restart", "err", err)
			} else if len(names) > 0 {
				s.log.Info("images imported", "images", names)
			}
			s.mu.Lock()
			s.version = v
			s.mu.Unlock()
			s.readyOnce.Do(func() {
				s.log.Info("containerd ready", "version", v.RuntimeVersion, "cri", v.RuntimeApiVersion, "snapshotter", s.Snapshotter())
				close(s.ready)
			})
		case werr := <-waited:
			if werr == nil {
				werr = errors.New("exit status 0")
			}
			if first && !isClosed(s.ready) {
				return nil, fmt.Errorf("containerd exited before it answered (%v); see %s", werr, s.layout.Log)
			}
			return werr, nil
		case <-startTimeout:
			s.stop(cmd, waited)
			return nil, fmt.Errorf("containerd did not answer on %s within %v; see %s", s.layout.Socket, s.cfg.StartTimeout, s.layout.Log)
		case <-ctx.Done():
			if s.cfg.RemovePodsOnStop && isClosed(s.ready) {
				s.removePods()
			}
			s.stop(cmd, waited)
			return nil, nil
		}
	}
}

// answering is what a runtime already answering on the socket says (nil:
// none answers within a second).
func (s *Supervisor) answering(ctx context.Context) *runtimeapi.VersionResponse {
	if _, err := os.Stat(s.layout.Socket); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := remote.Dial(ctx, s.layout.Socket)
	if err != nil {
		return nil
	}
	defer c.Close()
	v, err := c.Version(ctx, &runtimeapi.VersionRequest{Version: "v1"})
	if err != nil {
		return nil
	}
	return v
}

// maxLogSize: a containerd.log larger than this at start is moved to
// containerd.log.1 (replacing the previous one).
const maxLogSize = 10 << 20

func rotateLog(path string) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogSize {
		_ = os.Rename(path, path+".1")
	}
}

// probe dials the CRI socket until it answers Version or ctx ends.
func (s *Supervisor) probe(ctx context.Context) *runtimeapi.VersionResponse {
	for {
		if _, err := os.Stat(s.layout.Socket); err == nil {
			dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			c, err := remote.Dial(dctx, s.layout.Socket)
			cancel()
			if err == nil {
				v, err := c.Version(ctx, &runtimeapi.VersionRequest{Version: "v1"})
				c.Close()
				if err == nil {
					return v
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.clock.After(100 * time.Millisecond):
		}
	}
}

// removePods stops and removes every pod sandbox (their containers and
// shims go with them), within StopTimeout plus a minute.
func (s *Supervisor) removePods() {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StopTimeout+time.Minute)
	defer cancel()
	c, err := remote.Dial(ctx, s.layout.Socket)
	if err != nil {
		s.log.Warn("cannot remove pods before stopping containerd", "err", err)
		return
	}
	defer c.Close()
	list, err := c.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		s.log.Warn("cannot remove pods before stopping containerd", "err", err)
		return
	}
	for _, sb := range list.Items {
		if _, err := c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			s.log.Warn("stop pod sandbox", "id", sb.Id, "err", err)
		}
		if _, err := c.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			s.log.Warn("remove pod sandbox", "id", sb.Id, "err", err)
		}
	}
	if len(list.Items) > 0 {
		s.log.Info("removed pod sandboxes before stopping containerd", "count", len(list.Items))
	}
}

// stop sends SIGTERM, then SIGKILL after StopTimeout, and waits.
func (s *Supervisor) stop(cmd *exec.Cmd, waited <-chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-waited:
	case <-s.clock.After(s.cfg.StopTimeout):
		s.log.Warn("containerd did not stop after SIGTERM; killing it", "pid", cmd.Process.Pid)
		_ = cmd.Process.Kill()
		<-waited
	}
	s.log.Info("containerd stopped", "pid", cmd.Process.Pid)
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Available says why a supervised containerd cannot run on this machine
// (nil: it can): containerd, runc and ctr must be on PATH (Debian:
// apt-get install containerd runc) and the process must be root (no
// rootless containerd). skiff up falls back to the simulated runtime on an
// error.
func Available() error {
	for _, bin := range []string{"containerd", "runc", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s is not installed (apt-get install containerd runc)", bin)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("containerd needs root (skiff runs as an unprivileged user)")
	}
	return nil
}
