package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// servePodStream answers logs, exec, attach and port-forward as upstream's
// API server does up to the point where it would connect to the kubelet:
// the pod must exist, the container must be one of the pod's, and the pod
// must be on a node. Skiff does not proxy to kubelets yet, so a pod on a
// node gets the error upstream gives when the kubelet cannot be reached.
func (s *Server) servePodStream(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	if info.Subresource != "log" {
		if err := s.admitConnect(r, info, e); err != nil {
			return err
		}
	}
	obj, err := e.store.Get(r.Context(), info.Namespace, info.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pod := storage.Unwrap(obj).(*corev1.Pod)
	if info.Subresource != "portforward" {
		if err := checkStreamContainer(pod, r.URL.Query().Get("container")); err != nil {
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
	return apierrors.NewInternalError(fmt.Errorf("error dialing backend: no kubelet serves node %q at %s:%d (skiff does not run or proxy to kubelets yet)",
		pod.Spec.NodeName, host, port))
}

// checkStreamContainer applies upstream's container choice: an empty name
// means the only container; otherwise the name must be one of the pod's.
func checkStreamContainer(pod *corev1.Pod, name string) error {
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
			return nil
		case 0:
			return apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		msg := fmt.Sprintf("a container name must be specified for pod %s, choose one of: [%s]", pod.Name, strings.Join(names, " "))
		if len(initNames) > 0 {
			msg += fmt.Sprintf(" or one of the init containers: [%s]", strings.Join(initNames, " "))
		}
		if len(ephemeral) > 0 {
			msg += fmt.Sprintf(" or one of the ephemeral containers: [%s]", strings.Join(ephemeral, " "))
		}
		return apierrors.NewBadRequest(msg)
	}
	if slices.Contains(names, name) || slices.Contains(initNames, name) || slices.Contains(ephemeral, name) {
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// kubeletAddress is where upstream would reach a node's kubelet: its
// preferred address and the kubelet endpoint port it reports.
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
	for _, t := range []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalIP, corev1.NodeInternalDNS, corev1.NodeExternalDNS, corev1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
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
