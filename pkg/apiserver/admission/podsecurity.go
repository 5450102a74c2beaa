package admission

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/podsecurity"
)

// namespaceMaxPodsToCheck is how many existing pods a namespace's new
// enforce level is checked against (upstream's 3000).
const namespaceMaxPodsToCheck = 3000

// ignoredPodSubresources are the pod subresources PodSecurity never
// evaluates (upstream's list).
var ignoredPodSubresources = map[string]bool{
	"exec": true, "attach": true, "binding": true, "eviction": true, "log": true,
	"portforward": true, "proxy": true, "status": true,
}

// podSecurity is upstream's PodSecurity plugin with its default
// configuration (every mode privileged:latest, no exemptions): a
// namespace's pod-security.kubernetes.io labels choose the Pod Security
// Standards level (and version) pods are held to. enforce refuses a pod
// (403 "violates PodSecurity ..."), warn sends a Warning header ("would
// violate PodSecurity ..."), audit records an audit annotation (skiff has
// no audit log: it stays on the request's attributes). Workload resources
// with pod templates get warnings and audit annotations only. Changing a
// namespace's enforce level warns about the existing pods that violate it.
type podSecurity struct{ d Deps }

func newPodSecurity(d Deps) *podSecurity { return &podSecurity{d: d} }

func (*podSecurity) Name() string              { return "PodSecurity" }
func (*podSecurity) Handles(op Operation) bool { return op == Create || op == Update }

func (p *podSecurity) Validate(ctx context.Context, a *Attributes) error {
	switch {
	case a.Resource == grNamespaces:
		return p.validateNamespace(ctx, a)
	case a.Resource == grPods:
		return p.validatePod(ctx, a)
	case slices.Contains(podsecurity.PodControllerResources, a.Resource):
		return p.validateController(ctx, a)
	}
	return nil
}

func (p *podSecurity) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	obj, err := p.d.Getter.Get(ctx, grNamespaces, "", name)
	if apierrors.IsNotFound(err) {
		obj, err = p.d.Getter.GetConsistent(ctx, grNamespaces, "", name)
	}
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("unexpected namespace object %T", obj)
	}
	return ns, nil
}

func (p *podSecurity) validatePod(ctx context.Context, a *Attributes) error {
	if ignoredPodSubresources[a.Subresource] {
		return nil
	}
	ns, err := p.namespace(ctx, a.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to lookup namespace %q", a.Namespace))
	}
	policy, policyErrs := podsecurity.PolicyFromLabels(ns.Labels, podsecurity.DefaultPolicy())
	if len(policyErrs) == 0 && policy.FullyPrivileged() {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("failed to decode pod")
	}
	if a.Operation == Update {
		old, ok := a.OldObject.(*corev1.Pod)
		if !ok {
			return apierrors.NewBadRequest("failed to decode old pod")
		}
		if !significantPodUpdate(pod, old) {
			return nil
		}
	}
	return p.evaluate(ctx, a, policy, policyErrs.ToAggregate(), &pod.ObjectMeta, &pod.Spec, true)
}

func (p *podSecurity) validateController(ctx context.Context, a *Attributes) error {
	if a.Subresource != "" {
		return nil
	}
	ns, err := p.namespace(ctx, a.Namespace)
	if err != nil {
		a.AddAnnotation("error", fmt.Sprintf("failed to lookup namespace %q: %v", a.Namespace, err))
		return nil
	}
	policy, policyErrs := podsecurity.PolicyFromLabels(ns.Labels, podsecurity.DefaultPolicy())
	if len(policyErrs) == 0 && policy.Warn.Level == podsecurity.Privileged && policy.Audit.Level == podsecurity.Privileged {
		return nil
	}
	meta, spec, ok := podsecurity.PodTemplate(a.Object)
	if !ok || spec == nil {
		return nil
	}
	return p.evaluate(ctx, a, policy, policyErrs.ToAggregate(), meta, spec, false)
}

// evaluate is upstream's EvaluatePod: enforce (pods only) refuses, audit
// annotates, warn warns (only what is admitted).
func (p *podSecurity) evaluate(ctx context.Context, a *Attributes, policy podsecurity.Policy, policyErr error,
	meta *metav1.ObjectMeta, spec *corev1.PodSpec, enforce bool) error {
	if policyErr != nil {
		a.AddAnnotation("error", fmt.Sprintf("Failed to parse policy: %v", policyErr))
	}
	cached := map[podsecurity.LevelVersion][]podsecurity.Violation{}
	eval := func(lv podsecurity.LevelVersion) []podsecurity.Violation {
		if v, ok := cached[lv]; ok {
			return v
		}
		v := podsecurity.Evaluate(lv, meta, spec)
		cached[lv] = v
		return v
	}
	var refusal error
	if enforce {
		a.AddAnnotation(podsecurity.EnforcedPolicyAnnotationKey, policy.Enforce.String())
		if v := eval(policy.Enforce); len(v) > 0 {
			refusal = apierrors.NewForbidden(a.Resource, a.Name,
				fmt.Errorf("violates PodSecurity %q: %s", policy.Enforce.String(), podsecurity.Details(v)))
		}
	}
	if v := eval(policy.Audit); len(v) > 0 {
		a.AddAnnotation(podsecurity.AuditViolationsAnnotationKey,
			fmt.Sprintf("would violate PodSecurity %q: %s", policy.Audit.String(), podsecurity.Details(v)))
	}
	if refusal != nil {
		return refusal
	}
	if v := eval(policy.Warn); len(v) > 0 {
		AddWarning(ctx, fmt.Sprintf("would violate PodSecurity %q: %s", policy.Warn.String(), podsecurity.Details(v)))
	}
	return nil
}

// significantPodUpdate is upstream's isSignificantPodUpdate: only image
// changes and added ephemeral containers are evaluated again.
func significantPodUpdate(pod, old *corev1.Pod) bool {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return true
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Image != old.Spec.Containers[i].Image {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Image != old.Spec.InitContainers[i].Image {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		i := slices.IndexFunc(old.Spec.EphemeralContainers, func(o corev1.EphemeralContainer) bool { return o.Name == c.Name })
		if i < 0 || old.Spec.EphemeralContainers[i].Image != c.Image {
			return true
		}
	}
	return false
}

// validateNamespace is upstream's ValidateNamespace: invalid labels are
// refused (422); raising the enforce level warns about existing pods that
// violate it.
func (p *podSecurity) validateNamespace(ctx context.Context, a *Attributes) error {
	if a.Subresource != "" {
		return nil
	}
	ns, ok := a.Object.(*corev1.Namespace)
	if !ok {
		return apierrors.NewBadRequest("failed to decode namespace")
	}
	policy, errs := podsecurity.PolicyFromLabels(ns.Labels, podsecurity.DefaultPolicy())
	if a.Operation == Create {
		if len(errs) > 0 {
			return apierrors.NewInvalid(a.Kind, a.Name, errs)
		}
		return nil
	}
	old, ok := a.OldObject.(*corev1.Namespace)
	if !ok {
		return apierrors.NewBadRequest("failed to decode  old namespace")
	}
	oldPolicy, oldErrs := podsecurity.PolicyFromLabels(old.Labels, podsecurity.DefaultPolicy())
	if len(errs) > 0 && (len(oldErrs) == 0 || !reflect.DeepEqual(errs, oldErrs)) {
		return apierrors.NewInvalid(a.Kind, a.Name, errs)
	}
	if policy.Enforce == oldPolicy.Enforce || policy.Enforce.Level == podsecurity.Privileged {
		return nil
	}
	if policy.Enforce.Version == oldPolicy.Enforce.Version && podsecurity.CompareLevels(policy.Enforce.Level, oldPolicy.Enforce.Level) < 1 {
		return nil
	}
	for _, w := range p.existingPodWarnings(ctx, ns.Name, policy.Enforce) {
		AddWarning(ctx, w)
	}
	return nil
}

// existingPodWarnings is upstream's EvaluatePodsInNamespace: one warning
// per distinct set of violations, naming the first pod (by name) and how
// many others share it; one pod per controller is checked first.
func (p *podSecurity) existingPodWarnings(ctx context.Context, namespace string, enforce podsecurity.LevelVersion) []string {
	// A consistent list: a pod created a moment ago counts (enforce
	// labels change rarely; upstream reads its informer's cache).
	objs, err := p.d.Getter.ListConsistent(ctx, grPods, namespace)
	if err != nil {
		return []string{"failed to list pods while checking new PodSecurity enforce level"}
	}
	var pods, duplicates []*corev1.Pod
	seen := map[types.UID]bool{}
	for _, o := range objs {
		pod, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref == nil:
			pods = append(pods, pod)
		case seen[ref.UID]:
			duplicates = append(duplicates, pod)
		default:
			seen[ref.UID] = true
			pods = append(pods, pod)
		}
	}
	pods = append(pods, duplicates...)
	total := len(pods)
	if len(pods) > namespaceMaxPodsToCheck {
		pods = pods[:namespaceMaxPodsToCheck]
	}
	type count struct {
		name string
		n    int
	}
	counts := map[string]*count{}
	var reasons []string
	checked := len(pods)
	for i, pod := range pods {
		if v := podsecurity.Evaluate(enforce, &pod.ObjectMeta, &pod.Spec); len(v) > 0 {
			r := podsecurity.Reasons(v)
			c := counts[r]
			if c == nil {
				c = &count{name: pod.Name}
				counts[r] = c
				reasons = append(reasons, r)
			} else if pod.Name < c.name {
				c.name = pod.Name
			}
			c.n++
		}
		if ctx.Err() != nil {
			checked = i + 1
			break
		}
	}
	var out []string
	if checked < total {
		out = append(out, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", checked, total))
	}
	if len(reasons) > 0 {
		out = append(out, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", namespace, enforce.String()))
	}
	var podWarnings []string
	for _, r := range reasons {
		c := counts[r]
		switch c.n {
		case 1:
			podWarnings = append(podWarnings, fmt.Sprintf("%s: %s", c.name, r))
		case 2:
			podWarnings = append(podWarnings, fmt.Sprintf("%s (and 1 other pod): %s", c.name, r))
		default:
			podWarnings = append(podWarnings, fmt.Sprintf("%s (and %d other pods): %s", c.name, c.n-1, r))
		}
	}
	sort.Strings(podWarnings)
	return append(out, podWarnings...)
}
