package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// --- PodTopologyLabels -----------------------------------------------------

// podTopologyLabelKeys are the node labels upstream's PodTopologyLabels
// copies (its default configuration: exactly these two keys, no prefix
// matching).
var podTopologyLabelKeys = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

// podTopologyLabels is upstream's PodTopologyLabels plugin: on a create of
// pods/binding to a Node it copies the Node's topology.kubernetes.io/zone
// and topology.kubernetes.io/region labels onto the Binding's labels (the
// binding then writes them onto the pod); on a create of a pod that names
// its node it copies them onto the pod. Upstream enables the plugin by
// default but it does nothing unless the alpha feature gate
// PodTopologyLabelsAdmission is on (off in 1.34): Deps.PodTopologyLabels.
type podTopologyLabels struct{ d Deps }

func (*podTopologyLabels) Name() string              { return "PodTopologyLabels" }
func (*podTopologyLabels) Handles(op Operation) bool { return op == Create }

func (p *podTopologyLabels) Admit(ctx context.Context, a *Attributes) error {
	if !p.d.PodTopologyLabels || a.Resource != grPods {
		return nil
	}
	var labels *map[string]string
	var node string
	switch a.Subresource {
	case "":
		pod, ok := a.Object.(*corev1.Pod)
		if !ok {
			return errorf("expected Pod but got %T", a.Object)
		}
		if pod.Spec.NodeName == "" {
			return nil
		}
		labels, node = &pod.Labels, pod.Spec.NodeName
	case "binding":
		b, ok := a.Object.(*corev1.Binding)
		if !ok {
			return errorf("expected Binding but got %s", a.Kind.Kind)
		}
		// Only the kind is checked: the scheduler sets nothing else.
		if b.Target.Kind != "Node" {
			return nil
		}
		labels, node = &b.Labels, b.Target.Name
	default:
		return nil
	}
	obj, err := p.d.Getter.Get(ctx, grNodes, "", node)
	if apierrors.IsNotFound(err) {
		return nil // as upstream: an unknown node copies nothing
	}
	if err != nil {
		return err
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return nil
	}
	for _, k := range podTopologyLabelKeys {
		v, ok := n.Labels[k]
		if !ok {
			continue
		}
		if *labels == nil {
			*labels = map[string]string{}
		}
		(*labels)[k] = v
	}
	return nil
}
