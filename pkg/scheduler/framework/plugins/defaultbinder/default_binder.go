package defaultbinder

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

// Name is the plugin's name in configurations.
const Name = names.DefaultBinder

// DefaultBinder binds pods through the API.
type DefaultBinder struct {
	handle framework.Handle
}

var _ framework.BindPlugin = &DefaultBinder{}

// New returns the plugin (it has no args).
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &DefaultBinder{handle: h}, nil
}

// Name returns the plugin's name.
func (*DefaultBinder) Name() string { return Name }

// Bind creates the pod's Binding to nodeName.
func (b *DefaultBinder) Bind(ctx context.Context, _ *framework.CycleState, p *corev1.Pod, nodeName string) *framework.Status {
	c := b.handle.Client()
	if c == nil {
		return framework.AsStatus(errors.New("DefaultBinder: the framework has no API client"))
	}
	binding := &corev1.Binding{
		TypeMeta:   metav1.TypeMeta{Kind: "Binding", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if b.handle.Logger() != nil {
		b.handle.Logger().Debug("Attempting to bind pod to node", "pod", p.Namespace+"/"+p.Name, "node", nodeName)
	}
	if err := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(p.Namespace).Subresource(ctx, p.Name, "binding", binding, nil); err != nil {
		return framework.AsStatus(err)
	}
	return nil
}
