package volume

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// Permission bits SetVolumeOwnership adds, as upstream's.
const (
	rwMask   = os.FileMode(0o660)
	roMask   = os.FileMode(0o440)
	execMask = os.FileMode(0o110)
)

// setVolumeOwnership gives the files under dir to group fsGroup and the
// group access the volume needs, as upstream's SetVolumeOwnership: every
// file and directory is chgrp'ed to fsGroup, gains g+rw (g+r when the
// volume is read-only), directories also g+x and setgid; symlinks are
// only chgrp'ed. With fsGroupChangePolicy OnRootMismatch nothing is done
// when the volume's root already has the group and the bits.
func setVolumeOwnership(dir string, fsGroup *int64, policy *corev1.PodFSGroupChangePolicy, readOnly bool) error {
	if fsGroup == nil {
		return nil
	}
	if policy != nil && *policy == corev1.FSGroupChangeOnRootMismatch && !requiresPermissionChange(dir, *fsGroup, readOnly) {
		return nil
	}
	return filepath.Walk(dir, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return changeFilePermission(path, *fsGroup, readOnly, info)
	})
}

// changeFilePermission is upstream's: failures are not errors (upstream
// logs them and goes on).
func changeFilePermission(path string, fsGroup int64, readOnly bool, info fs.FileInfo) error {
	_ = os.Lchown(path, -1, int(fsGroup))
	if info.Mode()&os.ModeSymlink != 0 {
		return nil
	}
	mask := rwMask
	if readOnly {
		mask = roMask
	}
	if info.IsDir() {
		mask |= os.ModeSetgid | execMask
	}
	_ = os.Chmod(path, info.Mode()|mask)
	return nil
}

func requiresPermissionChange(dir string, fsGroup int64, readOnly bool) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int64(st.Gid) != fsGroup || !fi.IsDir() {
		return true
	}
	mask := rwMask
	if readOnly {
		mask = roMask
	}
	mask |= execMask
	return fi.Mode().Perm()&mask != mask || fi.Mode()&os.ModeSetgid == 0
}
