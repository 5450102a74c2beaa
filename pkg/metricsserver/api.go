package metricsserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var everything = labels.Everything()

var (
	nodeResource = schema.GroupResource{Group: Group, Resource: "nodemetrics"}
	podResource  = schema.GroupResource{Group: Group, Resource: "podmetrics"}
	apiVersion   = Group + "/" + Version
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		st = apierrors.NewInternalError(err)
	}
	s := st.Status()
	s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	writeJSON(w, int(s.Code), s)
}

// serve routes /apis, /apis/metrics.k8s.io and /apis/metrics.k8s.io/v1beta1/...
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, apierrors.NewMethodNotSupported(schema.GroupResource{Group: Group}, r.Method))
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	gv := metav1.GroupVersionForDiscovery{GroupVersion: apiVersion, Version: Version}
	group := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: Group,
		Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
	switch path {
	case "/apis":
		writeJSON(w, http.StatusOK, metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{group}})
		return
	case "/apis/" + Group:
		writeJSON(w, http.StatusOK, group)
		return
	case "/apis/" + apiVersion:
		writeJSON(w, http.StatusOK, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: apiVersion, APIResources: []metav1.APIResource{
				{Name: "nodes", Kind: "NodeMetrics", Verbs: metav1.Verbs{"get", "list"}},
				{Name: "pods", Kind: "PodMetrics", Namespaced: true, Verbs: metav1.Verbs{"get", "list"}},
			}})
		return
	}
	rest, ok := strings.CutPrefix(path, "/apis/"+apiVersion+"/")
	if !ok {
		writeError(w, apierrors.NewNotFound(schema.GroupResource{}, ""))
		return
	}
	parts := strings.Split(rest, "/")
	q := r.URL.Query()
	lsel, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		writeError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	fsel, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		writeError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	switch {
	case len(parts) == 1 && parts[0] == "nodes":
		writeJSON(w, http.StatusOK, s.listNodes(lsel, fsel))
	case len(parts) == 2 && parts[0] == "nodes":
		m, err := s.getNode(parts[1])
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, m)
	case len(parts) == 1 && parts[0] == "pods":
		writeJSON(w, http.StatusOK, s.listPods("", lsel, fsel))
	case len(parts) == 3 && parts[0] == "namespaces" && parts[2] == "pods":
		writeJSON(w, http.StatusOK, s.listPods(parts[1], lsel, fsel))
	case len(parts) == 4 && parts[0] == "namespaces" && parts[2] == "pods":
		m, err := s.getPod(parts[1], parts[3])
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, m)
	default:
		writeError(w, apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: parts[0]}, ""))
	}
}

func (s *Server) nodeMetrics(n *corev1.Node) (*NodeMetrics, bool) {
	s.mu.RLock()
	st := s.state[n.Name]
	s.mu.RUnlock()
	if st == nil {
		return nil, false
	}
	u, ok := st.nodeUsage()
	if !ok {
		return nil, false
	}
	return &NodeMetrics{TypeMeta: metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: apiVersion},
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: metav1.NewTime(s.cfg.Clock.Now())},
		Timestamp:  metav1.NewTime(u.ts), Window: metav1.Duration{Duration: u.window},
		Usage: corev1.ResourceList{corev1.ResourceCPU: u.cpu, corev1.ResourceMemory: u.mem}}, true
}

func (s *Server) getNode(name string) (*NodeMetrics, error) {
	n, err := s.nodes.Get(name)
	if err != nil {
		return nil, apierrors.NewNotFound(nodeResource, name)
	}
	m, ok := s.nodeMetrics(n)
	if !ok {
		return nil, apierrors.NewNotFound(nodeResource, name)
	}
	return m, nil
}

func (s *Server) listNodes(lsel labels.Selector, fsel fields.Selector) *NodeMetricsList {
	out := &NodeMetricsList{TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: apiVersion}, Items: []NodeMetrics{}}
	nodes, _ := s.nodes.List(lsel)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		if !fsel.Matches(fields.Set{"metadata.name": n.Name}) {
			continue
		}
		if m, ok := s.nodeMetrics(n); ok {
			out.Items = append(out.Items, *m)
		}
	}
	return out
}

func (s *Server) podMetrics(p *corev1.Pod) (*PodMetrics, bool) {
	if p.Spec.NodeName == "" {
		return nil, false
	}
	s.mu.RLock()
	st := s.state[p.Spec.NodeName]
	s.mu.RUnlock()
	if st == nil {
		return nil, false
	}
	cs, ts, window, ok := st.podUsage(podKey{p.Namespace, p.Name})
	if !ok {
		return nil, false
	}
	return &PodMetrics{TypeMeta: metav1.TypeMeta{Kind: "PodMetrics", APIVersion: apiVersion},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, CreationTimestamp: metav1.NewTime(s.cfg.Clock.Now())},
		Timestamp:  metav1.NewTime(ts), Window: metav1.Duration{Duration: window}, Containers: cs}, true
}

func (s *Server) getPod(ns, name string) (*PodMetrics, error) {
	p, err := s.pods.Namespace(ns).Get(name)
	if err != nil {
		return nil, apierrors.NewNotFound(podResource, fmt.Sprintf("%s/%s", ns, name))
	}
	m, ok := s.podMetrics(p)
	if !ok {
		return nil, apierrors.NewNotFound(podResource, fmt.Sprintf("%s/%s", ns, name))
	}
	return m, nil
}

func (s *Server) listPods(ns string, lsel labels.Selector, fsel fields.Selector) *PodMetricsList {
	out := &PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: apiVersion}, Items: []PodMetrics{}}
	var pods []*corev1.Pod
	if ns == "" {
		pods, _ = s.pods.List(lsel)
	} else {
		pods, _ = s.pods.Namespace(ns).List(lsel)
	}
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	for _, p := range pods {
		if !fsel.Matches(fields.Set{"metadata.name": p.Name, "metadata.namespace": p.Namespace}) {
			continue
		}
		if m, ok := s.podMetrics(p); ok {
			out.Items = append(out.Items, *m)
		}
	}
	return out
}
