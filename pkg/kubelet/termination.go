package kubelet

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Termination messages as upstream's kubelet: at most 4 KiB from the
// file; from the logs at most the last 80 lines and 2 KiB.
const (
	maxTerminationMessageLength     = 4096
	maxTerminationMessageLogLines   = 80
	maxTerminationMessageLogLength  = 2048
	annotationTerminationMessage    = "io.kubernetes.container.terminationMessagePath"
	annotationTerminationMessagePol = "io.kubernetes.container.terminationMessagePolicy"
)

// terminationMessageMount creates an empty file for one run of c under the
// pod's directory (<pod dir>/containers/<name>/<random id>, mode 0666) and
// mounts it at c's terminationMessagePath, as upstream's kubelet; nil
// without a pod directory or path, or when the file cannot be made.
func (b *podConfig) terminationMessageMount(pod *corev1.Pod, c *corev1.Container) *runtimeapi.Mount {
	if b.PodDir == nil || c.TerminationMessagePath == "" {
		return nil
	}
	dir := filepath.Join(b.PodDir(pod.UID), "containers", c.Name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	path := filepath.Join(dir, hex.EncodeToString(id[:]))
	f, err := os.Create(path)
	if err != nil {
		return nil
	}
	f.Close()
	if err := os.Chmod(path, 0o666); err != nil {
		return nil
	}
	return &runtimeapi.Mount{HostPath: path, ContainerPath: c.TerminationMessagePath}
}

// withTerminationMessage is the runtime's message of an exited container
// with what the container wrote to its termination message file
// appended (or, with FallbackToLogsOnError and a failure, the tail of its
// log), as upstream's convertToKubeContainerStatus.
func withTerminationMessage(s *runtimeapi.ContainerStatus) string {
	msg := s.GetMessage()
	if s.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
		return msg
	}
	path := s.GetAnnotations()[annotationTerminationMessage]
	fallback := s.GetAnnotations()[annotationTerminationMessagePol] == string(corev1.TerminationMessageFallbackToLogsOnError) &&
		s.GetExitCode() != 0 && s.GetReason() != "ContainerCannotRun"
	text, checkLogs := "", fallback
	if path != "" {
		for _, m := range s.GetMounts() {
			if m.GetContainerPath() != path {
				continue
			}
			data, err := readTail(m.GetHostPath(), maxTerminationMessageLength)
			switch {
			case os.IsNotExist(err):
			case err != nil:
				text, checkLogs = "Error on reading termination log "+m.GetHostPath()+": "+err.Error(), false
			default:
				text, checkLogs = string(data), fallback && len(data) == 0
			}
			break
		}
	}
	if checkLogs && s.GetLogPath() != "" {
		text = lastLogLines(s.GetLogPath())
	}
	if text != "" {
		if msg != "" {
			msg += ": "
		}
		msg += text
	}
	return msg
}

// readTail reads at most max bytes from the end of the file at path.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		if _, err := f.Seek(fi.Size()-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// lastLogLines is the content of the last lines of a CRI log file
// ("<time> <stream> <P|F> <content>"; P continues the line), as upstream
// reads a failed container's log for its termination message.
func lastLogLines(path string) string {
	data, err := readTail(path, 1<<20)
	if err != nil {
		return "Error on reading termination message from logs: " + err.Error()
	}
	var lines [][]byte
	var cur []byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		f := bytes.SplitN(l, []byte(" "), 4)
		if len(f) < 3 {
			continue
		}
		content := []byte{}
		if len(f) == 4 {
			content = f[3]
		}
		cur = append(cur, content...)
		if string(f[2]) != "P" {
			lines = append(lines, append(cur, '\n'))
			cur = nil
		}
	}
	if len(lines) > maxTerminationMessageLogLines {
		lines = lines[len(lines)-maxTerminationMessageLogLines:]
	}
	out := bytes.Join(lines, nil)
	if len(out) > maxTerminationMessageLogLength {
		out = out[len(out)-maxTerminationMessageLogLength:]
	}
	return string(out)
}
