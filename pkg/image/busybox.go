package image

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
)

// DefaultBusyboxPath is where Debian's busybox-static installs busybox.
const DefaultBusyboxPath = "/bin/busybox"

// BusyboxRepository is the repository busybox images are named in; tags
// are "latest" and the binary's version (e.g. 1.35.0), so that pods can
// name a tag whose default pull policy is IfNotPresent.
const BusyboxRepository = "docker.io/library/busybox"

// busyboxApplets are linked when the binary cannot list its own (it is
// for another architecture): what tests and examples use.
var busyboxApplets = []string{
	"[", "awk", "basename", "cat", "chmod", "chown", "cp", "cut", "date", "dd", "df", "dirname", "du",
	"echo", "env", "expr", "false", "find", "grep", "head", "hostname", "httpd", "id", "ifconfig", "ip",
	"kill", "ln", "ls", "mkdir", "mktemp", "mount", "mv", "nc", "netstat", "nslookup", "ping", "printf",
	"ps", "pwd", "readlink", "rm", "rmdir", "sed", "seq", "sh", "sleep", "sort", "stat", "tail", "tar",
	"tee", "test", "timeout", "top", "touch", "tr", "true", "uname", "uniq", "uptime", "wc", "wget",
	"which", "whoami", "xargs", "yes",
}

var busyboxVersion = regexp.MustCompile(`BusyBox v([0-9]+\.[0-9]+(\.[0-9]+)?)`)

// BusyboxImage packs the static busybox binary at path (DefaultBusyboxPath
// when empty) as an image: /bin/busybox, a symlink /bin/<applet> for each
// applet it has (asking the binary with --list, or a fixed list of common
// ones if it cannot run here), /usr/bin/env, /etc/passwd and /etc/group
// (root and nobody), /tmp, /root and /var/www; command sh. Its names are
// names, or BusyboxRepository tagged latest and with the binary's version.
// A dynamically linked busybox is refused: the image has no libc.
func BusyboxImage(path string, names []string) (Image, error) {
	if path == "" {
		path = DefaultBusyboxPath
	}
	content, err := os.ReadFile(path)
	if err != nil {
		return Image{}, fmt.Errorf("busybox: %w (on Debian: apt-get install busybox-static)", err)
	}
	arch, err := staticArch(content)
	if err != nil {
		return Image{}, fmt.Errorf("busybox at %s: %w", path, err)
	}
	if len(names) == 0 {
		names = []string{BusyboxRepository + ":latest"}
		if m := busyboxVersion.FindSubmatch(content); m != nil {
			names = append(names, BusyboxRepository+":"+string(m[1]))
		}
	}
	applets := busyboxApplets
	if out, err := exec.Command(path, "--list").Output(); err == nil {
		applets = strings.Fields(string(out))
	}
	files := []File{
		{Path: "/bin/busybox", Mode: 0o755, Content: content},
		{Path: "/usr/bin/env", Mode: fs.ModeSymlink | 0o777, Linkname: "/bin/busybox"},
		{Path: "/etc/passwd", Mode: 0o644, Content: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n")},
		{Path: "/etc/group", Mode: 0o644, Content: []byte("root:x:0:\nnobody:x:65534:\n")},
		{Path: "/tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
		{Path: "/root", Mode: fs.ModeDir | 0o700},
		{Path: "/var/www", Mode: fs.ModeDir | 0o755},
	}
	seen := map[string]bool{"busybox": true}
	sort.Strings(applets)
	for _, a := range applets {
		if seen[a] || strings.ContainsAny(a, "/") {
			continue
		}
		seen[a] = true
		files = append(files, File{Path: "/bin/" + a, Mode: fs.ModeSymlink | 0o777, Linkname: "busybox"})
	}
	return Image{
		Names: names,
		Arch:  arch,
		Env:   []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Cmd:   []string{"sh"},
		Files: files,
	}, nil
}

// staticArch is the GOARCH of a statically linked ELF executable.
func staticArch(content []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(content))
	if err != nil {
		return "", fmt.Errorf("not an ELF executable: %w", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("dynamically linked (an image of it would need its libc): use a static busybox (Debian: busybox-static)")
		}
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_386:
		return "386", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return "", fmt.Errorf("unknown ELF machine %v", f.Machine)
}
