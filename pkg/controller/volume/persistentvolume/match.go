package persistentvolume

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
)

// findBestMatch picks the volume to bind an unbound claim to (nil: none),
// as upstream's findBestMatchForClaim: the volumes are grouped by their
// access-mode sets; the sets containing every mode the claim asks for are
// tried fewest modes first, and in the first set with a match the match
// is a volume pre-bound to the claim, else the smallest fitting one.
// With delayBinding (WaitForFirstConsumer) only pre-bound volumes match:
// the scheduler binds the others.
func findBestMatch(claim *corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume, delayBinding bool) (*corev1.PersistentVolume, error) {
	byModes := map[string][]*corev1.PersistentVolume{}
	modesOf := map[string][]corev1.PersistentVolumeAccessMode{}
	for _, pv := range volumes {
		k := modesKey(pv.Spec.AccessModes)
		byModes[k] = append(byModes[k], pv)
		modesOf[k] = pv.Spec.AccessModes
	}
	var sets []string
	for k, modes := range modesOf {
		if volumeutil.AccessModesContain(modes, claim.Spec.AccessModes) {
			sets = append(sets, k)
		}
	}
	sort.Slice(sets, func(i, j int) bool {
		if li, lj := len(modesOf[sets[i]]), len(modesOf[sets[j]]); li != lj {
			return li < lj
		}
		return sets[i] < sets[j]
	})
	for _, k := range sets {
		pv, err := findMatchingVolume(claim, byModes[k], delayBinding)
		if err != nil || pv != nil {
			return pv, err
		}
	}
	return nil, nil
}

// modesKey names a set of access modes independently of their order.
func modesKey(modes []corev1.PersistentVolumeAccessMode) string {
	s := make([]string, 0, len(modes))
	seen := map[corev1.PersistentVolumeAccessMode]bool{}
	for _, m := range modes {
		if !seen[m] {
			seen[m] = true
			s = append(s, string(m))
		}
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

// findMatchingVolume is upstream's FindMatchingVolume without a node (the
// binder's path).
func findMatchingVolume(claim *corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume, delayBinding bool) (*corev1.PersistentVolume, error) {
	requested := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	class := volumeutil.ClaimClass(claim)
	var selector labels.Selector
	if claim.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(claim.Spec.Selector)
		if err != nil {
			return nil, err
		}
		selector = s
	}
	var best *corev1.PersistentVolume
	for _, pv := range volumes {
		if pv.Spec.ClaimRef != nil && !volumeutil.IsVolumeBoundToClaim(pv, claim) {
			continue
		}
		size := pv.Spec.Capacity[corev1.ResourceStorage]
		if size.Cmp(requested) < 0 {
			continue
		}
		if volumeutil.VolumeModeMismatch(&claim.Spec, &pv.Spec) || pv.DeletionTimestamp != nil {
			continue
		}
		if volumeutil.IsVolumeBoundToClaim(pv, claim) {
			return pv, nil // pre-bound to this claim
		}
		if delayBinding {
			continue
		}
		if pv.Status.Phase != corev1.VolumeAvailable {
			continue
		}
		if selector != nil && !selector.Matches(labels.Set(pv.Labels)) {
			continue
		}
		if volumeutil.VolumeClass(pv) != class {
			continue
		}
		if best == nil {
			best = pv
			continue
		}
		if bs := best.Spec.Capacity[corev1.ResourceStorage]; bs.Cmp(size) > 0 || (bs.Cmp(size) == 0 && pv.Name < best.Name) {
			best = pv
		}
	}
	return best, nil
}
