package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/registry"
)

// componentstatuses (core/v1, deprecated since 1.19 but still served) is
// computed on each read: the storage backend and the scheduler and
// controller manager health endpoints, probed as upstream probes them.

// defaultComponentHealthz are the health endpoints upstream probes for
// componentstatuses (the scheduler's and controller manager's secure
// ports on this host).
func defaultComponentHealthz() map[string]string {
	return map[string]string{
		"scheduler":          "https://127.0.0.1:10259/healthz",
		"controller-manager": "https://127.0.0.1:10257/healthz",
	}
}

const componentStatusWarning = "v1 ComponentStatus is deprecated in v1.19+"

// componentStatusProbeTimeout bounds each probe.
const componentStatusProbeTimeout = 2 * time.Second

var grComponentStatuses = schema.GroupResource{Resource: "componentstatuses"}

// installComponentStatuses adds the read-only componentstatuses endpoint.
func (s *Server) installComponentStatuses() {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "componentstatuses"}
	def := &registry.Definition{Version: "v1", Resource: "componentstatuses", Kind: "ComponentStatus", ListKind: "ComponentStatusList",
		Singular: "componentstatus", ShortNames: []string{"cs"},
		New:     func() runtime.Object { return &corev1.ComponentStatus{} },
		NewList: func() runtime.Object { return &corev1.ComponentStatusList{} }, Strategy: &registry.Strategy{}}
	s.endpoints[gvr] = &endpoint{
		def: def, gvr: gvr, gvk: gvr.GroupVersion().WithKind("ComponentStatus"), listGVK: gvr.GroupVersion().WithKind("ComponentStatusList"),
		newObj: def.New, newList: def.NewList, verbs: map[string]bool{"get": true, "list": true},
		qualified: grComponentStatuses, computed: true,
	}
}

// serveComponentStatuses answers get and list.
func (s *Server) serveComponentStatuses(w http.ResponseWriter, r *http.Request, info *RequestInfo, e *endpoint) error {
	addWarning(w, componentStatusWarning)
	if info.Subresource != "" {
		return pageNotFound()
	}
	m, err := negotiate(r.Header.Get("Accept"), true, func(m mediaType) bool { return m.As == "" || m.As == "Table" })
	if err != nil {
		return err
	}
	statuses := s.probeComponents(r.Context())
	switch info.Verb {
	case "get":
		for _, cs := range statuses {
			if cs.Name == info.Name {
				return s.writeTransformed(w, r, http.StatusOK, m, e, cs)
			}
		}
		return apierrors.NewNotFound(grComponentStatuses, info.Name)
	case "list":
		if m.As == "Table" {
			objs := make([]runtime.Object, len(statuses))
			for i := range statuses {
				objs[i] = statuses[i]
			}
			t, err := s.toTable(r, e, objs, metav1.ListMeta{}, false)
			if err != nil {
				return err
			}
			s.writeObject(w, r, http.StatusOK, m, t)
			return nil
		}
		list := &corev1.ComponentStatusList{}
		for _, cs := range statuses {
			list.Items = append(list.Items, *cs)
		}
		list.SetGroupVersionKind(e.listGVK)
		s.writeObject(w, r, http.StatusOK, m, list)
		return nil
	}
	return methodNotSupported(grComponentStatuses, info.Verb)
}

// probeComponents checks storage and each component's health endpoint.
func (s *Server) probeComponents(ctx context.Context) []*corev1.ComponentStatus {
	ctx, cancel := context.WithTimeout(ctx, componentStatusProbeTimeout)
	defer cancel()
	var out []*corev1.ComponentStatus
	add := func(name string, err error) {
		cond := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}
		if err != nil {
			cond = corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Error: err.Error()}
		}
		cs := &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: name}, Conditions: []corev1.ComponentCondition{cond}}
		cs.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ComponentStatus"))
		out = append(out, cs)
	}
	_, err := s.stores[grNamespaces].Storage.CurrentRevision(ctx)
	add("etcd-0", err)
	targets := s.cfg.ComponentHealthz
	if targets == nil {
		targets = defaultComponentHealthz()
	}
	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a health probe, as upstream's
	defer hc.CloseIdleConnections()
	for _, n := range names {
		add(n, probeHealthz(ctx, hc, targets[n]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func probeHealthz(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("unhealthy: %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
