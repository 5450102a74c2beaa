package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dataDirLock is an exclusive lock on a data directory, held for as long
// as a cluster runs on it: a second `skiff up` on the same directory fails
// at once, naming the holder, instead of blocking on etcd's database lock.
type dataDirLock struct {
	f *os.File
}

// lockDataDir takes the lock on dir (flock on dir/skiff.lock, released by
// the kernel if the process dies) and records this process's pid in it.
func lockDataDir(dir string) (*dataDirLock, error) {
	path := filepath.Join(dir, "skiff.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking data dir %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if data, rerr := os.ReadFile(path); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr == nil {
					holder = fmt.Sprintf("skiff (pid %d)", pid)
				}
			}
			return nil, fmt.Errorf("data dir %s is in use by %s; stop it first, or use another --data-dir", dir, holder)
		}
		return nil, fmt.Errorf("locking data dir %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dataDirLock{f: f}, nil
}

// release gives the lock up.
func (l *dataDirLock) release() {
	if l != nil && l.f != nil {
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
	}
}
