package deployment

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skiff-sh/skiff/pkg/controller/internal/history"
)

// Annotations and reasons, as upstream's deployment util.
const (
	RevisionAnnotation        = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
	// lastAppliedAnnotation is kubectl's, never copied to ReplicaSets.
	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	rollbackToAnnotation  = "deprecated.deployment.rollback.to"

	// DefaultDeploymentUniqueLabelKey labels a ReplicaSet's pods with its
	// template hash.
	DefaultDeploymentUniqueLabelKey = appsv1.DefaultDeploymentUniqueLabelKey

	FailedRSCreateReason       = "ReplicaSetCreateError"
	NewReplicaSetReason        = "NewReplicaSetCreated"
	FoundNewRSReason           = "FoundNewReplicaSet"
	NewRSAvailableReason       = "NewReplicaSetAvailable"
	TimedOutReason             = "ProgressDeadlineExceeded"
	PausedDeployReason         = "DeploymentPaused"
	ResumedDeployReason        = "DeploymentResumed"
	ReplicaSetUpdatedReason    = "ReplicaSetUpdated"
	MinimumReplicasAvailable   = "MinimumReplicasAvailable"
	MinimumReplicasUnavailable = "MinimumReplicasUnavailable"
)

// ResolveFenceposts resolves maxSurge (rounded up) and maxUnavailable
// (rounded down) against desired; both zero makes maxUnavailable 1.
func ResolveFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	zero := intstr.FromInt32(0)
	if maxSurge == nil {
		maxSurge = &zero
	}
	if maxUnavailable == nil {
		maxUnavailable = &zero
	}
	surge, err := intstr.GetScaledValueFromIntOrPercent(maxSurge, int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	unavailable, err := intstr.GetScaledValueFromIntOrPercent(maxUnavailable, int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func rsReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs == nil || rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

// MaxUnavailable is the deployment's resolved maxUnavailable (0 unless
// rolling, at most spec.replicas).
func MaxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || replicas(d) == 0 || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	_, u, _ := ResolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d))
	return min(u, replicas(d))
}

// MaxSurge is the deployment's resolved maxSurge (0 unless rolling).
func MaxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	s, _, _ := ResolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d))
	return s
}

// ComputeHash is the pod-template-hash of a template and collision count,
// upstream's: FNV-32a of the template's spew dump and the count (the
// DaemonSet controller's hash, shared in internal/history), so a
// ReplicaSet gets the name upstream's controller gives it for the same
// template and API types.
func ComputeHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	return history.ComputeHash(t, collisionCount)
}

// EqualIgnoreHash compares two templates ignoring the pod-template-hash label.
func EqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, DefaultDeploymentUniqueLabelKey)
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if len(b.Labels) == 0 {
		b.Labels = nil
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

// ByCreationTimestamp sorts oldest first (name breaks ties).
type ByCreationTimestamp []*appsv1.ReplicaSet

func (o ByCreationTimestamp) Len() int      { return len(o) }
func (o ByCreationTimestamp) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o ByCreationTimestamp) Less(i, j int) bool {
	if o[i].CreationTimestamp.Equal(&o[j].CreationTimestamp) {
		return o[i].Name < o[j].Name
	}
	return o[i].CreationTimestamp.Before(&o[j].CreationTimestamp)
}

// BySizeOlder sorts larger first, older first among equals.
type BySizeOlder []*appsv1.ReplicaSet

func (o BySizeOlder) Len() int      { return len(o) }
func (o BySizeOlder) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o BySizeOlder) Less(i, j int) bool {
	if rsReplicas(o[i]) == rsReplicas(o[j]) {
		return ByCreationTimestamp(o).Less(i, j)
	}
	return rsReplicas(o[i]) > rsReplicas(o[j])
}

// BySizeNewer sorts larger first, newer first among equals.
type BySizeNewer []*appsv1.ReplicaSet

func (o BySizeNewer) Len() int      { return len(o) }
func (o BySizeNewer) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o BySizeNewer) Less(i, j int) bool {
	if rsReplicas(o[i]) == rsReplicas(o[j]) {
		return ByCreationTimestamp(o).Less(j, i)
	}
	return rsReplicas(o[i]) > rsReplicas(o[j])
}

// ByRevision sorts lowest revision first.
type ByRevision []*appsv1.ReplicaSet

func (o ByRevision) Len() int      { return len(o) }
func (o ByRevision) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o ByRevision) Less(i, j int) bool {
	r1, r2 := Revision(o[i]), Revision(o[j])
	if r1 == r2 {
		return ByCreationTimestamp(o).Less(i, j)
	}
	return r1 < r2
}

// Revision is the object's revision annotation (0 when absent or invalid).
func Revision(obj metav1.Object) int64 {
	v, err := strconv.ParseInt(obj.GetAnnotations()[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// MaxRevision is the highest revision among rss.
func MaxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		m = max(m, Revision(rs))
	}
	return m
}

// FindNewReplicaSet is the oldest ReplicaSet whose template equals the
// deployment's (ignoring the hash label).
func FindNewReplicaSet(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := append([]*appsv1.ReplicaSet(nil), rss...)
	sort.Sort(ByCreationTimestamp(sorted))
	for _, rs := range sorted {
		if EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// FindOldReplicaSets returns the old ReplicaSets with replicas, and all.
func FindOldReplicaSets(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) (withReplicas, all []*appsv1.ReplicaSet) {
	newRS := FindNewReplicaSet(d, rss)
	for _, rs := range rss {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		all = append(all, rs)
		if rsReplicas(rs) != 0 {
			withReplicas = append(withReplicas, rs)
		}
	}
	return withReplicas, all
}

// FilterActive keeps non-nil ReplicaSets with replicas.
func FilterActive(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func sumSpec(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		n += rsReplicas(rs)
	}
	return n
}

func sumStatus(rss []*appsv1.ReplicaSet, f func(*appsv1.ReplicaSetStatus) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(&rs.Status)
		}
	}
	return n
}

// NewRSNewReplicas is the size the new ReplicaSet may grow to now.
func NewRSNewReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if !isRollingUpdate(d) {
		return replicas(d)
	}
	maxTotal := replicas(d) + MaxSurge(d)
	current := sumSpec(all)
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	up := min(maxTotal-current, replicas(d)-rsReplicas(newRS))
	return rsReplicas(newRS) + up
}

// IsSaturated: the ReplicaSet has, wants and has available all the
// deployment's replicas.
func IsSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
	if err != nil {
		return false
	}
	return rsReplicas(rs) == replicas(d) && int32(desired) == replicas(d) && rs.Status.AvailableReplicas == replicas(d)
}

// FindActiveOrLatest is the only active ReplicaSet, or the newest when none
// is active, or nil when several are.
func FindActiveOrLatest(newRS *appsv1.ReplicaSet, olds []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(olds) == 0 {
		return nil
	}
	sort.Sort(sort.Reverse(ByCreationTimestamp(olds)))
	all := FilterActive(append(append([]*appsv1.ReplicaSet(nil), olds...), newRS))
	switch len(all) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return olds[0]
	case 1:
		return all[0]
	}
	return nil
}

// GetProportion is the share of deploymentReplicasToAdd rs gets in a
// proportional scale.
func GetProportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	frac := replicaSetFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(frac, allowed)
	}
	return max(frac, allowed)
}

func replicaSetFraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if replicas(d) == 0 {
		return -rsReplicas(rs)
	}
	deploymentReplicas := replicas(d) + MaxSurge(d)
	annotated, err := strconv.Atoi(rs.Annotations[MaxReplicasAnnotation])
	if err != nil {
		annotated = int(d.Status.Replicas)
	}
	size := float64(rsReplicas(rs)*deploymentReplicas) / float64(annotated)
	return int32(math.Floor(size+0.5)) - rsReplicas(rs)
}

// SetReplicasAnnotations sets desired/max replicas; reports a change.
func SetReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	d, m := strconv.Itoa(int(desired)), strconv.Itoa(int(maxReplicas))
	changed := rs.Annotations[DesiredReplicasAnnotation] != d || rs.Annotations[MaxReplicasAnnotation] != m
	rs.Annotations[DesiredReplicasAnnotation], rs.Annotations[MaxReplicasAnnotation] = d, m
	return changed
}

func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

func skipCopyAnnotation(k string) bool {
	switch k {
	case lastAppliedAnnotation, RevisionAnnotation, RevisionHistoryAnnotation, DesiredReplicasAnnotation, MaxReplicasAnnotation, rollbackToAnnotation:
		return true
	}
	return false
}

// SetNewReplicaSetAnnotations copies the deployment's annotations to the new
// ReplicaSet and moves its revision up to newRevision (keeping the old one
// in revision-history); reports a change.
func SetNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool, historyLimitChars int) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range d.Annotations {
		if skipCopyAnnotation(k) {
			continue
		}
		if cur, ok := rs.Annotations[k]; !ok || cur != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	oldRevision := rs.Annotations[RevisionAnnotation]
	oldInt, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		if oldRevision != "" {
			return false
		}
		oldInt = 0
	}
	newInt, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldInt < newInt {
		rs.Annotations[RevisionAnnotation] = newRevision
		changed = true
	}
	if oldRevision != "" && oldInt < newInt {
		h := rs.Annotations[RevisionHistoryAnnotation]
		parts := []string{}
		if h != "" {
			parts = strings.Split(h, ",")
		}
		parts = append(parts, oldRevision)
		for historyLimitChars > 0 && len(strings.Join(parts, ",")) > historyLimitChars && len(parts) > 1 {
			parts = parts[1:]
		}
		rs.Annotations[RevisionHistoryAnnotation] = strings.Join(parts, ",")
	}
	if !exists && SetReplicasAnnotations(rs, replicas(d), replicas(d)+MaxSurge(d)) {
		changed = true
	}
	return changed
}

// HasProgressDeadline: progressDeadlineSeconds set and not MaxInt32.
func HasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// GetCondition returns the status's condition of type t.
func GetCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// NewCondition is a condition updated and transitioned at now.
func NewCondition(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg,
		LastUpdateTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
}

// SetCondition sets c unless a condition with the same status and reason
// exists; an unchanged status keeps its lastTransitionTime.
func SetCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := GetCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	RemoveCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}

// RemoveCondition drops the condition of type t.
func RemoveCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	var keep []appsv1.DeploymentCondition
	for _, c := range st.Conditions {
		if c.Type != t {
			keep = append(keep, c)
		}
	}
	st.Conditions = keep
}

// DeploymentComplete: every replica updated and available, generation observed.
func DeploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	r := replicas(d)
	return st.UpdatedReplicas == r && st.Replicas == r && st.AvailableReplicas == r && st.ObservedGeneration >= d.Generation
}

// DeploymentProgressing: newStatus shows progress over the deployment's
// current status.
func DeploymentProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	oldOld, newOld := old.Replicas-old.UpdatedReplicas, st.Replicas-st.UpdatedReplicas
	return st.UpdatedReplicas > old.UpdatedReplicas || newOld < oldOld ||
		st.ReadyReplicas > old.ReadyReplicas || st.AvailableReplicas > old.AvailableReplicas
}

// DeploymentTimedOut: the Progressing condition was last updated longer
// than progressDeadlineSeconds before now.
func DeploymentTimedOut(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) bool {
	if !HasProgressDeadline(d) {
		return false
	}
	c := GetCondition(*st, appsv1.DeploymentProgressing)
	if c == nil || c.Reason == NewRSAvailableReason {
		return false
	}
	if c.Reason == TimedOutReason {
		return true
	}
	return c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
}

// CalculateStatus is the deployment status its ReplicaSets give, at now.
func CalculateStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment, now time.Time) appsv1.DeploymentStatus {
	available := sumStatus(all, func(s *appsv1.ReplicaSetStatus) int32 { return s.AvailableReplicas })
	total := sumSpec(all)
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            sumStatus(all, func(s *appsv1.ReplicaSetStatus) int32 { return s.Replicas }),
		UpdatedReplicas:     sumStatus([]*appsv1.ReplicaSet{newRS}, func(s *appsv1.ReplicaSetStatus) int32 { return s.Replicas }),
		ReadyReplicas:       sumStatus(all, func(s *appsv1.ReplicaSetStatus) int32 { return s.ReadyReplicas }),
		AvailableReplicas:   available,
		UnavailableReplicas: max(total-available, 0),
		CollisionCount:      d.Status.CollisionCount,
		TerminatingReplicas: terminatingReplicas(all),
	}
	st.Conditions = append(st.Conditions, d.Status.Conditions...)
	if available >= replicas(d)-MaxUnavailable(d) {
		SetCondition(&st, NewCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, MinimumReplicasAvailable, "Deployment has minimum availability.", now))
	} else {
		SetCondition(&st, NewCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, MinimumReplicasUnavailable, "Deployment does not have minimum availability.", now))
	}
	return st
}

// terminatingReplicas sums the ReplicaSets' status.terminatingReplicas; nil
// when one of them does not report it.
func terminatingReplicas(all []*appsv1.ReplicaSet) *int32 {
	var n int32
	for _, rs := range all {
		switch {
		case rs == nil:
		case rs.Status.TerminatingReplicas == nil:
			return nil
		default:
			n += *rs.Status.TerminatingReplicas
		}
	}
	return &n
}
