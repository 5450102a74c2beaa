package admission

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skiff-sh/skiff/pkg/quota"
)

// The plugins below are off by default upstream; --enable-admission-plugins
// turns them on.

// containerPaths visits every container of a pod with its field path
// (init, regular, ephemeral), as upstream's VisitContainersWithPath.
func containerPaths(spec *corev1.PodSpec, f func(c *corev1.Container, p *field.Path)) {
	base := field.NewPath("spec")
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i], base.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		f(&spec.Containers[i], base.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		f((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), base.Child("ephemeralContainers").Index(i))
	}
}

// alwaysPullImages is upstream's AlwaysPullImages: every container (and
// image volume) of a new pod, or of a pod update bringing a new image,
// pulls Always.
type alwaysPullImages struct{}

func (alwaysPullImages) Name() string              { return "AlwaysPullImages" }
func (alwaysPullImages) Handles(op Operation) bool { return op == Create || op == Update }

func (alwaysPullImages) pod(a *Attributes) (*corev1.Pod, bool, error) {
	if a.Subresource != "" || a.Resource != grPods {
		return nil, false, nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil, false, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if a.Operation == Update {
		if old, ok := a.OldObject.(*corev1.Pod); ok {
			images := map[string]bool{}
			containerPaths(&old.Spec, func(c *corev1.Container, _ *field.Path) { images[c.Image] = true })
			fresh := false
			containerPaths(&pod.Spec, func(c *corev1.Container, _ *field.Path) { fresh = fresh || !images[c.Image] })
			if !fresh {
				return nil, false, nil
			}
		}
	}
	return pod, true, nil
}

func (p alwaysPullImages) Admit(_ context.Context, a *Attributes) error {
	pod, ok, err := p.pod(a)
	if !ok {
		return err
	}
	containerPaths(&pod.Spec, func(c *corev1.Container, _ *field.Path) { c.ImagePullPolicy = corev1.PullAlways })
	for i := range pod.Spec.Volumes {
		if v := pod.Spec.Volumes[i].Image; v != nil {
			v.PullPolicy = corev1.PullAlways
		}
	}
	return nil
}

func (p alwaysPullImages) Validate(_ context.Context, a *Attributes) error {
	pod, ok, err := p.pod(a)
	if !ok {
		return err
	}
	var errs []error
	always := []string{string(corev1.PullAlways)}
	containerPaths(&pod.Spec, func(c *corev1.Container, path *field.Path) {
		if c.ImagePullPolicy != corev1.PullAlways {
			errs = append(errs, forbidden(a, field.NotSupported(path.Child("imagePullPolicy"), c.ImagePullPolicy, always)))
		}
	})
	for i, v := range pod.Spec.Volumes {
		if v.Image != nil && v.Image.PullPolicy != corev1.PullAlways {
			errs = append(errs, forbidden(a, field.NotSupported(field.NewPath("spec", "volumes").Index(i).Child("image", "pullPolicy"), v.Image.PullPolicy, always)))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return utilerrors.NewAggregate(errs)
}

// limitPodHardAntiAffinityTopology is upstream's plugin of that name:
// required pod anti-affinity may only use the hostname topology key.
type limitPodHardAntiAffinityTopology struct{}

func (limitPodHardAntiAffinityTopology) Name() string { return "LimitPodHardAntiAffinityTopology" }
func (limitPodHardAntiAffinityTopology) Handles(op Operation) bool {
	return op == Create || op == Update
}

func (limitPodHardAntiAffinityTopology) Validate(_ context.Context, a *Attributes) error {
	if a.Subresource != "" || a.Resource != grPods {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if aff := pod.Spec.Affinity; aff != nil && aff.PodAntiAffinity != nil {
		for _, t := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if t.TopologyKey != corev1.LabelHostname {
				return apierrors.NewForbidden(a.Resource, pod.Name, fmt.Errorf("affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey %v but only key %v is allowed", t.TopologyKey, corev1.LabelHostname))
			}
		}
	}
	return nil
}

// denyServiceExternalIPs is upstream's DenyServiceExternalIPs: no new
// spec.externalIPs (keeping or removing existing ones is allowed).
type denyServiceExternalIPs struct{}

func (denyServiceExternalIPs) Name() string              { return "DenyServiceExternalIPs" }
func (denyServiceExternalIPs) Handles(op Operation) bool { return op == Create || op == Update }

func (denyServiceExternalIPs) Validate(_ context.Context, a *Attributes) error {
	if a.Resource != grServicesQ || a.Subresource != "" {
		return nil
	}
	svc, ok := a.Object.(*corev1.Service)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("Expected Service resource, got: %v", a.Kind))
	}
	var old []string
	if o, ok := a.OldObject.(*corev1.Service); ok {
		old = o.Spec.ExternalIPs
	}
	for _, ip := range svc.Spec.ExternalIPs {
		if !slices.Contains(old, ip) {
			return forbidden(a, errors.New("Use of external IPs is denied by admission control"))
		}
	}
	return nil
}

// namespaceExists is upstream's NamespaceExists: a namespaced request in
// a namespace that does not exist is refused with NotFound.
type namespaceExists struct{ d Deps }

func (*namespaceExists) Name() string { return "NamespaceExists" }
func (*namespaceExists) Handles(op Operation) bool {
	return op == Create || op == Update || op == Delete
}

func (p *namespaceExists) Validate(ctx context.Context, a *Attributes) error {
	if a.Namespace == "" || a.Kind == (corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind()) {
		return nil
	}
	_, err := p.d.Getter.Get(ctx, grNamespaces, "", a.Namespace)
	if apierrors.IsNotFound(err) {
		_, err = p.d.Getter.GetConsistent(ctx, grNamespaces, "", a.Namespace)
		if apierrors.IsNotFound(err) {
			return err
		}
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return nil
}

// extendedResourceToleration is upstream's ExtendedResourceToleration: a
// pod requesting an extended resource tolerates the NoSchedule taint of
// that name (key = the resource, operator Exists).
type extendedResourceToleration struct{}

func (extendedResourceToleration) Name() string              { return "ExtendedResourceToleration" }
func (extendedResourceToleration) Handles(op Operation) bool { return op == Create }

func (extendedResourceToleration) Admit(_ context.Context, a *Attributes) error {
	if a.Subresource != "" || a.Resource != grPods {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *core.Pod but got %T", a.Object))
	}
	set := map[string]bool{}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			for name := range c.Resources.Requests {
				if quota.IsExtendedResourceName(name) {
					set[string(name)] = true
				}
			}
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := corev1.Toleration{Key: n, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(o corev1.Toleration) bool {
			return o.Key == t.Key && o.Operator == t.Operator && o.Value == t.Value && o.Effect == t.Effect
		}) {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
		}
	}
	return nil
}
