package containerd

import (
	"reflect"
	"testing"
)

func TestImportedNames(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want []string
	}{
		{out: "", want: nil},
		{out: "unpacking docker.io/library/busybox:latest (sha256:1f0e2d1a6b0c2b1f5f8e0a6c0f1e6b0c2b1f5f8e0a6c0f1e6b0c2b1f5f8e0a6c)...done\n",
			want: []string{"docker.io/library/busybox:latest"}},
		{out: "unpacking localhost/skiff/pause:3.10 (sha256:aa)...done\nunpacking docker.io/library/busybox:1.36 (sha256:bb)...done\n",
			want: []string{"localhost/skiff/pause:3.10", "docker.io/library/busybox:1.36"}},
		{out: "ctr: some warning\n", want: nil},
	} {
		if got := importedNames(tc.out); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("importedNames(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

func TestLayout(t *testing.T) {
	l := LayoutOf(DirOf("/var/lib/skiff"))
	want := Layout{Dir: "/var/lib/skiff/containerd", Config: "/var/lib/skiff/containerd/config.toml",
		Root: "/var/lib/skiff/containerd/root", State: "/var/lib/skiff/containerd/state",
		Socket: "/var/lib/skiff/containerd/containerd.sock", Log: "/var/lib/skiff/containerd/containerd.log"}
	if l != want {
		t.Errorf("LayoutOf = %+v, want %+v", l, want)
	}
	if s := SocketOf("/var/lib/skiff"); s != want.Socket {
		t.Errorf("SocketOf = %q", s)
	}
}
