package apiserver

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
	"github.com/skiff-sh/skiff/pkg/apiserver/admission/webhook"
	"github.com/skiff-sh/skiff/pkg/registry"
)

// newAdmission builds the admission chain the flags ask for, in
// upstream's order.
func (s *Server) newAdmission() (*admission.Chain, error) {
	names, err := admission.EnabledPlugins(s.cfg.EnableAdmissionPlugins, s.cfg.DisableAdmissionPlugins)
	if err != nil {
		return nil, err
	}
	hooks := webhook.Config{Getter: s, Authorizer: s.authorizer, Logger: s.cfg.Logger}
	external := s.policyPlugins()
	external[webhook.MutatingPluginName] = webhook.NewMutating(hooks)
	external[webhook.ValidatingPluginName] = webhook.NewValidating(hooks)
	chain, skipped := admission.NewChainFor(names, admission.Deps{Getter: s, Status: s, Clock: s.cfg.Clock, Rand: s.cfg.Rand, Authorizer: s.authorizer,
		External: external, PodTopologyLabels: s.cfg.PodTopologyLabelsAdmission})
	var explicit []string
	for _, n := range skipped {
		for _, e := range s.cfg.EnableAdmissionPlugins {
			if e == n {
				explicit = append(explicit, n)
			}
		}
	}
	if len(explicit) > 0 {
		s.cfg.Logger.Warn("admission plugins enabled but not implemented by skiff, left out", "plugins", strings.Join(explicit, ","))
	}
	s.cfg.Logger.Debug("admission chain", "plugins", strings.Join(chain.Plugins(), ","))
	return chain, nil
}

// UpdateStatus implements admission.StatusWriter: obj's status is stored
// if the stored object still has obj's resourceVersion.
func (s *Server) UpdateStatus(ctx context.Context, gr schema.GroupResource, obj runtime.Object) (runtime.Object, error) {
	var status *registry.Store
	for _, e := range s.endpoints {
		if e.qualified == gr && e.version == nil && e.status != nil {
			status = e.status
			break
		}
	}
	if status == nil {
		return nil, fmt.Errorf("%s has no status subresource", gr)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	pre := &metav1.Preconditions{}
	if rv := m.GetResourceVersion(); rv != "" {
		pre.ResourceVersion = &rv
	}
	out, _, err := status.Update(ctx, m.GetNamespace(), m.GetName(), &objInfo{pre: pre, update: func(context.Context, runtime.Object) (runtime.Object, error) {
		return obj.DeepCopyObject(), nil
	}}, nil, nil, registry.UpdateOptions{NoCreate: true})
	return out, err
}
