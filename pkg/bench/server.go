package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skiff-sh/skiff/pkg/cluster"
)

// server is a `skiff up` child process.
type server struct {
	cmd     *exec.Cmd
	dir     string
	logPath string
	client  *Client
	exited  chan struct{}
	waitErr error
}

// freePort asks the kernel for an unused loopback TCP port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startServer spawns `<command> up` on a fresh data directory dir and
// waits for the first 200 from GET /readyz; it returns the time from
// spawn to that answer.
func startServer(ctx context.Context, cfg *Config, dir, storage string) (*server, time.Duration, error) {
	port, err := freePort()
	if err != nil {
		return nil, 0, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, 0, err
	}
	logPath := dir + ".log"
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, 0, err
	}
	defer logf.Close()
	args := append(append([]string(nil), cfg.Command[1:]...),
		"up", "--data-dir", dir, "--secure-port", strconv.Itoa(port), "--storage", storage,
		// The API server alone, as the figures in docs/benchmarks.md and
		// upstream's kube-apiserver beside them: the controller manager's
		// informers and reactions to 10,000 pods would count otherwise.
		"--disable", strings.Join(cluster.Components, ","))
	args = append(args, profileArgs(cfg.CPUProfile)...)
	if cfg.CreateAs == "serviceaccount" || cfg.CreateAs == "both" {
		args = append(args, "--authorization-mode=Node,RBAC")
	}
	cmd := exec.Command(cfg.Command[0], args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	s := &server{cmd: cmd, dir: dir, logPath: logPath, exited: make(chan struct{})}

	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	deadline := time.NewTimer(cfg.StartTimeout)
	defer deadline.Stop()
	kcPath := filepath.Join(dir, "kubeconfig")
	for {
		if s.client == nil {
			if _, err := os.Stat(kcPath); err == nil {
				if c, err := ClientFromKubeconfig(kcPath); err == nil {
					c.serverPID = cmd.Process.Pid
					s.client = c
				}
			}
		}
		if s.client != nil {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			ok := s.client.Ready(rctx)
			cancel()
			if ok {
				return s, time.Since(t0), nil
			}
		}
		select {
		case <-s.exited:
			return nil, 0, fmt.Errorf("server exited before ready (%v): %s", s.waitErr, s.logTail())
		case <-deadline.C:
			s.stop()
			return nil, 0, fmt.Errorf("server not ready after %v: %s", cfg.StartTimeout, s.logTail())
		case <-ctx.Done():
			s.stop()
			return nil, 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM, waits for the process (killing it after 15 s) and
// drops the client's connections.
func (s *server) stop() {
	if s.client != nil {
		s.client.Close()
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return "(no output)"
	}
	return string(b)
}

// Memory is a process's resident set size, in bytes.
type memory struct {
	RSS  uint64 // VmRSS
	Peak uint64 // VmHWM
}

// readMemory reads VmRSS and VmHWM from /proc/<pid>/status.
func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch k {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.Peak
		default:
			continue
		}
		fields := strings.Fields(v)
		if len(fields) != 2 || fields[1] != "kB" {
			return m, fmt.Errorf("/proc/%d/status: unexpected %s line %q", pid, k, v)
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return m, err
		}
		*dst = n << 10
	}
	if m.RSS == 0 {
		return m, errors.New("no VmRSS in /proc status")
	}
	return m, sc.Err()
}
