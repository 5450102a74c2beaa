package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"cpu", "heap", "goroutine", "allocs"} {
		p := &profileFlags{}
		cmd := &cobra.Command{Use: "x"}
		p.add(cmd)
		out := filepath.Join(dir, name+".pprof")
		if err := cmd.PersistentFlags().Parse([]string{"--profile=" + name, "--profile-output=" + out}); err != nil {
			t.Fatal(err)
		}
		if err := p.start(); err != nil {
			t.Fatalf("%s: start: %v", name, err)
		}
		if err := p.stop(); err != nil {
			t.Fatalf("%s: stop: %v", name, err)
		}
		data, err := os.ReadFile(out)
		if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b { // gzipped protobuf
			t.Errorf("%s: profile file %d bytes, err %v", name, len(data), err)
		}
	}
	p := &profileFlags{name: "nonsense"}
	if err := p.start(); err == nil || !strings.Contains(err.Error(), `unknown profile "nonsense"`) {
		t.Errorf("unknown profile: %v", err)
	}
	if err := (&profileFlags{name: "none"}).stop(); err != nil {
		t.Errorf("none: %v", err)
	}
}
