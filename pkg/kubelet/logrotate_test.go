package kubelet

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestRotateLog(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		size      int
		rotated   []string // existing rotated files
		reopenErr error
		want      bool
		wantFiles []string // afterwards, besides the live log
		wantLive  int      // size of the live file afterwards
	}{
		{name: "small enough", size: 100, want: false, wantLive: 100},
		{name: "too large: rotated and reopened", size: 2000, want: true,
			wantFiles: []string{"0.log.20260301-120000"}, wantLive: 0},
		{name: "only the newest maxFiles-1 rotated files stay", size: 2000, want: true,
			rotated:   []string{"0.log.20260301-110000", "0.log.20260301-110100", "0.log.20260301-110200"},
			wantFiles: []string{"0.log.20260301-110100", "0.log.20260301-110200", "0.log.20260301-120000"}, wantLive: 0},
		{name: "a failed reopen puts the file back", size: 2000, reopenErr: errors.New("runtime down"), want: false, wantLive: 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "0.log")
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(os.WriteFile(path, []byte(strings.Repeat("x", tt.size)), 0o640))
			for _, r := range tt.rotated {
				must(os.WriteFile(filepath.Join(dir, r), []byte("old"), 0o640))
			}
			reopened := 0
			got, err := rotateLog(path, 1000, 4, now, func() error {
				reopened++
				if tt.reopenErr != nil {
					return tt.reopenErr
				}
				return os.WriteFile(path, nil, 0o640) // the runtime's new file
			})
			if (err != nil) != (tt.reopenErr != nil) || got != tt.want {
				t.Fatalf("rotateLog = %v, %v; want %v", got, err, tt.want)
			}
			if tt.want && reopened != 1 {
				t.Errorf("reopened %d times", reopened)
			}
			entries, _ := os.ReadDir(dir)
			var files []string
			for _, e := range entries {
				if e.Name() != "0.log" {
					files = append(files, e.Name())
				}
			}
			sort.Strings(files)
			if strings.Join(files, " ") != strings.Join(tt.wantFiles, " ") {
				t.Errorf("rotated files %v, want %v", files, tt.wantFiles)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() != int64(tt.wantLive) {
				t.Errorf("live log: %v, %v; want %d bytes", fi, err, tt.wantLive)
			}
		})
	}
}
