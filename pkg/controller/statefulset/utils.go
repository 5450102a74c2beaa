package statefulset

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/controller/internal/history"
	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

var (
	controllerKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	podKind        = corev1.SchemeGroupVersion.WithKind("Pod")
)

var statefulPodRegex = regexp.MustCompile("(.*)-([0-9]+)$")

// parentAndOrdinal splits "<set>-<ordinal>" (ordinal -1 when the name has
// none).
func parentAndOrdinal(p *corev1.Pod) (string, int) {
	m := statefulPodRegex.FindStringSubmatch(p.Name)
	if len(m) < 3 {
		return "", -1
	}
	i, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return m[1], -1
	}
	return m[1], int(i)
}

func getOrdinal(p *corev1.Pod) int { _, o := parentAndOrdinal(p); return o }

func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func replicasOf(set *appsv1.StatefulSet) int {
	if set.Spec.Replicas == nil {
		return 1
	}
	return int(*set.Spec.Replicas)
}

func endOrdinal(set *appsv1.StatefulSet) int { return startOrdinal(set) + replicasOf(set) - 1 }

func podInOrdinalRange(p *corev1.Pod, set *appsv1.StatefulSet) bool {
	o := getOrdinal(p)
	return o >= startOrdinal(set) && o <= endOrdinal(set)
}

// PodName is "<set>-<ordinal>".
func PodName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// ClaimName is "<template>-<set>-<ordinal>".
func ClaimName(set *appsv1.StatefulSet, template string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template, set.Name, ordinal)
}

func isMemberOf(set *appsv1.StatefulSet, p *corev1.Pod) bool {
	parent, _ := parentAndOrdinal(p)
	return parent == set.Name
}

func identityMatches(set *appsv1.StatefulSet, p *corev1.Pod) bool {
	parent, o := parentAndOrdinal(p)
	return o >= 0 && parent == set.Name && p.Name == PodName(set, o) && p.Namespace == set.Namespace &&
		p.Labels[appsv1.StatefulSetPodNameLabel] == p.Name
}

func storageMatches(set *appsv1.StatefulSet, p *corev1.Pod) bool {
	o := getOrdinal(p)
	if o < 0 {
		return false
	}
	vols := map[string]corev1.Volume{}
	for _, v := range p.Spec.Volumes {
		vols[v.Name] = v
	}
	for _, t := range set.Spec.VolumeClaimTemplates {
		v, ok := vols[t.Name]
		if !ok || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != ClaimName(set, t.Name, o) {
			return false
		}
	}
	return true
}

// claimsFor are the claims the pod's ordinal gets from the set's
// templates, in template order: template labels plus the selector's
// matchLabels.
func claimsFor(set *appsv1.StatefulSet, p *corev1.Pod) []corev1.PersistentVolumeClaim {
	o := getOrdinal(p)
	out := make([]corev1.PersistentVolumeClaim, 0, len(set.Spec.VolumeClaimTemplates))
	for i := range set.Spec.VolumeClaimTemplates {
		c := set.Spec.VolumeClaimTemplates[i].DeepCopy()
		tmpl := c.Name
		c.Name = ClaimName(set, tmpl, o)
		c.Namespace = set.Namespace
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			for k, v := range set.Spec.Selector.MatchLabels {
				c.Labels[k] = v
			}
		}
		c.ResourceVersion, c.UID = "", ""
		c.Status = corev1.PersistentVolumeClaimStatus{}
		out = append(out, *c)
	}
	return out
}

// updateStorage points the pod's volumes named after claim templates at
// its claims (other volumes kept).
func updateStorage(set *appsv1.StatefulSet, p *corev1.Pod) {
	claims := claimsFor(set, p)
	names := map[string]bool{}
	vols := make([]corev1.Volume, 0, len(claims)+len(p.Spec.Volumes))
	for i, c := range claims {
		name := set.Spec.VolumeClaimTemplates[i].Name
		names[name] = true
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
	}
	for _, v := range p.Spec.Volumes {
		if !names[v.Name] {
			vols = append(vols, v)
		}
	}
	p.Spec.Volumes = vols
}

func updateIdentity(set *appsv1.StatefulSet, p *corev1.Pod) {
	o := getOrdinal(p)
	p.Name = PodName(set, o)
	p.Namespace = set.Namespace
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[appsv1.StatefulSetPodNameLabel] = p.Name
	p.Labels[appsv1.PodIndexLabel] = strconv.Itoa(o)
}

func retentionPolicy(set *appsv1.StatefulSet) appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	p := appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	if r := set.Spec.PersistentVolumeClaimRetentionPolicy; r != nil {
		if r.WhenDeleted != "" {
			p.WhenDeleted = r.WhenDeleted
		}
		if r.WhenScaled != "" {
			p.WhenScaled = r.WhenScaled
		}
	}
	return p
}

func matchesRef(ref *metav1.OwnerReference, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	return ref.APIVersion == gvk.GroupVersion().String() && ref.Kind == gvk.Kind && ref.Name == obj.GetName()
}

func hasOwnerRef(target, owner metav1.Object) bool {
	for _, r := range target.GetOwnerReferences() {
		if r.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

func hasStaleOwnerRef(target metav1.Object, obj metav1.Object, gvk schema.GroupVersionKind) bool {
	for _, r := range target.GetOwnerReferences() {
		if matchesRef(&r, obj, gvk) {
			return r.UID != obj.GetUID()
		}
	}
	return false
}

// hasUnexpectedController: the claim has a controller other than the set
// or the pod (only checked when some policy deletes).
func hasUnexpectedController(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, p *corev1.Pod) bool {
	pol := retentionPolicy(set)
	if pol.WhenScaled == appsv1.RetainPersistentVolumeClaimRetentionPolicyType && pol.WhenDeleted == appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		return false
	}
	for _, r := range claim.OwnerReferences {
		switch {
		case matchesRef(&r, set, controllerKind):
			if r.UID != set.UID {
				return true
			}
		case matchesRef(&r, p, podKind):
			if r.UID != p.UID {
				return true
			}
		case r.Controller != nil && *r.Controller:
			return true
		}
	}
	return false
}

func hasNonControllerOwner(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, p *corev1.Pod) bool {
	for _, r := range claim.OwnerReferences {
		if (r.UID == set.UID || r.UID == p.UID) && (r.Controller == nil || !*r.Controller) {
			return true
		}
	}
	return false
}

// claimOwnerUpToDate reports whether the claim's owner references say
// what the retention policy wants (upstream's isClaimOwnerUpToDate).
func claimOwnerUpToDate(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, p *corev1.Pod) bool {
	if hasStaleOwnerRef(claim, set, controllerKind) || hasStaleOwnerRef(claim, p, podKind) {
		return true // the GC will collect it
	}
	if hasUnexpectedController(claim, set, p) {
		return !hasOwnerRef(claim, set) && !hasOwnerRef(claim, p)
	}
	if hasNonControllerOwner(claim, set, p) {
		return false
	}
	const retain, del = appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	pol := retentionPolicy(set)
	scaledDown := !podInOrdinalRange(p, set)
	switch {
	case pol.WhenScaled == retain && pol.WhenDeleted == del:
		return hasOwnerRef(claim, set) && !hasOwnerRef(claim, p)
	case pol.WhenScaled == del && pol.WhenDeleted == retain:
		return !hasOwnerRef(claim, set) && scaledDown == hasOwnerRef(claim, p)
	case pol.WhenScaled == del && pol.WhenDeleted == del:
		return scaledDown != hasOwnerRef(claim, set) && scaledDown == hasOwnerRef(claim, p)
	default: // Retain/Retain (unknown policies count as Retain)
		return !hasOwnerRef(claim, set) && !hasOwnerRef(claim, p)
	}
}

// updateClaimOwnerRefs rewrites the claim's references to the set and the
// pod as the retention policy wants (upstream's
// updateClaimOwnerRefForSetAndPod).
func updateClaimOwnerRefs(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, p *corev1.Pod) {
	unexpected := hasUnexpectedController(claim, set, p)
	refs := []metav1.OwnerReference{}
	for _, r := range claim.OwnerReferences {
		if !matchesRef(&r, set, controllerKind) && !matchesRef(&r, p, podKind) {
			refs = append(refs, r)
		}
	}
	if !unexpected {
		const del = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		pol := retentionPolicy(set)
		scaledDown := !podInOrdinalRange(p, set)
		switch {
		case pol.WhenScaled != del && pol.WhenDeleted == del:
			refs = addControllerRef(refs, set, controllerKind)
		case pol.WhenScaled == del && pol.WhenDeleted != del:
			if scaledDown {
				refs = addControllerRef(refs, p, podKind)
			}
		case pol.WhenScaled == del && pol.WhenDeleted == del:
			if scaledDown {
				refs = addControllerRef(refs, p, podKind)
			} else {
				refs = addControllerRef(refs, set, controllerKind)
			}
		}
	}
	claim.OwnerReferences = refs
}

func addControllerRef(refs []metav1.OwnerReference, owner metav1.Object, gvk schema.GroupVersionKind) []metav1.OwnerReference {
	for _, r := range refs {
		if r.UID == owner.GetUID() {
			return refs
		}
	}
	return append(refs, *controllerref.NewControllerRef(owner, gvk))
}

func isRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && podutil.IsPodReady(p)
}

func isRunningAndAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	return podutil.IsPodAvailable(p, minReadySeconds, now)
}

func isCreated(p *corev1.Pod) bool     { return p.Status.Phase != "" }
func isPending(p *corev1.Pod) bool     { return p.Status.Phase == corev1.PodPending }
func isTerminal(p *corev1.Pod) bool    { return podutil.IsPodTerminal(p) }
func isTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }

func isUnavailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	return !isRunningAndAvailable(p, minReadySeconds, now) || isTerminating(p)
}

func allowsBurst(set *appsv1.StatefulSet) bool {
	return set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
}

func podRevision(p *corev1.Pod) string { return p.Labels[appsv1.StatefulSetRevisionLabel] }

// newStatefulSetPod is the pod of ordinal from the set's template:
// template labels, annotations, finalizers and spec, generateName
// "<set>-" as upstream's GetPodFromTemplate, name "<set>-<ordinal>",
// hostname = name, subdomain = serviceName, identity labels and claims.
func newStatefulSetPod(set *appsv1.StatefulSet, ordinal int) *corev1.Pod {
	t := set.Spec.Template.DeepCopy()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       set.Namespace,
			GenerateName:    set.Name + "-",
			Name:            PodName(set, ordinal),
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*controllerref.NewControllerRef(set, controllerKind)},
		},
		Spec: t.Spec,
	}
	updateIdentity(set, p)
	p.Spec.Hostname = p.Name
	p.Spec.Subdomain = set.Spec.ServiceName
	updateStorage(set, p)
	return p
}

// NewPod is the pod of ordinal the controller creates for set at
// revision (the revision's template applied to set): identity, claims and
// the controller-revision-hash label.
func NewPod(set *appsv1.StatefulSet, ordinal int, revision string) *corev1.Pod {
	p := newStatefulSetPod(set, ordinal)
	p.Labels[appsv1.StatefulSetRevisionLabel] = revision
	return p
}

// newVersionedPod is the pod of ordinal at the current revision when the
// rollout keeps it there (below the partition), else at the update
// revision (upstream's newVersionedStatefulSetPod, operator precedence
// included).
func newVersionedPod(currentSet, updateSet *appsv1.StatefulSet, currentRevision, updateRevision string, ordinal int) *corev1.Pod {
	s := currentSet.Spec.UpdateStrategy
	if (s.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.RollingUpdate == nil && ordinal < startOrdinal(currentSet)+int(currentSet.Status.CurrentReplicas)) ||
		(s.RollingUpdate != nil && s.RollingUpdate.Partition != nil && ordinal < startOrdinal(currentSet)+int(*s.RollingUpdate.Partition)) {
		p := newStatefulSetPod(currentSet, ordinal)
		p.Labels[appsv1.StatefulSetRevisionLabel] = currentRevision
		return p
	}
	p := newStatefulSetPod(updateSet, ordinal)
	p.Labels[appsv1.StatefulSetRevisionLabel] = updateRevision
	return p
}

// NewRevision is the ControllerRevision snapshotting the set's template
// (upstream's newRevision: the set's annotations copied, so
// kubernetes.io/change-cause shows in `kubectl rollout history`).
func NewRevision(set *appsv1.StatefulSet, revision int64, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	patch, err := history.TemplatePatch(set)
	if err != nil {
		return nil, err
	}
	cr := history.NewControllerRevision(set, controllerKind, set.Spec.Template.Labels, patch, revision, collisionCount)
	if cr.Annotations == nil {
		cr.Annotations = map[string]string{}
	}
	for k, v := range set.Annotations {
		cr.Annotations[k] = v
	}
	return cr, nil
}

// ApplyRevision is the set with the revision's template (the revision's
// patch replaces spec.template).
func ApplyRevision(set *appsv1.StatefulSet, cr *appsv1.ControllerRevision) (*appsv1.StatefulSet, error) {
	var p struct {
		Spec struct {
			Template json.RawMessage `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &p); err != nil {
		return nil, err
	}
	clone := set.DeepCopy()
	clone.Spec.Template = corev1.PodTemplateSpec{}
	if err := json.Unmarshal(p.Spec.Template, &clone.Spec.Template); err != nil {
		return nil, err
	}
	return clone, nil
}

func inconsistentStatus(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) bool {
	return st.ObservedGeneration > set.Status.ObservedGeneration ||
		st.Replicas != set.Status.Replicas ||
		st.CurrentReplicas != set.Status.CurrentReplicas ||
		st.ReadyReplicas != set.Status.ReadyReplicas ||
		st.UpdatedReplicas != set.Status.UpdatedReplicas ||
		st.CurrentRevision != set.Status.CurrentRevision ||
		st.AvailableReplicas != set.Status.AvailableReplicas ||
		st.UpdateRevision != set.Status.UpdateRevision ||
		!equalPtr(st.CollisionCount, set.Status.CollisionCount)
}

func equalPtr(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// completeRollingUpdate makes the update revision current once every
// replica is updated and ready.
func completeRollingUpdate(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) {
	n := int32(replicasOf(set))
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		st.UpdatedReplicas == n && st.ReadyReplicas == n && st.Replicas == n {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
	}
}

func maxUnavailable(set *appsv1.StatefulSet) (int, error) {
	v := intstr.FromInt32(1)
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		v = *ru.MaxUnavailable
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, replicasOf(set), false)
	if err != nil {
		return 0, err
	}
	return max(n, 1), nil
}
