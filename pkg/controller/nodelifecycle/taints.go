package nodelifecycle

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// conditionTaints maps a node condition type and status to the key of the
// NoSchedule taint it calls for (upstream's
// nodeConditionToTaintKeyStatusMap).
var conditionTaints = map[corev1.NodeConditionType]map[corev1.ConditionStatus]string{
	corev1.NodeReady: {
		corev1.ConditionFalse:   corev1.TaintNodeNotReady,
		corev1.ConditionUnknown: corev1.TaintNodeUnreachable,
	},
	corev1.NodeMemoryPressure:     {corev1.ConditionTrue: corev1.TaintNodeMemoryPressure},
	corev1.NodeDiskPressure:       {corev1.ConditionTrue: corev1.TaintNodeDiskPressure},
	corev1.NodeNetworkUnavailable: {corev1.ConditionTrue: corev1.TaintNodeNetworkUnavailable},
	corev1.NodePIDPressure:        {corev1.ConditionTrue: corev1.TaintNodePIDPressure},
}

// managedNoScheduleKeys are the NoSchedule taint keys this controller owns:
// those of conditionTaints and unschedulable.
var managedNoScheduleKeys = func() map[string]bool {
	m := map[string]bool{corev1.TaintNodeUnschedulable: true}
	for _, byStatus := range conditionTaints {
		for _, k := range byStatus {
			m[k] = true
		}
	}
	return m
}()

// The NoExecute taints of taint-based eviction.
var (
	unreachableNoExecute = corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	notReadyNoExecute    = corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
)

// wantNoScheduleTaints is the set of NoSchedule taints the node's
// conditions and spec.unschedulable call for.
func wantNoScheduleTaints(n *corev1.Node) []corev1.Taint {
	var want []corev1.Taint
	for _, c := range n.Status.Conditions {
		if key, ok := conditionTaints[c.Type][c.Status]; ok {
			want = append(want, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	if n.Spec.Unschedulable {
		want = append(want, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	return want
}

// noScheduleDiff is what the NoSchedule tainting pass changes on n: the
// wanted taints it lacks, and the managed NoSchedule taints it has but
// should not (upstream's doNoScheduleTaintingPass). Taints are compared by
// key and effect; other taints are never touched.
func noScheduleDiff(n *corev1.Node) (add, del []corev1.Taint) {
	want := wantNoScheduleTaints(n)
	var have []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule && managedNoScheduleKeys[t.Key] {
			have = append(have, t)
		}
	}
	for _, w := range want {
		if !containsTaint(have, w) {
			add = append(add, w)
		}
	}
	for _, h := range have {
		if !containsTaint(want, h) {
			del = append(del, h)
		}
	}
	return add, del
}

func containsTaint(ts []corev1.Taint, t corev1.Taint) bool {
	for i := range ts {
		if ts[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

// swapTaints returns n's taints without del and with add (timeAdded set to
// now, as upstream's SwapNodeControllerTaint); changed is false when the
// result is n's taints.
func swapTaints(taints []corev1.Taint, add, del []corev1.Taint, now metav1.Time) (out []corev1.Taint, changed bool) {
	for _, t := range taints {
		if containsTaint(del, t) {
			changed = true
			continue
		}
		out = append(out, t)
	}
	for _, a := range add {
		if containsTaint(out, a) {
			continue
		}
		a.TimeAdded = now.DeepCopy()
		out = append(out, a)
		changed = true
	}
	return out, changed
}

// maxConflictRetries bounds the re-reads after a conflict.
const maxConflictRetries = 5

// updateTaints adds and removes taints on the node named like n with a
// merge patch of spec.taints guarded by the resourceVersion it was
// computed from; on a conflict it re-reads the node from the server and
// tries again. Taints neither added nor removed are kept as they are.
func (c *Controller) updateTaints(ctx context.Context, n *corev1.Node, add, del []corev1.Taint) error {
	if len(add) == 0 && len(del) == 0 {
		return nil
	}
	for attempt := 0; ; attempt++ {
		taints, changed := swapTaints(n.Spec.Taints, add, del, metav1.Time{Time: c.cfg.Clock.Now()})
		if !changed {
			return nil
		}
		if taints == nil {
			taints = []corev1.Taint{}
		}
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": n.ResourceVersion},
			"spec":     map[string]any{"taints": taints},
		})
		if err != nil {
			return err
		}
		_, err = c.nodes.Patch(ctx, n.Name, types.MergePatchType, body, metav1.PatchOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt >= maxConflictRetries {
			return fmt.Errorf("updating taints of node %s: %w", n.Name, err)
		}
		if n, err = c.nodes.Get(ctx, n.Name, metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
}
