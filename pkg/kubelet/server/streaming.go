package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

// serveExecAttach is /exec|/attach/<namespace>/<pod>[/<uid>]/<container>:
// the runtime's streaming URL for the session, then the client's upgraded
// connection proxied there (upstream's kubelet proxies, it does not
// redirect).
func (s *Server) serveExecAttach(w http.ResponseWriter, r *http.Request) {
	op, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	parts := strings.Split(rest, "/")
	if r.Method != http.MethodGet && r.Method != http.MethodPost || len(parts) != 3 && len(parts) != 4 {
		http.NotFound(w, r)
		return
	}
	ns, name, container := parts[0], parts[1], parts[len(parts)-1]
	uid := ""
	if len(parts) == 4 {
		uid = parts[2]
	}
	q := r.URL.Query()
	stdin, stdout, stderr, tty := q.Get("input") == "1" || q.Get("stdin") == "1", q.Get("output") == "1" || q.Get("stdout") == "1",
		q.Get("error") == "1" || q.Get("stderr") == "1", q.Get("tty") == "1"
	if tty && stderr {
		stderr = false // upstream: no separate stderr with a terminal
	}
	if !stdin && !stdout && !stderr {
		writeText(w, http.StatusBadRequest, "you must specify at least 1 of stdin, stdout, stderr")
		return
	}
	pod, ok := s.cfg.Host.GetPodByName(ns, name)
	if !ok || uid != "" && string(pod.UID) != uid {
		writeText(w, http.StatusNotFound, "pod does not exist")
		return
	}
	id, err := s.runningContainer(r.Context(), pod, container)
	if err != nil {
		writeStreamingError(w, err)
		return
	}
	var streamURL string
	if op == "exec" {
		resp, err := s.cfg.Runtime.Exec(r.Context(), &runtimeapi.ExecRequest{ContainerId: id, Cmd: q["command"], Tty: tty, Stdin: stdin, Stdout: stdout, Stderr: stderr})
		if err != nil {
			writeStreamingError(w, err)
			return
		}
		streamURL = resp.GetUrl()
	} else {
		resp, err := s.cfg.Runtime.Attach(r.Context(), &runtimeapi.AttachRequest{ContainerId: id, Tty: tty, Stdin: stdin, Stdout: stdout, Stderr: stderr})
		if err != nil {
			writeStreamingError(w, err)
			return
		}
		streamURL = resp.GetUrl()
	}
	s.proxyStream(w, r, streamURL)
}

// servePortForward is /portForward/<namespace>/<pod>[/<uid>].
func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/portForward/"), "/")
	if r.Method != http.MethodGet && r.Method != http.MethodPost || len(parts) != 2 && len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	pod, ok := s.cfg.Host.GetPodByName(parts[0], parts[1])
	if !ok {
		writeText(w, http.StatusNotFound, "pod does not exist")
		return
	}
	if len(parts) == 3 && parts[2] != "" && string(pod.UID) != parts[2] {
		writeText(w, http.StatusNotFound, "pod not found")
		return
	}
	var ports []int32
	for _, v := range r.URL.Query()["port"] {
		for _, p := range strings.Split(v, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
			if err != nil || n == 0 {
				writeText(w, http.StatusBadRequest, fmt.Sprintf("unable to parse %q as a port: %v", p, err))
				return
			}
			ports = append(ports, int32(n))
		}
	}
	sandbox, err := s.podSandbox(r.Context(), pod)
	if err != nil {
		writeStreamingError(w, err)
		return
	}
	resp, err := s.cfg.Runtime.PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: sandbox, Port: ports})
	if err != nil {
		writeStreamingError(w, err)
		return
	}
	s.proxyStream(w, r, resp.GetUrl())
}

// proxyStream proxies the client's upgrade request to the runtime's
// streaming URL; a request that is not an upgrade is refused as upstream's
// upgrade-required proxy refuses it.
func (s *Server) proxyStream(w http.ResponseWriter, r *http.Request, streamURL string) {
	if !upgradeproxy.IsUpgradeRequest(r) {
		writeText(w, http.StatusBadRequest, "Upgrade request required")
		return
	}
	u, err := url.Parse(streamURL)
	if err != nil || !u.IsAbs() {
		writeText(w, http.StatusInternalServerError, fmt.Sprintf("invalid streaming URL %q from the runtime", streamURL))
		return
	}
	err = upgradeproxy.Proxy(w, r, u, upgradeproxy.Options{Stop: s.stopping, Header: func(h http.Header) {
		h.Del("Authorization") // the client's credentials are for the kubelet only
	}})
	if err != nil {
		s.log.Error("Error while proxying request", "err", err)
		writeText(w, http.StatusInternalServerError, err.Error())
	}
}

// writeStreamingError is upstream's answer to a runtime error: 404 when
// the runtime has no such container or sandbox, else 500, the error as
// the body.
func writeStreamingError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, cri.ErrNotFound) {
		code = http.StatusNotFound
	}
	writeText(w, code, err.Error())
}

// runningContainer is the runtime's newest running container of the pod
// named name.
func (s *Server) runningContainer(ctx context.Context, pod *corev1.Pod, name string) (string, error) {
	resp, err := s.cfg.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{cri.LabelPodUID: string(pod.UID), cri.LabelContainerName: name},
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}})
	if err != nil {
		return "", err
	}
	cs := resp.GetContainers()
	if len(cs) == 0 {
		return "", fmt.Errorf("container not found (%q)", name)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].CreatedAt > cs[j].CreatedAt })
	return cs[0].Id, nil
}

// podSandbox is the pod's newest ready sandbox.
func (s *Server) podSandbox(ctx context.Context, pod *corev1.Pod) (string, error) {
	resp, err := s.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{cri.LabelPodUID: string(pod.UID)},
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}})
	if err != nil {
		return "", err
	}
	items := resp.GetItems()
	if len(items) == 0 {
		return "", fmt.Errorf("failed to find sandbox for pod %q: %w", pod.Namespace+"/"+pod.Name, cri.ErrNotFound)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].CreatedAt > items[j].CreatedAt })
	return items[0].Id, nil
}
