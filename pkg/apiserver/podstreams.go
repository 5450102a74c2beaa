package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/streamtranslator"
	"github.com/skiff-sh/skiff/pkg/upgradeproxy"
)

// servePodStream answers logs, exec, attach and port-forward as upstream's
// API server does: the pod must exist, the container must be one of the
// pod's (the only one when none is named), the pod must be on a node; then
// the request goes to the node's kubelet (pkg/kubelet/server) over TLS
// with the kubelet client certificate: a log is streamed back (flushed as
// it comes, for follow), an exec, attach or port-forward upgrade request
// is proxied and the upgraded connections spliced (SPDY), except that a
// WebSocket exec or attach of the v5/v4 channel protocols and a WebSocket
// port-forward tunneling SPDY are translated (pkg/streamtranslator) to
// SPDY toward the kubelet, as upstream's API server does.
func (s *Server) servePodStream(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	if info.Subresource != "log" {
		if err := s.admitConnect(r, info, e); err != nil {
			return err
		}
	}
	var logQuery url.Values
	if info.Subresource == "log" {
		q, err := podLogQuery(info.Name, r.URL.Query())
		if err != nil {
			return err
		}
		logQuery = q
	}
	obj, err := e.store.Get(r.Context(), info.Namespace, info.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pod := storage.Unwrap(obj).(*corev1.Pod)
	container := ""
	if info.Subresource != "portforward" {
		if container, err = checkStreamContainer(pod, r.URL.Query().Get("container")); err != nil {
			return err
		}
	}
	if pod.Spec.NodeName == "" {
		if info.Subresource == "log" {
			// Upstream answers an unscheduled pod's logs with an empty body.
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusOK)
			return nil
		}
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	host, port, err := s.kubeletAddress(r.Context(), pod.Spec.NodeName)
	if err != nil {
		return err
	}
	loc := &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(int(port)))}
	q := r.URL.Query()
	params := url.Values{}
	switch info.Subresource {
	case "log":
		loc.Path, loc.RawQuery = fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container), logQuery.Encode()
		return s.proxyKubeletLog(w, r, loc, pod.Name)
	case "exec", "attach":
		for _, p := range []struct{ from, to string }{{"stdin", "input"}, {"stdout", "output"}, {"stderr", "error"}, {"tty", "tty"}} {
			if queryBool(q, p.from) {
				params.Add(p.to, "1")
			}
		}
		if info.Subresource == "exec" {
			params["command"] = q["command"]
		}
		loc.Path = fmt.Sprintf("/%s/%s/%s/%s", info.Subresource, pod.Namespace, pod.Name, container)
	case "portforward":
		var ports []string
		for _, p := range q["ports"] {
			for _, one := range strings.Split(p, ",") {
				if n, err := strconv.ParseUint(strings.TrimSpace(one), 10, 16); err == nil {
					ports = append(ports, strconv.FormatUint(n, 10))
				}
			}
		}
		if len(ports) > 0 {
			params.Add("port", strings.Join(ports, ","))
		}
		loc.Path = fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name)
	}
	loc.RawQuery = params.Encode()
	// WebSocket clients (kubectl >= 1.30) are translated to SPDY toward
	// the kubelet, as upstream's API server does.
	switch {
	case info.Subresource == "portforward" && streamtranslator.IsTunnelingRequest(r):
		tc, err := s.kubeletTLS()
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		s.metrics.websocketStreaming.WithLabelValues(info.Subresource, "translated_at_apiserver").Inc()
		code, err := streamtranslator.ServePortForward(w, r, loc, upgradeproxy.Options{TLS: tc, Stop: s.stopping})
		if err != nil {
			return unknownError(err)
		}
		s.metrics.streamTunnel.WithLabelValues(strconv.Itoa(code)).Inc()
		return nil
	case info.Subresource != "portforward" && streamtranslator.IsChannelRequest(r):
		tc, err := s.kubeletTLS()
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		s.metrics.websocketStreaming.WithLabelValues(info.Subresource, "translated_at_apiserver").Inc()
		opts := streamtranslator.Options{Stdin: queryBool(q, "stdin"), Stdout: queryBool(q, "stdout"), Stderr: queryBool(q, "stderr"), TTY: queryBool(q, "tty")}
		code := streamtranslator.ServeRemoteCommand(w, r, loc, opts, upgradeproxy.Options{TLS: tc, Stop: s.stopping})
		s.metrics.streamTranslator.WithLabelValues(strconv.Itoa(code)).Inc()
		return nil
	case strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		// Other WebSocket protocols go to the kubelet as they are.
		s.metrics.websocketStreaming.WithLabelValues(info.Subresource, "proxied_to_kubelet").Inc()
	}
	return s.proxyKubeletUpgrade(w, r, loc)
}

// podLogQuery is the kubelet's query for a pods/log request: the
// PodLogOptions of the request's query, checked as upstream's
// ValidatePodLogOptions does (422 Invalid PodLogOptions), re-encoded as
// upstream's LogLocation does.
func podLogQuery(name string, q url.Values) (url.Values, error) {
	out := url.Values{}
	var errs field.ErrorList
	for _, b := range []string{"follow", "previous", "timestamps"} {
		if queryBool(q, b) {
			out.Set(b, "true")
		}
	}
	intParam := func(key string) (*int64, error) {
		v := q.Get(key)
		if v == "" {
			return nil, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: %v", key, err))
		}
		return &n, nil
	}
	tail, err := intParam("tailLines")
	if err != nil {
		return nil, err
	}
	limit, err := intParam("limitBytes")
	if err != nil {
		return nil, err
	}
	since, err := intParam("sinceSeconds")
	if err != nil {
		return nil, err
	}
	var sinceTime *time.Time
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("sinceTime: %v", err))
		}
		sinceTime = &t
	}
	if tail != nil {
		if *tail < 0 {
			errs = append(errs, field.Invalid(field.NewPath("tailLines"), *tail, "must be greater than or equal to 0"))
		}
		out.Set("tailLines", strconv.FormatInt(*tail, 10))
	}
	if limit != nil {
		if *limit < 1 {
			errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *limit, "must be greater than 0"))
		}
		out.Set("limitBytes", strconv.FormatInt(*limit, 10))
	}
	switch {
	case since != nil && sinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case since != nil:
		if *since < 1 {
			errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *since, "must be greater than 0"))
		}
		out.Set("sinceSeconds", strconv.FormatInt(*since, 10))
	case sinceTime != nil:
		out.Set("sinceTime", sinceTime.Format(time.RFC3339))
	}
	// Upstream's PodLogsQuerySplitStreams is off by default.
	if q.Get("stream") != "" {
		errs = append(errs, field.Forbidden(field.NewPath("stream"), "may not be specified"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, name, errs)
	}
	return out, nil
}

// kubeletTLS is the TLS configuration toward kubelets.
func (s *Server) kubeletTLS() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(s.cfg.KubeletCAPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(s.cfg.KubeletCAPEM) {
			return nil, errors.New("kubelet certificate authority: no certificates")
		}
		cfg.RootCAs = pool
	} else {
		cfg.InsecureSkipVerify = true //nolint:gosec // upstream's default without --kubelet-certificate-authority
	}
	if s.cfg.KubeletClientCert != nil {
		cfg.Certificates = []tls.Certificate{*s.cfg.KubeletClientCert}
	}
	return cfg, nil
}

// kubeletTransport is the shared HTTP transport to kubelets.
func (s *Server) kubeletTransport() (*http.Transport, error) {
	s.kubeletOnce.Do(func() {
		tc, err := s.kubeletTLS()
		if err != nil {
			s.kubeletErr = err
			return
		}
		s.kubeletRT = &http.Transport{TLSClientConfig: tc, Proxy: nil,
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second, MaxIdleConnsPerHost: 25, IdleConnTimeout: 90 * time.Second}
	})
	return s.kubeletRT, s.kubeletErr
}

// stripCredentials drops what authenticated the client to this server
// (its token, impersonation): the kubelet sees the API server's identity.
func stripCredentials(h http.Header) {
	h.Del("Authorization")
	for k := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Impersonate-") {
			delete(h, k)
		}
	}
}

// proxyKubeletLog streams the kubelet's answer to a containerLogs request:
// an error status becomes the API error upstream's response checker makes
// of it (500 InternalError, 400 BadRequest, others with the body as the
// message); a log is copied as it comes, flushed after each read.
func (s *Server) proxyKubeletLog(w http.ResponseWriter, r *http.Request, loc *url.URL, name string) error {
	rt, err := s.kubeletTransport()
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	// PodLogOptions.insecureSkipTLSVerifyBackend: the kubelet's serving
	// certificate is not checked for this request (it matters only with
	// a kubelet certificate authority).
	if queryBool(r.URL.Query(), "insecureSkipTLSVerifyBackend") && len(s.cfg.KubeletCAPEM) > 0 {
		rt = rt.Clone()
		rt.TLSClientConfig = rt.TLSClientConfig.Clone()
		rt.TLSClientConfig.RootCAs, rt.TLSClientConfig.InsecureSkipVerify = nil, true
		defer rt.CloseIdleConnections()
	}
	// A followed log ends when the server shuts down, as watches do.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	resp, err := (&http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return unknownError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 50000))
		switch resp.StatusCode {
		case http.StatusInternalServerError:
			return apierrors.NewInternalError(errors.New(string(body)))
		case http.StatusBadRequest:
			return apierrors.NewBadRequest(string(body))
		}
		return apierrors.NewGenericServerResponse(resp.StatusCode, "", schema.GroupResource{Resource: "pods/log"}, name, string(body), 0, false)
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil
			}
			_ = rc.Flush()
		}
		if err != nil {
			return nil
		}
	}
}

// proxyKubeletUpgrade passes an upgrade request (exec, attach,
// port-forward, nodes/proxy) to the kubelet at loc and splices the
// upgraded connections; a request that is not an upgrade is upstream's
// 400 "Upgrade request required".
func (s *Server) proxyKubeletUpgrade(w http.ResponseWriter, r *http.Request, loc *url.URL) error {
	if !upgradeproxy.IsUpgradeRequest(r) {
		return apierrors.NewBadRequest("Upgrade request required")
	}
	tc, err := s.kubeletTLS()
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	// A session ends when the server shuts down, as watches do.
	err = upgradeproxy.Proxy(w, r, loc, upgradeproxy.Options{TLS: tc, Header: stripCredentials, Stop: s.stopping})
	if err != nil {
		return unknownError(err)
	}
	return nil
}

// unknownError is what upstream's API server answers for an error that is
// not an API status (the kubelet unreachable): 500 with no reason and the
// error as the message, which kubectl shows as "Error from server: error
// dialing backend: dial tcp ...".
func unknownError(err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonUnknown, Message: err.Error()}}
}

// checkStreamContainer applies upstream's container choice: an empty name
// means the only container; otherwise the name must be one of the pod's.
func checkStreamContainer(pod *corev1.Pod, name string) (string, error) {
	var names, initNames, ephemeral []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.InitContainers {
		initNames = append(initNames, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		ephemeral = append(ephemeral, c.Name)
	}
	if name == "" {
		switch len(names) {
		case 1:
			return names[0], nil
		case 0:
			return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		msg := fmt.Sprintf("a container name must be specified for pod %s, choose one of: [%s]", pod.Name, strings.Join(names, " "))
		if len(initNames) > 0 {
			msg += fmt.Sprintf(" or one of the init containers: [%s]", strings.Join(initNames, " "))
		}
		if len(ephemeral) > 0 {
			msg += fmt.Sprintf(" or one of the ephemeral containers: [%s]", strings.Join(ephemeral, " "))
		}
		return "", apierrors.NewBadRequest(msg)
	}
	if slices.Contains(names, name) || slices.Contains(initNames, name) || slices.Contains(ephemeral, name) {
		return name, nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// kubeletAddress is where a node's kubelet is reached: its first address
// of the preferred types and the kubelet endpoint port it reports (10250
// when none). A node without such an address is reached by its name.
func (s *Server) kubeletAddress(ctx context.Context, nodeName string) (string, int32, error) {
	obj, err := s.Get(ctx, schema.GroupResource{Resource: "nodes"}, "", nodeName)
	if err != nil {
		return "", 0, err
	}
	node := obj.(*corev1.Node)
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		port = 10250
	}
	types := s.cfg.KubeletPreferredAddressTypes
	if len(types) == 0 {
		types = []string{string(corev1.NodeInternalIP), string(corev1.NodeExternalIP), string(corev1.NodeHostName)}
	}
	for _, t := range types {
		for _, a := range node.Status.Addresses {
			if string(a.Type) == t && a.Address != "" {
				return a.Address, port, nil
			}
		}
	}
	return nodeName, port, nil
}

// admitConnect runs admission on a connect request (exec, attach,
// port-forward) as upstream's connect handler does before it reaches the
// pod: operation CONNECT, the object the request's options (PodExecOptions,
// PodAttachOptions, PodPortForwardOptions) built from its query, mutating
// then validating plugins (a mutation changes nothing of the request).
func (s *Server) admitConnect(r *http.Request, info *RequestInfo, e *endpoint) error {
	obj, gvk := connectOptions(info.Subresource, r.URL.Query())
	if obj == nil {
		return nil
	}
	ctx := r.Context()
	a := s.attributes(ctx, admission.Connect, info, e, obj, nil, writeOptions{})
	a.Kind, a.RequestKind, a.Options = gvk.GroupKind(), gvk, nil
	a.Versions = subresourceVersions{v: &admissionVersions{s: s, e: e}, gvk: gvk, newObj: func() runtime.Object {
		return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	}}
	if err := s.admission.Admit(ctx, a); err != nil {
		return err
	}
	return s.admission.Validate(ctx, a)
}

// connectOptions is the options object of a pod connect subresource, its
// fields from the query as upstream's parameter codec reads them.
func connectOptions(sub string, q url.Values) (runtime.Object, schema.GroupVersionKind) {
	gvk := corev1.SchemeGroupVersion.WithKind("")
	var obj runtime.Object
	switch sub {
	case "exec":
		gvk.Kind = "PodExecOptions"
		obj = &corev1.PodExecOptions{Stdin: queryBool(q, "stdin"), Stdout: queryBool(q, "stdout"), Stderr: queryBool(q, "stderr"),
			TTY: queryBool(q, "tty"), Container: q.Get("container"), Command: q["command"]}
	case "attach":
		gvk.Kind = "PodAttachOptions"
		obj = &corev1.PodAttachOptions{Stdin: queryBool(q, "stdin"), Stdout: queryBool(q, "stdout"), Stderr: queryBool(q, "stderr"),
			TTY: queryBool(q, "tty"), Container: q.Get("container")}
	case "portforward":
		gvk.Kind = "PodPortForwardOptions"
		pf := &corev1.PodPortForwardOptions{}
		for _, p := range q["ports"] {
			if n, err := strconv.ParseInt(p, 10, 32); err == nil {
				pf.Ports = append(pf.Ports, int32(n))
			}
		}
		obj = pf
	default:
		return nil, gvk
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, gvk
}

// queryBool is upstream's query parameter conversion to bool: absent is
// false, "false" and "0" (any case) are false, anything else true.
func queryBool(q url.Values, key string) bool {
	v, ok := q[key]
	if !ok || len(v) == 0 {
		return false
	}
	switch strings.ToLower(v[0]) {
	case "false", "0":
		return false
	}
	return true
}

// serveNodeProxy is nodes/<name>/proxy[/<path>]: the request goes to the
// node's kubelet at <path> (its query kept), with the API server's
// kubelet client identity; an upgrade request is spliced, any other
// answer streamed back as the kubelet gives it (status, headers, body).
func (s *Server) serveNodeProxy(w http.ResponseWriter, r *http.Request, info *RequestInfo, _ *endpoint) error {
	host, port, err := s.kubeletAddress(r.Context(), info.Name)
	if err != nil {
		return err
	}
	_, rest, _ := strings.Cut(r.URL.EscapedPath(), "/nodes/"+info.Name+"/proxy")
	if rest == "" {
		rest = "/"
	}
	loc := &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(int(port))), RawQuery: r.URL.RawQuery}
	if p, err := url.PathUnescape(rest); err == nil {
		loc.Path, loc.RawPath = p, rest
	} else {
		loc.Path = rest
	}
	if upgradeproxy.IsUpgradeRequest(r) {
		return s.proxyKubeletUpgrade(w, r, loc)
	}
	rt, err := s.kubeletTransport()
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var proxyErr error
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = loc
			pr.Out.Host = loc.Host
			stripCredentials(pr.Out.Header)
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			proxyErr = err
		},
	}
	proxy.ServeHTTP(w, r)
	if proxyErr != nil {
		return unknownError(fmt.Errorf("error trying to reach service: %w", proxyErr))
	}
	return nil
}
