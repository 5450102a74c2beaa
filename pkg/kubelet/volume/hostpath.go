package volume

import (
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
)

// checkHostPathType checks (and for the *OrCreate types makes) path as
// upstream's hostPath plugin does, with its messages.
func checkHostPathType(path string, typ *corev1.HostPathType) error {
	if typ == nil || *typ == corev1.HostPathUnset {
		return nil
	}
	mode, exists, err := fileType(path)
	if err != nil {
		return err
	}
	switch *typ {
	case corev1.HostPathDirectoryOrCreate:
		if !exists {
			return os.MkdirAll(path, 0o755)
		}
		fallthrough
	case corev1.HostPathDirectory:
		if !exists || !mode.IsDir() {
			return fmt.Errorf("hostPath type check failed: %s is not a directory", path)
		}
	case corev1.HostPathFileOrCreate:
		if !exists {
			f, err := os.OpenFile(path, os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
		fallthrough
	case corev1.HostPathFile:
		if !exists || !mode.IsRegular() {
			return fmt.Errorf("hostPath type check failed: %s is not a file", path)
		}
	case corev1.HostPathSocket:
		if !exists || mode&os.ModeSocket == 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a socket file", path)
		}
	case corev1.HostPathCharDev:
		if !exists || mode&os.ModeCharDevice == 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a character device", path)
		}
	case corev1.HostPathBlockDev:
		if !exists || mode&os.ModeDevice == 0 || mode&os.ModeCharDevice != 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a block device", path)
		}
	default:
		return fmt.Errorf("%s is an invalid volume type", *typ)
	}
	return nil
}
