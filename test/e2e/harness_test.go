// Package e2e builds the real skiff binary, runs `skiff up` as a separate
// process and drives the real kubectl binaries against it, asserting on
// what kubectl prints. Expected outputs are those of kubectl against an
// upstream Kubernetes 1.37 API server.
//
// Layout:
//   - harness_test.go: TestMain (build, kubectl discovery), the cluster
//     process wrapper and the kubectl/assertion helpers;
//   - kubectl_test.go, kubectl_more_test.go: the full kubectl suite
//     (newest kubectl) on one shared cluster, each subtest in its own
//     namespace;
//   - lifecycle_test.go: restart persistence, --storage=memory, `skiff version`;
//   - compat_test.go: a smoke subset with the oldest kubectl.
//
// Run with `go test ./test/e2e` (about 25 s on 2 cores; -short skips it).
//
// Environment:
//   - SKIFF_E2E_KUBECTL_DIR: directory holding kubectl.1.NN binaries
//     (default: the directory of the resolved `kubectl` on PATH);
//   - SKIFF_E2E_KEEP=1: keep the temporary directory (data dirs, logs).
package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// commandTimeout bounds every kubectl invocation unless a test asks
	// for more (namespace deletion, waits).
	commandTimeout = 30 * time.Second
	// readyTimeout bounds the wait for /readyz after starting skiff.
	readyTimeout = 60 * time.Second
	// stopTimeout is how long skiff may take to exit after SIGINT.
	stopTimeout = 30 * time.Second
)

var (
	workDir       string // temporary root for this run
	skiffBin      string // freshly built binary
	kubectlNewest string // full suite
	kubectlOldest string // smoke subset
	kubectlHome   string // HOME for kubectl (isolated discovery cache)

	sharedOnce    sync.Once
	sharedCluster *cluster
	sharedErr     error
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		fmt.Fprintln(os.Stderr, "e2e: skipped in -short mode (builds skiff and runs real kubectl)")
		return 0
	}
	var err error
	kubectlNewest, kubectlOldest, err = findKubectls()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: FAIL:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: kubectl newest=%s oldest=%s\n", kubectlNewest, kubectlOldest)

	workDir, err = os.MkdirTemp("", "skiff-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if os.Getenv("SKIFF_E2E_KEEP") == "" {
		defer os.RemoveAll(workDir)
	} else {
		fmt.Fprintln(os.Stderr, "e2e: keeping", workDir)
	}
	kubectlHome = filepath.Join(workDir, "home")
	if err := os.MkdirAll(kubectlHome, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}

	// Build the binary from the module root (two levels up) so every run
	// picks up the current tree.
	skiffBin = filepath.Join(workDir, "skiff")
	build := exec.Command("go", "build", "-o", skiffBin, "./cmd/skiff")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/skiff failed: %v\n%s", err, out)
		return 1
	}

	code := m.Run()

	if sharedCluster != nil {
		if err := sharedCluster.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: FAIL: stopping the shared cluster:", err)
			code = 1
		}
		if code != 0 {
			fmt.Fprintf(os.Stderr, "e2e: shared skiff output:\n%s\n", sharedCluster.logs())
		}
	}
	return code
}

// findKubectls returns the newest and the oldest versioned kubectl
// (kubectl.1.NN) next to the real `kubectl` on PATH (which is a
// dispatcher), or kubectl itself for both when there are none.
func findKubectls() (newest, oldest string, err error) {
	dir := os.Getenv("SKIFF_E2E_KUBECTL_DIR")
	var plain string
	if dir == "" {
		p, err := exec.LookPath("kubectl")
		if err != nil {
			return "", "", errors.New("no kubectl on PATH (CI must install kubectl 1.27…1.33; set SKIFF_E2E_KUBECTL_DIR to override)")
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", "", fmt.Errorf("resolving %s: %w", p, err)
		}
		dir, plain = filepath.Dir(real), real
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", "", err
	}
	re := regexp.MustCompile(`^kubectl\.1\.(\d+)$`)
	type kv struct {
		minor int
		path  string
	}
	var found []kv
	for _, e := range entries {
		m := re.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		minor, _ := strconv.Atoi(m[1])
		found = append(found, kv{minor, filepath.Join(dir, e.Name())})
	}
	if len(found) == 0 {
		if plain == "" {
			return "", "", fmt.Errorf("no kubectl.1.NN binaries in %s", dir)
		}
		return plain, plain, nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].minor < found[j].minor })
	return found[len(found)-1].path, found[0].path, nil
}

// ---------------------------------------------------------------------------
// The skiff process.

type cluster struct {
	dataDir    string
	storage    string
	port       int
	kubeconfig string
	extraArgs  []string // more `skiff up` flags

	mu   sync.Mutex
	out  bytes.Buffer // skiff's stdout and stderr, all runs
	cmd  *exec.Cmd
	done chan error
}

// syncWriter appends to the cluster's log buffer under its lock.
type syncWriter struct{ c *cluster }

func (w syncWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.out.Write(p)
}

func (c *cluster) logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// newCluster prepares (but does not start) a cluster in dataDir.
func newCluster(dataDir, storage string) (*cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return &cluster{dataDir: dataDir, storage: storage, port: port, kubeconfig: filepath.Join(dataDir, "kubeconfig")}, nil
}

// start runs `skiff up` and waits for /readyz to answer 200.
func (c *cluster) start() error {
	c.mu.Lock()
	fmt.Fprintf(&c.out, "=== skiff up --data-dir %s --secure-port %d --storage %s %s\n", c.dataDir, c.port, c.storage, strings.Join(c.extraArgs, " "))
	c.mu.Unlock()
	cmd := exec.Command(skiffBin, append([]string{"up", "--data-dir", c.dataDir, "--secure-port", strconv.Itoa(c.port), "--storage", c.storage}, c.extraArgs...)...)
	cmd.Stdout, cmd.Stderr = syncWriter{c}, syncWriter{c}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd, c.done = cmd, make(chan error, 1)
	go func() { c.done <- cmd.Wait() }()

	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	defer client.CloseIdleConnections()
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", c.port)
	deadline := time.Now().Add(readyTimeout)
	var last string
	for time.Now().Before(deadline) {
		select {
		case err := <-c.done:
			c.done <- err
			return fmt.Errorf("skiff exited before becoming ready: %v\n%s", err, c.logs())
		default:
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if _, err := os.Stat(c.kubeconfig); err != nil {
					return fmt.Errorf("ready, but no kubeconfig: %v", err)
				}
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.kill()
	return fmt.Errorf("skiff not ready within %v (last: %s)\n%s", readyTimeout, last, c.logs())
}

// stop sends SIGINT and requires a clean exit (status 0) within stopTimeout.
func (c *cluster) stop() error {
	if c.cmd == nil {
		return nil
	}
	defer func() { c.cmd = nil }()
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("SIGINT: %w", err)
	}
	select {
	case err := <-c.done:
		if err != nil {
			return fmt.Errorf("skiff exited with %v after SIGINT", err)
		}
		return nil
	case <-time.After(stopTimeout):
		c.kill()
		return fmt.Errorf("skiff did not exit within %v of SIGINT", stopTimeout)
	}
}

func (c *cluster) kill() {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
		<-c.done
		c.cmd = nil
	}
}

// shared returns the cluster the kubectl suites share, starting it on
// first use; TestMain stops it.
func shared(t *testing.T) *cluster {
	t.Helper()
	sharedOnce.Do(func() {
		c, err := newCluster(filepath.Join(workDir, "shared"), "etcd")
		if err == nil {
			// No node of its own: the shared cluster's tests play the
			// kubelet themselves (pod status through the API) or create
			// Node objects; skiff up's node has tests of its own.
			// Without a node metrics-server has nothing to scrape: it
			// is left out too, and the HPA says there is no metrics
			// API, as upstream's without one.
			c.extraArgs = []string{"--disable=kubelet,metrics-server"}
			err = c.start()
		}
		sharedCluster, sharedErr = c, err
		if err != nil {
			sharedCluster = nil
		}
	})
	if sharedErr != nil {
		t.Fatalf("starting the shared cluster: %v", sharedErr)
	}
	return sharedCluster
}

// ownCluster starts a private cluster for t, stops it at cleanup
// (requiring a clean exit) and prints its output if t failed. args are
// more `skiff up` flags.
func ownCluster(t *testing.T, storage string, args ...string) *cluster {
	t.Helper()
	dir, err := os.MkdirTemp(workDir, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCluster(dir, storage)
	if err != nil {
		t.Fatal(err)
	}
	c.extraArgs = args
	// The node of skiff up runs the simulated runtime unless the test asks
	// for another: one containerd per cluster (each with bridge cni0 and
	// the same pod CIDR) would have the parallel tests' pods collide.
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--container-runtime") }) {
		c.extraArgs = append(slices.Clone(args), "--container-runtime=sim")
	}
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Errorf("stopping skiff: %v", err)
		}
		if t.Failed() {
			t.Logf("skiff output:\n%s", c.logs())
		}
	})
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	return c
}

// ---------------------------------------------------------------------------
// kubectl.

// kc runs one kubectl binary against one cluster.
type kc struct {
	c       *cluster
	bin     string
	env     []string // extra environment
	stdin   string
	timeout time.Duration
}

// k returns a runner for the newest kubectl.
func (c *cluster) k() kc { return kc{c: c, bin: kubectlNewest, timeout: commandTimeout} }

// kOld returns a runner for the oldest kubectl.
func (c *cluster) kOld() kc { return kc{c: c, bin: kubectlOldest, timeout: commandTimeout} }

func (k kc) withStdin(s string) kc { k.stdin = s; return k }
func (k kc) withEnv(kv ...string) kc {
	k.env = append(append([]string(nil), k.env...), kv...)
	return k
}
func (k kc) withTimeout(d time.Duration) kc { k.timeout = d; return k }

func (k kc) environ() []string {
	var env []string
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "KUBECONFIG=") || strings.HasPrefix(e, "HOME=") {
			continue
		}
		env = append(env, e)
	}
	return append(append(env, "HOME="+kubectlHome), k.env...)
}

func (k kc) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.c.kubeconfig}, args...)...)
	cmd.Env = k.environ()
	if k.stdin != "" {
		cmd.Stdin = strings.NewReader(k.stdin)
	}
	return cmd
}

// run runs kubectl and returns its stdout, stderr and error (non-nil on a
// non-zero exit or a timeout).
func (k kc) run(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), k.timeout)
	defer cancel()
	cmd := k.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("kubectl %s: timed out after %v", strings.Join(args, " "), k.timeout)
	}
	t.Logf("$ %s %s  (%v, err=%v)\n%s%s", filepath.Base(k.bin), shellJoin(args), time.Since(start).Round(time.Millisecond), err,
		indent("stdout", stdout.String()), indent("stderr", stderr.String()))
	return stdout.String(), stripSkewWarning(stderr.String()), err
}

// ok runs kubectl, fails the test on error and returns stdout.
func (k kc) ok(t testing.TB, args ...string) string {
	t.Helper()
	out, errOut, err := k.run(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstderr: %s", shellJoin(args), err, errOut)
	}
	return out
}

// fails runs kubectl, fails the test if it succeeds and returns stderr.
func (k kc) fails(t testing.TB, args ...string) string {
	t.Helper()
	out, errOut, err := k.run(t, args...)
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want an error\nstdout: %s\nstderr: %s", shellJoin(args), out, errOut)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("kubectl %s: %v", shellJoin(args), err)
	}
	return errOut
}

// stripSkewWarning drops kubectl's client/server version skew warning,
// which depends only on which kubectl binary is used.
func stripSkewWarning(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "WARNING: version difference between client") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "")
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"{}()[]$*!|<>") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

func indent(label, s string) string {
	if s == "" {
		return ""
	}
	return label + ":\n    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// ---------------------------------------------------------------------------
// Assertions.

// lines splits output into lines without the trailing empty one.
func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// columns splits a line on runs of spaces (kubectl's column padding).
func columns(line string) []string { return strings.Fields(line) }

func wantContains(t testing.TB, out string, subs ...string) {
	t.Helper()
	var missing []string
	for _, s := range subs {
		if !strings.Contains(out, s) {
			missing = append(missing, fmt.Sprintf("%q", s))
		}
	}
	if len(missing) > 0 {
		t.Errorf("output does not contain:\n  %s\n--- output ---\n%s", strings.Join(missing, "\n  "), out)
	}
}

func wantNotContains(t testing.TB, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(out, s) {
			t.Errorf("output contains %q, want it absent\n--- output ---\n%s", s, out)
		}
	}
}

// wantMatch requires each regexp to match somewhere in out (multi-line
// mode: ^ and $ are line anchors).
func wantMatch(t testing.TB, out string, res ...string) {
	t.Helper()
	var missing []string
	for _, r := range res {
		if !regexp.MustCompile("(?m)" + r).MatchString(out) {
			missing = append(missing, "/"+r+"/")
		}
	}
	if len(missing) > 0 {
		t.Errorf("output does not match:\n  %s\n--- output ---\n%s", strings.Join(missing, "\n  "), out)
	}
}

// wantLines requires out to be exactly these lines (order matters).
func wantLines(t testing.TB, out string, want ...string) {
	t.Helper()
	got := lines(out)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output lines mismatch\n--- got ---\n%s\n--- want ---\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// wantEqual compares trimmed output with want.
func wantEqual(t testing.TB, what, got, want string) {
	t.Helper()
	if strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("%s: got %q, want %q", what, strings.TrimSpace(got), strings.TrimSpace(want))
	}
}

// wantTable checks a kubectl table: the header's columns and one row per
// entry of rows (each a list of regexps, one per column, matched whole).
func wantTable(t testing.TB, out string, header []string, rows ...[]string) {
	t.Helper()
	ls := lines(out)
	if len(ls) == 0 {
		t.Errorf("empty table, want header %v", header)
		return
	}
	if got := columns(ls[0]); strings.Join(got, " ") != strings.Join(header, " ") {
		t.Errorf("table header = %v, want %v\n--- output ---\n%s", got, header, out)
	}
	if len(ls)-1 != len(rows) {
		t.Errorf("table has %d rows, want %d\n--- output ---\n%s", len(ls)-1, len(rows), out)
		return
	}
	for i, row := range rows {
		got := columns(ls[i+1])
		if len(got) != len(row) {
			t.Errorf("row %d = %q, want %d columns matching %q", i, ls[i+1], len(row), row)
			continue
		}
		for j, re := range row {
			if !regexp.MustCompile("^(?:" + re + ")$").MatchString(got[j]) {
				t.Errorf("row %d column %s = %q, want /%s/\n--- output ---\n%s", i, header[j], got[j], re, out)
			}
		}
	}
}

// eventually polls cond every 50ms until it reports true or timeout
// passes; on timeout it fails with cond's last message.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var msg string
	for {
		var ok bool
		ok, msg = cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v: %s", what, timeout, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// age is the AGE column: kubectl's short human duration.
const age = `[0-9]+[smhd]|[0-9]+m[0-9]+s|[0-9]+h[0-9]+m|[0-9]+d[0-9]+h`

// background runs a long kubectl command (watch, wait) and collects its
// output.
type background struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

type lockedBuf struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// waitEstablished waits for a CRD's Established condition with kubectl
// wait. A CRD fresh from create has "conditions": null until the API
// server's naming controller writes them (upstream's too), and kubectl
// wait gives up on a null list at once ("accessor error: <nil>"): ask
// again until the deadline.
func (k kc) waitEstablished(t testing.TB, crd string) {
	t.Helper()
	eventually(t, 60*time.Second, crd+" Established", func() (bool, string) {
		_, errOut, err := k.withTimeout(40*time.Second).run(t, "wait", "--for=condition=Established", "--timeout=30s", crd)
		return err == nil, errOut
	})
}

func (k kc) start(t testing.TB, args ...string) *background {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), k.timeout)
	bg := &background{cancel: cancel, done: make(chan struct{})}
	bg.cmd = k.command(ctx, args...)
	bg.cmd.Stdout = lockedBuf{&bg.mu, &bg.stdout}
	bg.cmd.Stderr = lockedBuf{&bg.mu, &bg.stderr}
	if err := bg.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting kubectl %s: %v", shellJoin(args), err)
	}
	t.Logf("$ %s %s &", filepath.Base(k.bin), shellJoin(args))
	go func() {
		bg.err = bg.cmd.Wait()
		close(bg.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-bg.done
	})
	return bg
}

func (bg *background) output() (string, string) {
	bg.mu.Lock()
	defer bg.mu.Unlock()
	return bg.stdout.String(), stripSkewWarning(bg.stderr.String())
}

// watching waits until a background kubectl run with -v=6 has logged
// its watch request, so that later changes are seen through the watch.
func (bg *background) watching(t testing.TB) {
	t.Helper()
	eventually(t, 15*time.Second, "kubectl watch request", func() (bool, string) {
		_, errOut := bg.output()
		return strings.Contains(errOut, "watch=true"), errOut
	})
}

// wait waits up to timeout for the command to exit and returns its
// output and exit error.
func (bg *background) wait(t testing.TB, timeout time.Duration) (string, string, error) {
	t.Helper()
	select {
	case <-bg.done:
	case <-time.After(timeout):
		bg.cancel()
		<-bg.done
		out, errOut := bg.output()
		t.Fatalf("background kubectl did not exit within %v\nstdout: %s\nstderr: %s", timeout, out, errOut)
	}
	out, errOut := bg.output()
	t.Logf("background kubectl exited (err=%v)\n%s%s", bg.err, indent("stdout", out), indent("stderr", errOut))
	return out, errOut, bg.err
}
