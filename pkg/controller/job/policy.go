package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// matchPodFailurePolicy evaluates the rules in order against a failed pod
// (upstream's matchPodFailurePolicy). It returns the Job failure message
// (FailJob), whether the failure counts against backoffLimit (false for
// Ignore) and the matched rule's action (nil when none matched).
func matchPodFailurePolicy(pfp *batchv1.PodFailurePolicy, p *corev1.Pod) (*string, bool, *batchv1.PodFailurePolicyAction) {
	if pfp == nil {
		return nil, true, nil
	}
	for i, rule := range pfp.Rules {
		action := rule.Action
		var failMsg string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(&p.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			failMsg = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, p.Namespace, p.Name, cs.State.Terminated.ExitCode, rule.Action, i)
		case rule.OnPodConditions != nil:
			cond := matchOnPodConditions(&p.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			failMsg = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
				p.Namespace, p.Name, cond.Type, rule.Action, i)
		default:
			continue
		}
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return nil, false, &action
		case batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount:
			return nil, true, &action
		case batchv1.PodFailurePolicyActionFailJob:
			return &failMsg, true, &action
		}
	}
	return nil, true, nil
}

func matchOnExitCodes(st *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	if cs := matchingContainer(st.ContainerStatuses, req); cs != nil {
		return cs
	}
	return matchingContainer(st.InitContainerStatuses, req)
}

func matchingContainer(statuses []corev1.ContainerStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for i := range statuses {
		cs := &statuses[i]
		if cs.State.Terminated == nil || cs.State.Terminated.ExitCode == 0 {
			continue
		}
		if req.ContainerName != nil && *req.ContainerName != cs.Name {
			continue
		}
		in := slices.Contains(req.Values, cs.State.Terminated.ExitCode)
		switch req.Operator {
		case batchv1.PodFailurePolicyOnExitCodesOpIn:
			if in {
				return cs
			}
		case batchv1.PodFailurePolicyOnExitCodesOpNotIn:
			if !in {
				return cs
			}
		}
	}
	return nil
}

func matchOnPodConditions(st *corev1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range st.Conditions {
		for _, pat := range patterns {
			if st.Conditions[i].Type == pat.Type && st.Conditions[i].Status == pat.Status {
				return &st.Conditions[i]
			}
		}
	}
	return nil
}

// failJobMessage is the FailJob message of the first failed pod a rule
// matches with FailJob, if any.
func failJobMessage(job *batchv1.Job, pods []*corev1.Pod) *string {
	if job.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if isPodFailed(p, job) {
			if msg, _, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); msg != nil {
				return msg
			}
		}
	}
	return nil
}

// matchSuccessPolicy reports whether the succeeded indexes meet a rule of
// the success policy, with upstream's message.
func matchSuccessPolicy(sp *batchv1.SuccessPolicy, completions int32, succeeded intervals) (string, bool) {
	if sp == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range sp.Rules {
		if rule.SucceededIndexes != nil {
			required := parseIndexes(*rule.SucceededIndexes, int(completions))
			if len(required) == 0 {
				continue
			}
			if matchSucceededIndexesRule(required, succeeded, rule.SucceededCount) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
		} else if rule.SucceededCount != nil && succeeded.total() >= int(*rule.SucceededCount) {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// matchSucceededIndexesRule: all required indexes succeeded, or (with a
// count) at least count of them.
func matchSucceededIndexesRule(required, succeeded intervals, count *int32) bool {
	contains := 0
	for _, r := range required {
		for _, s := range succeeded {
			if o := min(r.Last, s.Last) - max(r.First, s.First) + 1; o > 0 {
				contains += o
			}
		}
	}
	return contains == required.total() || (count != nil && contains >= int(*count))
}
