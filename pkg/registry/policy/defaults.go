package policy

import policyv1 "k8s.io/api/policy/v1"

// DefaultPodDisruptionBudget applies policy/v1 defaults. Upstream has none:
// an unset spec.unhealthyPodEvictionPolicy means IfHealthyBudget but is left
// unset, and an unset selector stays unset (in policy/v1 it selects no pods;
// in the removed v1beta1 the meaning differed). The function exists so every
// resource has the same registry hooks.
func DefaultPodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) {}
