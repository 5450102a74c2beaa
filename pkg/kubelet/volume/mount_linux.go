package volume

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// mountTmpfs mounts a tmpfs of size bytes (0: the kernel's default, half
// the memory) on dir, with no other option, as upstream's emptyDir (which
// adds noswap where the kernel has it).
func mountTmpfs(dir string, size int64) error {
	opts := ""
	if size > 0 {
		opts = "size=" + strconv.FormatInt(size, 10)
	}
	return syscall.Mount("tmpfs", dir, "tmpfs", 0, opts)
}

func unmount(dir string) error { return syscall.Unmount(dir, 0) }

// mountPointsUnder lists the mount points at or below dir, deepest first
// (from /proc/self/mountinfo).
func mountPointsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dir = filepath.Clean(dir)
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	// Deepest first.
	for i := 0; i < len(out); i++ {
		for j := i + 1; j < len(out); j++ {
			if len(out[j]) > len(out[i]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out, sc.Err()
}

// unescapeMountinfo undoes the octal escapes (\040 for a space) of
// /proc/self/mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isMountPoint(dir string) (bool, error) {
	mps, err := mountPointsUnder(dir)
	if err != nil {
		return false, err
	}
	for _, mp := range mps {
		if mp == filepath.Clean(dir) {
			return true, nil
		}
	}
	return false, nil
}

// fileType classifies path for hostPath type checks.
func fileType(path string) (os.FileMode, bool, error) {
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return fi.Mode(), true, nil
}
