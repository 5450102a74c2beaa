//go:build !linux

package volume

import (
	"errors"
	"os"
)

var errNoMounts = errors.New("tmpfs volumes are supported on Linux only")

func mountTmpfs(dir string, size int64) error       { return errNoMounts }
func unmount(dir string) error                      { return errNoMounts }
func mountPointsUnder(dir string) ([]string, error) { return nil, nil }
func isMountPoint(dir string) (bool, error)         { return false, nil }

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
