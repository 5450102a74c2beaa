package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

var (
	grNamespaces      = schema.GroupResource{Resource: "namespaces"}
	grPods            = schema.GroupResource{Resource: "pods"}
	grNodes           = schema.GroupResource{Resource: "nodes"}
	grServiceAccounts = schema.GroupResource{Resource: "serviceaccounts"}
	grLimitRanges     = schema.GroupResource{Resource: "limitranges"}
	grPVCs            = schema.GroupResource{Resource: "persistentvolumeclaims"}
	grPriorityClasses = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}
	grStorageClasses  = schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}
)

func isPodCreate(a *Attributes) (*corev1.Pod, bool) {
	if a.Resource != grPods || a.Subresource != "" || a.Operation != Create {
		return nil, false
	}
	p, ok := a.Object.(*corev1.Pod)
	return p, ok
}

// --- NamespaceLifecycle ----------------------------------------------------

// namespaceLifecycle refuses new objects in namespaces that do not exist or
// are terminating, and the deletion of the system namespaces. A namespace
// deleted a moment ago is looked up in storage, not in the watch cache,
// which may not show it Terminating yet.
type namespaceLifecycle struct {
	d       Deps
	mu      sync.Mutex
	deleted map[string]time.Time
}

// forceLiveLookupTTL is how long after a namespace deletion lookups bypass
// the cache (upstream uses the same 30 s).
const forceLiveLookupTTL = 30 * time.Second

func (p *namespaceLifecycle) recentlyDeleted(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.d.Clock.Now()
	for n, at := range p.deleted {
		if now.Sub(at) > forceLiveLookupTTL {
			delete(p.deleted, n)
		}
	}
	_, ok := p.deleted[name]
	return ok
}

func (*namespaceLifecycle) Name() string              { return "NamespaceLifecycle" }
func (*namespaceLifecycle) Handles(op Operation) bool { return op == Create || op == Delete }

var immortalNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// Admit runs in the mutating phase, first of the chain, as upstream's
// NamespaceLifecycle (a mutating plugin there): nothing else, webhooks
// included, is asked about an object in a namespace that does not exist or
// is terminating, and that answer comes before the object's own validation.
func (p *namespaceLifecycle) Admit(ctx context.Context, a *Attributes) error {
	if a.Operation == Delete {
		if a.Resource == grNamespaces {
			if immortalNamespaces[a.Name] {
				return forbidden(a, errorf("this namespace may not be deleted"))
			}
			p.mu.Lock()
			p.deleted[a.Name] = p.d.Clock.Now()
			p.mu.Unlock()
		}
		return nil
	}
	if a.Namespace == "" || a.Resource == grNamespaces {
		return nil
	}
	get := p.d.Getter.Get
	if p.recentlyDeleted(a.Namespace) {
		get = p.d.Getter.GetConsistent
	}
	obj, err := get(ctx, grNamespaces, "", a.Namespace)
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(grNamespaces, a.Namespace)
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	ns := obj.(*corev1.Namespace)
	if ns.Status.Phase == corev1.NamespaceTerminating || ns.DeletionTimestamp != nil {
		// Events about the terminating namespace's content are still allowed.
		if a.Resource.Resource == "events" {
			return nil
		}
		err := forbidden(a, errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
		err.(*apierrors.StatusError).ErrStatus.Details.Causes = append(err.(*apierrors.StatusError).ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
			Field:   "metadata.namespace",
		})
		return err
	}
	return nil
}

// --- LimitRanger -----------------------------------------------------------

// limitRanger applies a namespace's LimitRanges as upstream does: it fills
// in pod containers' default requests and limits, then checks the Container
// and Pod minimums, maximums and limit/request ratios of pods and the
// PersistentVolumeClaim minimums and maximums of claims. Every LimitRange is
// checked on its own; the first one a request violates rejects it, listing
// all of that range's violations (one alone, several as "[a, b]").
type limitRanger struct {
	d Deps

	// live holds, per namespace, the result of a live lookup made when
	// the watch cache had no LimitRange there (one created a moment ago
	// may not have reached it), reused for liveLookupTTL, as upstream's
	// LimitRanger does.
	live liveLookup
}

// list returns the namespace's LimitRanges from the watch cache or, when
// it has none, from a live lookup (cached for liveLookupTTL).
func (p *limitRanger) list(ctx context.Context, ns string) ([]runtime.Object, error) {
	return p.live.list(ctx, p.d, grLimitRanges, ns)
}

func (*limitRanger) Name() string { return "LimitRanger" }

// Handles: claims are checked on update too; pods only on create, as
// their containers cannot change afterwards.
func (*limitRanger) Handles(op Operation) bool { return op == Create || op == Update }

const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// applies reports whether the request is one LimitRanger looks at: a pod
// create or a claim create or update, not a subresource, and not a write
// to an object that is being deleted.
func (*limitRanger) applies(a *Attributes) bool {
	if a.Subresource != "" {
		return false
	}
	switch a.Resource {
	case grPods:
		if a.Operation != Create {
			return false
		}
	case grPVCs:
	default:
		return false
	}
	if a.OldObject != nil {
		if old, err := meta.Accessor(a.OldObject); err == nil && old.GetDeletionTimestamp() != nil {
			return false
		}
	}
	return true
}

func (p *limitRanger) ranges(ctx context.Context, a *Attributes) ([]*corev1.LimitRange, error) {
	objs, err := p.list(ctx, a.Namespace)
	if err != nil {
		gvr := schema.GroupVersionResource{Group: a.Resource.Group, Version: "v1", Resource: a.Resource.Resource}
		return nil, forbidden(a, errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, gvr))
	}
	out := make([]*corev1.LimitRange, 0, len(objs))
	for _, o := range objs {
		if lr, ok := o.(*corev1.LimitRange); ok {
			out = append(out, lr)
		}
	}
	return out, nil
}

func (p *limitRanger) Admit(ctx context.Context, a *Attributes) error {
	if !p.applies(a) {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	ranges, err := p.ranges(ctx, a)
	if err != nil {
		return err
	}
	for _, lr := range ranges {
		defaultPodResources(pod, lr)
	}
	return nil
}

// defaultPodResources gives every container the requests and limits the
// range's Container items default and the pod does not set, and records
// what it set in the kubernetes.io/limit-ranger annotation.
func defaultPodResources(pod *corev1.Pod, lr *corev1.LimitRange) {
	defLimits, defRequests := corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for res, q := range item.Default {
			defLimits[res] = q.DeepCopy()
		}
		for res, q := range item.DefaultRequest {
			defRequests[res] = q.DeepCopy()
		}
	}
	fill := func(list *corev1.ResourceList, defaults corev1.ResourceList) []string {
		var set []string
		for res, q := range defaults {
			if _, ok := (*list)[res]; ok {
				continue
			}
			if *list == nil {
				*list = corev1.ResourceList{}
			}
			(*list)[res] = q.DeepCopy()
			set = append(set, string(res))
		}
		sort.Strings(set)
		return set
	}
	var notes []string
	apply := func(c *corev1.Container, kind string) {
		if set := fill(&c.Resources.Requests, defRequests); len(set) > 0 {
			notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(set, ", "), kind, c.Name))
		}
		if set := fill(&c.Resources.Limits, defLimits); len(set) > 0 {
			notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(set, ", "), kind, c.Name))
		}
	}
	for i := range pod.Spec.Containers {
		apply(&pod.Spec.Containers[i], "container")
	}
	for i := range pod.Spec.InitContainers {
		apply(&pod.Spec.InitContainers[i], "init container")
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

func (p *limitRanger) Validate(ctx context.Context, a *Attributes) error {
	if !p.applies(a) {
		return nil
	}
	var check func(*corev1.LimitRange) []error
	switch obj := a.Object.(type) {
	case *corev1.Pod:
		check = func(lr *corev1.LimitRange) []error { return podLimitViolations(lr, obj) }
	case *corev1.PersistentVolumeClaim:
		check = func(lr *corev1.LimitRange) []error { return claimLimitViolations(lr, obj) }
	default:
		return nil
	}
	ranges, err := p.ranges(ctx, a)
	if err != nil {
		return err
	}
	for _, lr := range ranges {
		// NewAggregate prints one violation as is and several as "[a, b]",
		// dropping repeated messages.
		if err := utilerrors.NewAggregate(check(lr)); err != nil {
			return forbidden(a, err)
		}
	}
	return nil
}

// podLimitViolations checks each container against the range's Container
// items and the whole pod against its Pod items.
func podLimitViolations(lr *corev1.LimitRange, pod *corev1.Pod) []error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for _, c := range cs {
					errs = append(errs, boundViolations(item, c.Resources.Requests, c.Resources.Limits)...)
				}
			}
		case corev1.LimitTypePod:
			errs = append(errs, boundViolations(item, podRequests(pod), podLimits(pod))...)
		}
	}
	return errs
}

// claimLimitViolations checks a claim's requests against the range's
// PersistentVolumeClaim items; a claim's limits are not looked at.
func claimLimitViolations(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) []error {
	var errs []error
	kind := string(corev1.LimitTypePersistentVolumeClaim)
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		for _, res := range sortedNames(item.Min) {
			if err := checkMin(kind, res, item.Min[res], pvc.Spec.Resources.Requests, nil); err != nil {
				errs = append(errs, err)
			}
		}
		for _, res := range sortedNames(item.Max) {
			if err := checkMaxRequest(kind, res, item.Max[res], pvc.Spec.Resources.Requests); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// boundViolations checks requests and limits against an item's min, max
// and maxLimitRequestRatio, resource by resource in name order.
func boundViolations(item corev1.LimitRangeItem, requests, limits corev1.ResourceList) []error {
	var errs []error
	kind := string(item.Type)
	for _, res := range sortedNames(item.Min) {
		if err := checkMin(kind, res, item.Min[res], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, res := range sortedNames(item.Max) {
		if err := checkMax(kind, res, item.Max[res], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, res := range sortedNames(item.MaxLimitRequestRatio) {
		if err := checkRatio(kind, res, item.MaxLimitRequestRatio[res], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// atCommonScale returns the quantities as integers of one precision:
// thousandths when none of them overflows at that scale, units otherwise.
func atCommonScale(qs ...resource.Quantity) []int64 {
	out := make([]int64, len(qs))
	milli := true
	for i, q := range qs {
		out[i] = q.Value()
		if out[i] > resource.MaxMilliValue {
			milli = false
		}
	}
	if milli {
		for i, q := range qs {
			out[i] = q.MilliValue()
		}
	}
	return out
}

func checkMin(kind string, res corev1.ResourceName, min resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[res]
	lim, hasLim := limits[res]
	v := atCommonScale(req, lim, min)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", res, kind, min.String())
	case v[0] < v[2]:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", res, kind, min.String(), req.String())
	case hasLim && v[1] < v[2]:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", res, kind, min.String(), lim.String())
	}
	return nil
}

func checkMax(kind string, res corev1.ResourceName, max resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[res]
	lim, hasLim := limits[res]
	v := atCommonScale(req, lim, max)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", res, kind, max.String())
	case v[1] > v[2]:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", res, kind, max.String(), lim.String())
	case hasReq && v[0] > v[2]:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", res, kind, max.String(), req.String())
	}
	return nil
}

// checkMaxRequest is the maximum for kinds that only have requests (claims).
func checkMaxRequest(kind string, res corev1.ResourceName, max resource.Quantity, requests corev1.ResourceList) error {
	req, hasReq := requests[res]
	v := atCommonScale(req, resource.Quantity{}, max)
	switch {
	case !hasReq:
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", res, kind, max.String())
	case v[0] > v[2]:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", res, kind, max.String(), req.String())
	}
	return nil
}

func checkRatio(kind string, res corev1.ResourceName, ratio resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[res]
	lim, hasLim := limits[res]
	v := atCommonScale(req, lim, ratio)
	if !hasReq || v[0] == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", res, kind, ratio.String())
	}
	if !hasLim || v[1] == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", res, kind, ratio.String())
	}
	observed := float64(v[1]) / float64(v[0])
	compared, allowed := observed, float64(ratio.Value())
	if ratio.Value() <= resource.MaxMilliValue {
		compared, allowed = observed*1000, float64(ratio.MilliValue())
	}
	if compared > allowed {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", res, kind, ratio.String(), observed)
	}
	return nil
}

// podRequests and podLimits are what a pod as a whole asks for, from its
// spec: the sum over the containers and the sidecars (restartable init
// containers), or more if an init container needs more while it runs next
// to the sidecars started before it. Pod-level cpu and memory override the
// sum.
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	return podTotal(pod, func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Requests })
}

func podLimits(pod *corev1.Pod) corev1.ResourceList {
	return podTotal(pod, func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
}

func podTotal(pod *corev1.Pod, pick func(*corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addResources(total, pick(&pod.Spec.Containers[i].Resources))
	}
	sidecars, initPeak := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		running := corev1.ResourceList{}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResources(total, pick(&c.Resources))
			addResources(sidecars, pick(&c.Resources))
			addResources(running, sidecars)
		} else {
			addResources(running, pick(&c.Resources))
			addResources(running, sidecars)
		}
		maxResources(initPeak, running)
	}
	maxResources(total, initPeak)
	if pod.Spec.Resources != nil {
		for res, q := range pick(pod.Spec.Resources) {
			if res == corev1.ResourceCPU || res == corev1.ResourceMemory {
				total[res] = q.DeepCopy()
			}
		}
	}
	return total
}

func addResources(dst, src corev1.ResourceList) {
	for res, q := range src {
		if cur, ok := dst[res]; ok {
			cur.Add(q)
			dst[res] = cur
		} else {
			dst[res] = q.DeepCopy()
		}
	}
}

func maxResources(dst, src corev1.ResourceList) {
	for res, q := range src {
		if cur, ok := dst[res]; !ok || q.Cmp(cur) > 0 {
			dst[res] = q.DeepCopy()
		}
	}
}

// --- ServiceAccount --------------------------------------------------------

// serviceAccount gives pods the namespace's "default" service account,
// checks that the account exists, and mounts its API credentials as the
// projected volume kube-api-access-<suffix>.
type serviceAccount struct{ d Deps }

func (*serviceAccount) Name() string              { return "ServiceAccount" }
func (*serviceAccount) Handles(op Operation) bool { return op == Create }

const (
	serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	mirrorPodAnnotation     = "kubernetes.io/config.mirror"
)

func (p *serviceAccount) Admit(ctx context.Context, a *Attributes) error {
	pod, ok := isPodCreate(a)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
	}
	obj, err := p.d.Getter.Get(ctx, grServiceAccounts, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return forbidden(a, errorf("error looking up service account %s/%s: serviceaccount %q not found", a.Namespace, pod.Spec.ServiceAccountName, pod.Spec.ServiceAccountName))
		}
		return apierrors.NewInternalError(err)
	}
	sa := obj.(*corev1.ServiceAccount)
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = append([]corev1.LocalObjectReference(nil), sa.ImagePullSecrets...)
	}
	automount := true
	if sa.AutomountServiceAccountToken != nil {
		automount = *sa.AutomountServiceAccountToken
	}
	if pod.Spec.AutomountServiceAccountToken != nil {
		automount = *pod.Spec.AutomountServiceAccountToken
	}
	if !automount {
		return nil
	}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.MountPath == serviceAccountMountPath {
				return nil // the pod brings its own credentials
			}
		}
	}
	name := "kube-api-access-" + randomSuffix(p.d, 5)
	pod.Spec.Volumes = append(pod.Spec.Volumes, tokenVolume(name))
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: serviceAccountMountPath}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].VolumeMounts = append(pod.Spec.InitContainers[i].VolumeMounts, mount)
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].VolumeMounts = append(pod.Spec.Containers[i].VolumeMounts, mount)
	}
	return nil
}

// tokenVolume is the projected volume upstream mounts for API access.
func tokenVolume(name string) corev1.Volume {
	mode := int32(0644)
	expiry := int64(3607)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &expiry, Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path:     "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}}}
}

const suffixChars = "bcdfghjklmnpqrstvwxz2456789"

func randomSuffix(d Deps, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = suffixChars[d.Rand.IntN(len(suffixChars))]
	}
	return string(b)
}

// --- TaintNodesByCondition -------------------------------------------------

// taintNodesByCondition marks new nodes not-ready until the node lifecycle
// controller sees them Ready.
type taintNodesByCondition struct{}

func (*taintNodesByCondition) Name() string              { return "TaintNodesByCondition" }
func (*taintNodesByCondition) Handles(op Operation) bool { return op == Create }

func (*taintNodesByCondition) Admit(_ context.Context, a *Attributes) error {
	if a.Resource != grNodes || a.Subresource != "" {
		return nil
	}
	node, ok := a.Object.(*corev1.Node)
	if !ok {
		return nil
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
			return nil
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	return nil
}

// --- Priority --------------------------------------------------------------

// priority resolves a pod's priorityClassName into its priority value.
type priority struct{ d Deps }

func (*priority) Name() string              { return "Priority" }
func (*priority) Handles(op Operation) bool { return op == Create }

func (p *priority) Admit(ctx context.Context, a *Attributes) error {
	pod, ok := isPodCreate(a)
	if !ok {
		return nil
	}
	lower := corev1.PreemptLowerPriority
	var (
		value  int32
		policy = &lower // what a pod without a priority class gets
	)
	if pod.Spec.PriorityClassName == "" {
		classes, err := p.d.Getter.List(ctx, grPriorityClasses, "")
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		var def *schedulingv1.PriorityClass
		for _, o := range classes {
			pc := o.(*schedulingv1.PriorityClass)
			if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
				def = pc
			}
		}
		if def != nil {
			pod.Spec.PriorityClassName = def.Name
			value = def.Value
			if def.PreemptionPolicy != nil {
				policy = def.PreemptionPolicy
			}
		}
	} else {
		obj, err := p.d.Getter.Get(ctx, grPriorityClasses, "", pod.Spec.PriorityClassName)
		if apierrors.IsNotFound(err) {
			return forbidden(a, errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		pc := obj.(*schedulingv1.PriorityClass)
		value = pc.Value
		if pc.PreemptionPolicy != nil {
			policy = pc.PreemptionPolicy
		}
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
		return forbidden(a, errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, value))
	}
	pod.Spec.Priority = &value
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return forbidden(a, errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pol := *policy
		pod.Spec.PreemptionPolicy = &pol
	}
	return nil
}

func (p *priority) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource != grPriorityClasses || a.Operation != Create {
		return nil
	}
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok || !pc.GlobalDefault {
		return nil
	}
	classes, err := p.d.Getter.List(ctx, grPriorityClasses, "")
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	for _, o := range classes {
		if other := o.(*schedulingv1.PriorityClass); other.GlobalDefault && other.Name != pc.Name {
			return forbidden(a, errorf("PriorityClass %v is already marked as default. Only one default can exist", other.Name))
		}
	}
	return nil
}

// --- DefaultTolerationSeconds ----------------------------------------------

// defaultTolerationSeconds lets pods stay 300 s on a node that became
// not-ready or unreachable before they are evicted.
type defaultTolerationSeconds struct{}

func (*defaultTolerationSeconds) Name() string              { return "DefaultTolerationSeconds" }
func (*defaultTolerationSeconds) Handles(op Operation) bool { return op == Create }

func (*defaultTolerationSeconds) Admit(_ context.Context, a *Attributes) error {
	pod, ok := isPodCreate(a)
	if !ok {
		return nil
	}
	seconds := int64(300)
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		tolerated := false
		for _, t := range pod.Spec.Tolerations {
			if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
				tolerated = true
				break
			}
		}
		if !tolerated {
			s := seconds
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &s,
			})
		}
	}
	return nil
}

// --- DefaultStorageClass ---------------------------------------------------

// defaultStorageClass gives claims without a class the default one.
type defaultStorageClass struct{ d Deps }

func (*defaultStorageClass) Name() string              { return "DefaultStorageClass" }
func (*defaultStorageClass) Handles(op Operation) bool { return op == Create }

const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

func (p *defaultStorageClass) Admit(ctx context.Context, a *Attributes) error {
	if a.Resource != grPVCs || a.Subresource != "" {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || pvc.Spec.StorageClassName != nil {
		return nil
	}
	classes, err := p.d.Getter.List(ctx, grStorageClasses, "")
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var def *storagev1.StorageClass
	for _, o := range classes {
		sc := o.(*storagev1.StorageClass)
		if sc.Annotations[defaultClassAnnotation] != "true" {
			continue
		}
		// Several defaults: the newest wins, as upstream.
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) {
			def = sc
		}
	}
	if def != nil {
		name := def.Name
		pvc.Spec.StorageClassName = &name
	}
	return nil
}
