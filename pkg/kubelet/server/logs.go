package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// logOptions are a containerLogs request's query (v1 PodLogOptions).
type logOptions struct {
	follow, previous, timestamps bool
	tail                         int64 // -1: all
	limitBytes                   int64 // -1: no limit
	since                        time.Time
	stream                       string // All, Stdout, Stderr
}

// parseLogOptions reads the query as upstream's parameter codec and
// ValidatePodLogOptions do; ok false is upstream's 400/422 answer.
func parseLogOptions(q map[string][]string, now time.Time) (logOptions, int, string) {
	get := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	o := logOptions{tail: -1, limitBytes: -1, stream: corev1.LogStreamAll}
	bad := func() (logOptions, int, string) {
		return o, http.StatusBadRequest, `{"message": "Unable to decode query."}`
	}
	invalid := func() (logOptions, int, string) {
		return o, http.StatusUnprocessableEntity, `{"message": "Invalid request."}`
	}
	for _, b := range []struct {
		key string
		to  *bool
	}{{"follow", &o.follow}, {"previous", &o.previous}, {"timestamps", &o.timestamps}} {
		if v, ok := get(b.key); ok && v != "" {
			x, err := strconv.ParseBool(v)
			if err != nil {
				return bad()
			}
			*b.to = x
		}
	}
	// "tail" is the old name of tailLines ("all": every line).
	tail, hasTail := get("tailLines")
	if t, ok := get("tail"); ok && t != "" {
		tail, hasTail = t, t != "all"
	}
	if hasTail && tail != "" {
		n, err := strconv.ParseInt(tail, 10, 64)
		if err != nil {
			return bad()
		}
		if n < 0 {
			return invalid()
		}
		o.tail = n
	}
	if v, ok := get("limitBytes"); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad()
		}
		if n < 1 {
			return invalid()
		}
		o.limitBytes = n
	}
	secs, hasSecs := get("sinceSeconds")
	st, hasTime := get("sinceTime")
	if hasSecs && hasTime {
		return invalid()
	}
	if hasSecs && secs != "" {
		n, err := strconv.ParseInt(secs, 10, 64)
		if err != nil {
			return bad()
		}
		if n < 1 {
			return invalid()
		}
		o.since = now.Add(-time.Duration(n) * time.Second)
	}
	if hasTime && st != "" {
		t, err := time.Parse(time.RFC3339, st)
		if err != nil {
			return bad()
		}
		o.since = t
	}
	if v, ok := get("stream"); ok && v != "" {
		switch v {
		case corev1.LogStreamAll, corev1.LogStreamStdout, corev1.LogStreamStderr:
			o.stream = v
		default:
			return o, http.StatusBadRequest, fmt.Sprintf("invalid stream type %q", v)
		}
		if v != corev1.LogStreamAll && o.tail >= 0 {
			return invalid() // upstream: tailLines only with the All stream
		}
	}
	return o, 0, ""
}

// serveContainerLogs is /containerLogs/<namespace>/<pod>/<container>.
func (s *Server) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if r.Method != http.MethodGet {
		writeText(w, http.StatusMethodNotAllowed, "405: Method Not Allowed")
		return
	}
	if len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	ns, name, container := parts[0], parts[1], parts[2]
	switch {
	case name == "":
		writeText(w, http.StatusBadRequest, `{"message": "Missing podID."}`)
		return
	case container == "":
		writeText(w, http.StatusBadRequest, `{"message": "Missing container name."}`)
		return
	case ns == "":
		writeText(w, http.StatusBadRequest, `{"message": "Missing podNamespace."}`)
		return
	}
	opts, code, msg := parseLogOptions(r.URL.Query(), s.cfg.Clock.Now())
	if code != 0 {
		writeText(w, code, msg)
		return
	}
	pod, ok := s.cfg.Host.GetPodByName(ns, name)
	if !ok {
		writeText(w, http.StatusNotFound, fmt.Sprintf("pod %q does not exist", name))
		return
	}
	if !hasContainer(pod, container) {
		writeText(w, http.StatusNotFound, fmt.Sprintf("container %q not found in pod %q", container, name))
		return
	}
	id, err := logContainerID(pod, container, opts.previous)
	if err != nil {
		writeText(w, http.StatusBadRequest, err.Error())
		return
	}
	path := ""
	st, err := s.cfg.Runtime.ContainerStatus(r.Context(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("failed to get container status %q: %v", id, err))
		return
	}
	path = st.GetStatus().GetLogPath()
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Transfer-Encoding", "chunked")
	if path == "" {
		// The runtime keeps no log for this container (the simulated
		// runtime runs no process): its log is empty.
		w.WriteHeader(http.StatusOK)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("failed to open log file %q: %v", path, err))
		return
	}
	// Where to start is settled before the answer starts: a line written
	// once the client has the headers is never skipped by the tail.
	start, err := tailStart(f, opts.tail)
	if err == nil {
		_, err = f.Seek(start, io.SeekStart)
	}
	if err != nil {
		f.Close()
		writeText(w, http.StatusBadRequest, fmt.Sprintf("failed to read log file %q: %v", path, err))
		return
	}
	w.WriteHeader(http.StatusOK)
	fw := &flushWriter{w: w, rc: http.NewResponseController(w), limit: opts.limitBytes}
	_ = fw.rc.Flush() // the answer starts before the first line (follow)
	s.readLogs(r.Context(), f, path, id, opts, fw)
}

// hasContainer reports whether the pod's spec names the container.
func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// logContainerID picks the container whose log is asked from the pod's
// status, with upstream's answers when there is none.
func logContainerID(pod *corev1.Pod, name string, previous bool) (string, error) {
	var cs *corev1.ContainerStatus
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].Name == name && cs == nil {
				cs = &list[i]
			}
		}
	}
	if cs == nil {
		return "", fmt.Errorf("container %q in pod %q is not available", name, pod.Name)
	}
	last := cs.LastTerminationState.Terminated
	var id string
	switch {
	case previous:
		if last == nil || last.ContainerID == "" {
			return "", fmt.Errorf("previous terminated container %q in pod %q not found", name, pod.Name)
		}
		id = last.ContainerID
	case cs.State.Running != nil:
		id = cs.ContainerID
	case cs.State.Terminated != nil:
		switch {
		case cs.State.Terminated.ContainerID != "":
			id = cs.State.Terminated.ContainerID
		case last != nil && last.ContainerID != "":
			id = last.ContainerID
		default:
			return "", fmt.Errorf("container %q in pod %q is terminated", name, pod.Name)
		}
	case last != nil:
		if last.ContainerID == "" {
			return "", fmt.Errorf("container %q in pod %q is terminated", name, pod.Name)
		}
		id = last.ContainerID
	case cs.State.Waiting != nil:
		switch reason := cs.State.Waiting.Reason; reason {
		case "ErrImagePull":
			return "", fmt.Errorf("container %q in pod %q is waiting to start: image can't be pulled", name, pod.Name)
		case "ImagePullBackOff":
			return "", fmt.Errorf("container %q in pod %q is waiting to start: trying and failing to pull image", name, pod.Name)
		default:
			return "", fmt.Errorf("container %q in pod %q is waiting to start: %v", name, pod.Name, reason)
		}
	default:
		return "", fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", name, pod.Name)
	}
	if _, after, ok := strings.Cut(id, "://"); ok {
		id = after
	}
	return id, nil
}

var errLimitReached = errors.New("limit reached")

// flushWriter writes to the response, flushing after each write, and
// stops after limit bytes (-1: no limit).
type flushWriter struct {
	w       io.Writer
	rc      *http.ResponseController
	limit   int64
	written int64
}

func (f *flushWriter) Write(p []byte) (int, error) {
	if f.limit >= 0 && f.written+int64(len(p)) > f.limit {
		p = p[:f.limit-f.written]
		n, err := f.w.Write(p)
		f.written += int64(n)
		_ = f.rc.Flush()
		if err == nil {
			err = errLimitReached
		}
		return n, err
	}
	n, err := f.w.Write(p)
	f.written += int64(n)
	_ = f.rc.Flush()
	return n, err
}

// logLine is one line of a CRI log file: "<RFC3339Nano time> <stream>
// <P|F>[:<more tags>] <message>".
type logLine struct {
	time    time.Time
	stream  string
	partial bool
	msg     []byte
}

func parseCRILine(line []byte) (logLine, error) {
	var l logLine
	ts, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return l, errors.New("timestamp is not found")
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return l, fmt.Errorf("unexpected timestamp format %q: %w", ts, err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		return l, errors.New("stream type is not found")
	}
	if s := string(stream); s != "stdout" && s != "stderr" {
		return l, fmt.Errorf("unexpected stream type %q", stream)
	}
	tags, msg, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		return l, errors.New("log tag is not found")
	}
	first, _, _ := bytes.Cut(tags, []byte(":"))
	l.time, l.stream, l.partial, l.msg = t, string(stream), string(first) == "P", msg
	if l.partial && len(l.msg) > 0 && l.msg[len(l.msg)-1] == '\n' {
		l.msg = l.msg[:len(l.msg)-1]
	}
	return l, nil
}

// tailStart is the offset of the first of the last n lines of f.
func tailStart(f *os.File, n int64) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if n < 0 {
		return 0, nil
	}
	if n == 0 {
		return size, nil
	}
	const block = 8192
	buf := make([]byte, block)
	var count int64
	for pos := size; pos > 0; {
		start := max(0, pos-block)
		chunk := buf[:pos-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != '\n' || start+int64(i) == size-1 {
				continue
			}
			if count++; count == n {
				return start + int64(i) + 1, nil
			}
		}
		pos = start
	}
	return 0, nil
}

// readLogs writes the container's log from f (the file at path, at the
// offset the tail starts) to w as opts asks; following, it waits for more until the container is no
// longer running or ctx ends, and moves to the new file when the log is
// rotated (the file at path replaced).
func (s *Server) readLogs(ctx context.Context, f *os.File, path, containerID string, opts logOptions, w io.Writer) {
	defer func() { f.Close() }()
	br := bufio.NewReader(f)
	var pending []byte // a line whose end is not written yet
	emit := func(line []byte) error {
		l, err := parseCRILine(line)
		if err != nil {
			s.log.Debug("Failed to parse a log line", "path", path, "err", err)
			return nil
		}
		if !opts.since.IsZero() && l.time.Before(opts.since) {
			return nil
		}
		if opts.stream != corev1.LogStreamAll && !strings.EqualFold(opts.stream, l.stream) {
			return nil
		}
		if opts.timestamps {
			if _, err := io.WriteString(w, l.time.Format(time.RFC3339Nano)+" "); err != nil {
				return err
			}
		}
		_, err = w.Write(l.msg)
		return err
	}
	// drain writes every complete line the reader has; false: stop.
	drain := func() bool {
		for {
			chunk, err := br.ReadBytes('\n')
			pending = append(pending, chunk...)
			if err != nil {
				return true // EOF: keep the incomplete line for later
			}
			line := pending
			pending = nil
			if werr := emit(line); werr != nil {
				return false
			}
		}
	}
	if !drain() || !opts.follow {
		return
	}
	for {
		t := s.cfg.Clock.NewTimer(s.cfg.LogPollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if !drain() {
			return
		}
		// Rotated: the old file is read to its end; go on with the new one.
		if cur, err := f.Stat(); err == nil {
			if fi, err := os.Stat(path); err == nil && !os.SameFile(cur, fi) {
				nf, err := os.Open(path)
				if err == nil {
					f.Close()
					f, pending = nf, nil
					br = bufio.NewReader(f)
					if !drain() {
						return
					}
					continue
				}
			}
		}
		st, err := s.cfg.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: containerID})
		if err != nil || st.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			drain()
			return
		}
	}
}
