package image

import (
	"bytes"
	"debug/elf"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestPauseELFHeader(t *testing.T) {
	b, err := PauseELF("amd64")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 256 {
		t.Errorf("pause is %d bytes, want a few hundred at most", len(b))
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not an ELF file: %v", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC {
		t.Errorf("header %+v", f.FileHeader)
	}
	if len(f.Progs) != 1 || f.Progs[0].Type != elf.PT_LOAD || f.Progs[0].Flags != elf.PF_R|elf.PF_X ||
		f.Progs[0].Filesz != uint64(len(b)) || f.Progs[0].Vaddr != pauseBase {
		t.Fatalf("program headers %+v", f.Progs)
	}
	if want := uint64(pauseBase + elfHeaderLen + phdrLen); f.Entry != want {
		t.Errorf("entry %#x, want %#x (the code after the headers)", f.Entry, want)
	}
	for _, arch := range []string{"arm64", "riscv64", ""} {
		if _, err := PauseELF(arch); err == nil || !strings.Contains(err.Error(), "amd64 only") {
			t.Errorf("PauseELF(%q): %v, want amd64 only", arch, err)
		}
		if _, err := PauseImage(arch); err == nil {
			t.Errorf("PauseImage(%q) did not fail", arch)
		}
	}
}

func TestPauseImageArchive(t *testing.T) {
	img, err := PauseImage("amd64")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDockerArchive(&buf, img); err != nil {
		t.Fatal(err)
	}
	images := readDockerArchive(t, buf.Bytes())
	if len(images) != 1 || len(images[0].RepoTags) != 1 || images[0].RepoTags[0] != PauseImageName {
		t.Fatalf("images %+v", images)
	}
	if ep := images[0].Config.Config.Entrypoint; len(ep) != 1 || ep[0] != "/pause" {
		t.Errorf("entrypoint %v", ep)
	}
	elfBytes, _ := PauseELF("amd64")
	layer := images[0].Layer
	if len(layer) != 1 || layer[0].Name != "pause" || layer[0].Mode != 0o755 || !bytes.Equal(layer[0].Content, elfBytes) {
		t.Errorf("layer %+v", layer)
	}
}

// startPause writes the pause program to a temporary file and starts it.
func startPause(t *testing.T, attr *syscall.SysProcAttr) (*exec.Cmd, error) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the pause program is x86-64 Linux code; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	b, err := PauseELF("amd64")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "pause")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, nil
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// inSigtimedwait: the process sleeps in rt_sigtimedwait (syscall 128 on
// x86-64), i.e. it waits for a signal; "running" while it runs.
func inSigtimedwait(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	return err == nil && strings.HasPrefix(string(b), "128 ")
}

// statusField reads a field of /proc/PID/status.
func statusField(pid int, name string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func TestPauseRuns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []syscall.Signal // signals it must survive
		stop   syscall.Signal
	}{
		{"SIGTERM", nil, syscall.SIGTERM},
		{"SIGINT", nil, syscall.SIGINT},
		{"SIGCHLD without children, then SIGTERM", []syscall.Signal{syscall.SIGCHLD, syscall.SIGCHLD}, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, err := startPause(t, nil)
			if err != nil {
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			waitFor(t, "pause to wait for signals", func() bool { return inSigtimedwait(pid) })
			if got := statusField(pid, "State"); !strings.HasPrefix(got, "S") {
				t.Fatalf("state %q, want sleeping", got)
			}
			for _, s := range tc.before {
				if err := cmd.Process.Signal(s); err != nil {
					t.Fatal(err)
				}
				// Taken (no longer pending) and waiting again.
				waitFor(t, "pause to take "+s.String()+" and wait again", func() bool {
					return statusField(pid, "ShdPnd") == "0000000000000000" && inSigtimedwait(pid)
				})
			}
			if err := cmd.Process.Signal(tc.stop); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if err != nil {
				t.Fatalf("pause after %v: %v, want exit status 0", tc.stop, err)
			}
		})
	}
}

// TestPauseReapsOrphans runs pause as PID 1 of a new PID namespace, makes
// an orphan in that namespace (a shell that backgrounds a sleep and
// exits) and checks that pause adopts and then reaps it: with a pod's
// shared process namespace, orphans are pause's to reap.
func TestPauseReapsOrphans(t *testing.T) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		t.Skip("nsenter (util-linux) not installed")
	}
	if _, err := os.Stat(DefaultBusyboxPath); err != nil {
		t.Skipf("%s not installed (Debian: busybox-static)", DefaultBusyboxPath)
	}
	cmd, err := startPause(t, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID})
	if errors.Is(err, syscall.EPERM) || errors.Is(err, fs.ErrPermission) {
		t.Skipf("cannot create a PID namespace here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if got := statusField(pid, "NSpid"); !strings.HasSuffix(got, "\t1") {
		t.Fatalf("NSpid %q: pause is not PID 1 of its namespace", got)
	}
	waitFor(t, "pause to wait for signals", func() bool { return inSigtimedwait(pid) })
	// (the sleep's output goes to /dev/null: holding the pipe open it
	// would make CombinedOutput wait until it ends)
	out, err := exec.Command(nsenter, "--target", strconv.Itoa(pid), "--pid", "--",
		DefaultBusyboxPath, "sh", "-c", DefaultBusyboxPath+" sleep 1 >/dev/null 2>&1 & exit 0").CombinedOutput()
	if err != nil {
		t.Skipf("nsenter into pause's PID namespace: %v: %s", err, out)
	}
	children := func() (all, zombies int) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			p, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if statusField(p, "PPid") == strconv.Itoa(pid) {
				all++
				if strings.HasPrefix(statusField(p, "State"), "Z") {
					zombies++
				}
			}
		}
		return all, zombies
	}
	waitFor(t, "the orphaned sleep to be pause's child", func() bool { n, _ := children(); return n > 0 })
	waitFor(t, "pause to reap the sleep once it exits", func() bool { n, _ := children(); return n == 0 })
	if cmd.ProcessState != nil {
		t.Fatalf("pause exited: %v", cmd.ProcessState)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pause as PID 1 after SIGTERM: %v, want exit status 0", err)
	}
}
