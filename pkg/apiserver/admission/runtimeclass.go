package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// --- RuntimeClass ----------------------------------------------------------

var grRuntimeClasses = schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclasses"}

// runtimeClass is upstream's RuntimeClass plugin: a new pod naming a
// RuntimeClass must name one that exists, gets its overhead
// (spec.overhead, which must not differ when the pod sets it) and its
// scheduling (nodeSelector merged, a conflicting key refused; tolerations
// merged); a pod setting an overhead without a RuntimeClass defining one
// is refused.
type runtimeClass struct{ d Deps }

func (*runtimeClass) Name() string              { return "RuntimeClass" }
func (*runtimeClass) Handles(op Operation) bool { return op == Create }

func (p *runtimeClass) objects(ctx context.Context, a *Attributes) (*corev1.Pod, *nodev1.RuntimeClass, error) {
	if a.Resource != grPods || a.Subresource != "" {
		return nil, nil, nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	name := *pod.Spec.RuntimeClassName
	obj, err := p.d.Getter.Get(ctx, grRuntimeClasses, "", name)
	if apierrors.IsNotFound(err) {
		// The cache may lag: a live lookup, as upstream's.
		obj, err = p.d.Getter.GetConsistent(ctx, grRuntimeClasses, "", name)
		if apierrors.IsNotFound(err) {
			return pod, nil, forbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", name))
		}
	}
	if err != nil {
		return pod, nil, err
	}
	rc, ok := obj.(*nodev1.RuntimeClass)
	if !ok {
		return pod, nil, apierrors.NewInternalError(fmt.Errorf("unexpected runtime class object %T", obj))
	}
	return pod, rc, nil
}

func (p *runtimeClass) Admit(ctx context.Context, a *Attributes) error {
	pod, rc, err := p.objects(ctx, a)
	if err != nil || rc == nil {
		return err
	}
	if rc.Overhead != nil {
		if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return forbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if s := rc.Scheduling; s != nil {
		if pod.Spec.NodeSelector == nil {
			if s.NodeSelector != nil {
				pod.Spec.NodeSelector = map[string]string{}
			}
		}
		for k, v := range s.NodeSelector {
			if pv, ok := pod.Spec.NodeSelector[k]; ok && pv != v {
				return forbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv))
			}
			pod.Spec.NodeSelector[k] = v
		}
		pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, s.Tolerations)
	}
	return nil
}

func (p *runtimeClass) Validate(ctx context.Context, a *Attributes) error {
	pod, rc, err := p.objects(ctx, a)
	if err != nil || pod == nil {
		return err
	}
	if rc != nil && rc.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return forbidden(a, fmt.Errorf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
	} else if pod.Spec.Overhead != nil {
		return forbidden(a, fmt.Errorf("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil
}

// mergeTolerations is upstream's MergeTolerations: first then second,
// without the tolerations another one covers (equal ones kept once, the
// first).
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration(nil), first...), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, m := range merged {
			if tolerationCovers(m, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !apiequality.Semantic.DeepEqual(&t, &later) && tolerationCovers(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// tolerationCovers is upstream's isSuperset: ss tolerates whatever t does.
func tolerationCovers(ss, t corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(&t, &ss) {
		return true
	}
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil &&
		(t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds) {
		return false
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
