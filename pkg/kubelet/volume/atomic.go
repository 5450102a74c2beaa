package volume

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// fileProjection is one file of a volume whose contents the kubelet
// writes (configMap, secret, downwardAPI, projected).
type fileProjection struct {
	Data []byte
	Mode int32
	// FsUser, when set, owns the file.
	FsUser *int64
}

const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
)

// writeAtomic makes dir hold exactly payload (relative path → file), the
// way upstream's AtomicWriter does so that a reader never sees a mix of
// old and new files:
//
//	dir/..2026_03_01_12_00_00.123456789/<files>   the timestamped data
//	dir/..data -> ..2026_03_01_12_00_00.123456789 swapped by rename(2)
//	dir/<top-level name> -> ..data/<top-level name>
//
// When the payload equals what is there (contents and modes, modes with
// the bits extraMode that afterWrite adds), nothing is written and changed
// is false. afterWrite, when set, runs over the new data before it becomes
// visible (ownership).
func writeAtomic(dir string, payload map[string]fileProjection, now time.Time, extraMode os.FileMode, afterWrite func() error) (changed bool, err error) {
	clean := make(map[string]fileProjection, len(payload))
	for p, f := range payload {
		if err := validatePath(p); err != nil {
			return false, err
		}
		clean[filepath.Clean(p)] = f
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	oldTs, err := os.Readlink(filepath.Join(dir, dataDirName))
	if err != nil && !os.IsNotExist(err) {
		return false, err
	}
	// User-visible top-level names now and wanted.
	wantTop := map[string]bool{}
	for p := range clean {
		wantTop[strings.SplitN(p, string(filepath.Separator), 2)[0]] = true
	}
	var remove []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		if !wantTop[e.Name()] {
			remove = append(remove, e.Name())
		}
	}
	if oldTs != "" && len(remove) == 0 {
		same, err := sameContents(filepath.Join(dir, oldTs), clean, extraMode)
		if err != nil {
			return false, err
		}
		if same {
			return false, nil
		}
	}
	tsDir, err := os.MkdirTemp(dir, now.UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return false, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tsDir)
		}
	}()
	if err := os.Chmod(tsDir, 0o755); err != nil {
		return false, err
	}
	for p, f := range clean {
		full := filepath.Join(tsDir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return false, err
		}
		if err := os.WriteFile(full, f.Data, os.FileMode(f.Mode)&os.ModePerm); err != nil {
			return false, err
		}
		if err := os.Chmod(full, os.FileMode(f.Mode)&os.ModePerm); err != nil {
			return false, err
		}
		if f.FsUser != nil {
			if err := os.Chown(full, int(*f.FsUser), -1); err != nil {
				return false, err
			}
		}
	}
	if afterWrite != nil {
		if err := afterWrite(); err != nil {
			return false, err
		}
	}
	tmpLink := filepath.Join(dir, newDataDirName)
	os.Remove(tmpLink)
	if err := os.Symlink(filepath.Base(tsDir), tmpLink); err != nil {
		return false, err
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataDirName)); err != nil {
		return false, err
	}
	ok = true
	for top := range wantTop {
		link := filepath.Join(dir, top)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(dataDirName, top), link); err != nil {
			return true, err
		}
	}
	for _, name := range remove {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return true, err
		}
	}
	if oldTs != "" && oldTs != filepath.Base(tsDir) {
		if err := os.RemoveAll(filepath.Join(dir, oldTs)); err != nil {
			return true, err
		}
	}
	return true, nil
}

// validatePath refuses what upstream's AtomicWriter refuses: absolute
// paths, ".." components and names starting with "..".
func validatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("invalid path: must not be empty: %q", p)
	case filepath.IsAbs(p):
		return fmt.Errorf("invalid path: must be relative path: %s", p)
	case len(p) > 4096:
		return fmt.Errorf("invalid path: must be less than or equal to 4096 characters")
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("invalid path: must not start with '..': %s", p)
	}
	for _, part := range strings.Split(p, string(filepath.Separator)) {
		if part == ".." {
			return fmt.Errorf("invalid path: must not contain '..': %s", p)
		}
		if len(part) > 255 {
			return fmt.Errorf("invalid path: %s: must be less than or equal to 255 characters", p)
		}
	}
	return nil
}

// sameContents reports whether tsDir holds exactly payload.
func sameContents(tsDir string, payload map[string]fileProjection, extraMode os.FileMode) (bool, error) {
	n := 0
	err := filepath.WalkDir(tsDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		n++
		return nil
	})
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if n != len(payload) {
		return false, nil
	}
	for p, f := range payload {
		full := filepath.Join(tsDir, p)
		fi, err := os.Lstat(full)
		if os.IsNotExist(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != (os.FileMode(f.Mode)|extraMode)&os.ModePerm {
			return false, nil
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(data, f.Data) {
			return false, nil
		}
	}
	return true, nil
}
