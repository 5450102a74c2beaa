package image

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBusyboxImage(t *testing.T) {
	if _, err := os.Stat(DefaultBusyboxPath); err != nil {
		t.Skipf("%s not installed (Debian: busybox-static)", DefaultBusyboxPath)
	}
	img, err := BusyboxImage("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Names) != 2 || img.Names[0] != "docker.io/library/busybox:latest" ||
		!strings.HasPrefix(img.Names[1], "docker.io/library/busybox:1.") {
		t.Errorf("names %v, want latest and the version", img.Names)
	}
	var buf bytes.Buffer
	if err := WriteDockerArchive(&buf, img); err != nil {
		t.Fatal(err)
	}
	images := readDockerArchive(t, buf.Bytes())
	if len(images) != 1 {
		t.Fatalf("%d images", len(images))
	}
	links := map[string]string{}
	var binary []byte
	for _, e := range images[0].Layer {
		switch e.Typeflag {
		case tar.TypeSymlink:
			links[e.Name] = e.Linkname
		case tar.TypeReg:
			if e.Name == "bin/busybox" {
				binary = e.Content
			}
		}
	}
	host, _ := os.ReadFile(DefaultBusyboxPath)
	if !bytes.Equal(binary, host) {
		t.Errorf("bin/busybox (%d bytes) is not the host's (%d bytes)", len(binary), len(host))
	}
	for _, a := range []string{"sh", "sleep", "echo", "cat", "ls", "wget", "nc", "httpd", "ps", "id", "env", "hostname",
		"true", "false", "test", "printf", "date", "kill", "mkdir", "touch", "grep"} {
		if links["bin/"+a] != "busybox" {
			t.Errorf("bin/%s -> %q, want busybox", a, links["bin/"+a])
		}
	}
	if links["usr/bin/env"] != "/bin/busybox" {
		t.Errorf("usr/bin/env -> %q", links["usr/bin/env"])
	}
	if c := images[0].Config; c.Architecture != "amd64" && c.Architecture != "arm64" || len(c.Config.Cmd) != 1 || c.Config.Cmd[0] != "sh" {
		t.Errorf("config %+v", c)
	}

	named, err := BusyboxImage(DefaultBusyboxPath, []string{"localhost/bb:1"})
	if err != nil || len(named.Names) != 1 || named.Names[0] != "localhost/bb:1" {
		t.Errorf("names given: %v %v", named.Names, err)
	}
}

func TestBusyboxImageRefuses(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "busybox-static"},
		{script, "not an ELF"},
		{"/bin/ls", "dynamically linked"}, // Debian's ls uses libc
	} {
		if _, err := os.Stat(tc.path); tc.want == "dynamically linked" && err != nil {
			continue
		}
		if _, err := BusyboxImage(tc.path, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("BusyboxImage(%s): %v, want %q", tc.path, err, tc.want)
		}
	}
}
