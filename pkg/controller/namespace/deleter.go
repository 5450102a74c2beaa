package namespace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/discovery"
)

// finalizerEstimateSeconds is how long objects held by finalizers are
// expected to take (upstream's).
const finalizerEstimateSeconds int64 = 15

// ResourcesRemainingError: content is left; look again in Estimate seconds.
type ResourcesRemainingError struct {
	Estimate int64
}

func (e *ResourcesRemainingError) Error() string {
	return fmt.Sprintf("some content remains in the namespace, estimate %d seconds before it is removed", e.Estimate)
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

var namespacesRes = client.Resource{Version: "v1", Resource: "namespaces"}

// deletionConditionTypes in upstream's order.
var deletionConditionTypes = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

var okMessages = map[corev1.NamespaceConditionType]string{
	corev1.NamespaceDeletionDiscoveryFailure: "All resources successfully discovered",
	corev1.NamespaceDeletionGVParsingFailure: "All legacy kube types successfully parsed",
	corev1.NamespaceDeletionContentFailure:   "All content successfully deleted, may be waiting on finalization",
	corev1.NamespaceContentRemaining:         "All content successfully removed",
	corev1.NamespaceFinalizersRemaining:      "All content-preserving finalizers finished",
}

var okReasons = map[corev1.NamespaceConditionType]string{
	corev1.NamespaceDeletionDiscoveryFailure: "ResourcesDiscovered",
	corev1.NamespaceDeletionGVParsingFailure: "ParsedGroupVersions",
	corev1.NamespaceDeletionContentFailure:   "ContentDeleted",
	corev1.NamespaceContentRemaining:         "ContentRemoved",
	corev1.NamespaceFinalizersRemaining:      "ContentHasNoFinalizers",
}

// conditionUpdater collects the conditions of one pass.
type conditionUpdater struct {
	newConditions       []corev1.NamespaceCondition
	deleteContentErrors []error
	now                 metav1.Time
}

func (u *conditionUpdater) processDiscoverResourcesErr(err error) {
	msg := err.Error()
	var derr *discovery.GroupDiscoveryFailedError
	if errors.As(err, &derr) {
		msg = fmt.Sprintf("Discovery failed for some groups, %d failing: %v", len(derr.Groups), err)
	}
	u.newConditions = append(u.newConditions, corev1.NamespaceCondition{Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionTrue,
		LastTransitionTime: u.now, Reason: "DiscoveryFailed", Message: msg})
}

func (u *conditionUpdater) processGroupVersionErr(err error) {
	u.newConditions = append(u.newConditions, corev1.NamespaceCondition{Type: corev1.NamespaceDeletionGVParsingFailure, Status: corev1.ConditionTrue,
		LastTransitionTime: u.now, Reason: "GroupVersionParsingFailed", Message: err.Error()})
}

func (u *conditionUpdater) processDeleteContentErr(err error) {
	u.deleteContentErrors = append(u.deleteContentErrors, err)
}

type contentTotals struct {
	gvrToNumRemaining        map[schema.GroupResource]int
	finalizersToNumRemaining map[string]int
}

func (u *conditionUpdater) processContentTotals(t contentTotals) {
	var resources []string
	for gr, n := range t.gvrToNumRemaining {
		if n > 0 {
			resources = append(resources, fmt.Sprintf("%s.%s has %d resource instances", gr.Resource, gr.Group, n))
		}
	}
	sort.Strings(resources)
	if len(resources) > 0 {
		u.newConditions = append(u.newConditions, corev1.NamespaceCondition{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue,
			LastTransitionTime: u.now, Reason: "SomeResourcesRemain", Message: "Some resources are remaining: " + strings.Join(resources, ", ")})
	}
	var finalizers []string
	for f, n := range t.finalizersToNumRemaining {
		if n > 0 {
			finalizers = append(finalizers, fmt.Sprintf("%s in %d resource instances", f, n))
		}
	}
	sort.Strings(finalizers)
	if len(finalizers) > 0 {
		u.newConditions = append(u.newConditions, corev1.NamespaceCondition{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue,
			LastTransitionTime: u.now, Reason: "SomeFinalizersRemain", Message: "Some content in the namespace has finalizers remaining: " + strings.Join(finalizers, ", ")})
	}
}

// apply merges the pass's conditions into status: every deletion condition
// is present (False with upstream's "ok" reason when nothing is wrong); an
// unchanged condition keeps its transition time.
func (u *conditionUpdater) apply(status *corev1.NamespaceStatus) {
	if len(u.deleteContentErrors) > 0 {
		u.newConditions = append(u.newConditions, corev1.NamespaceCondition{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: u.now, Reason: "ContentDeletionFailed", Message: utilerrors.NewAggregate(u.deleteContentErrors).Error()})
	}
	for _, typ := range deletionConditionTypes {
		var cond *corev1.NamespaceCondition
		for i := range u.newConditions {
			if u.newConditions[i].Type == typ {
				cond = &u.newConditions[i]
			}
		}
		if cond == nil {
			cond = &corev1.NamespaceCondition{Type: typ, Status: corev1.ConditionFalse, LastTransitionTime: u.now, Reason: okReasons[typ], Message: okMessages[typ]}
		}
		idx := -1
		for i := range status.Conditions {
			if status.Conditions[i].Type == typ {
				idx = i
			}
		}
		if idx < 0 {
			status.Conditions = append(status.Conditions, *cond)
			continue
		}
		old := status.Conditions[idx]
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			continue
		}
		status.Conditions[idx] = *cond
	}
}

// gvrDeletion is what is left of one resource.
type gvrDeletion struct {
	finalizerEstimateSeconds int64
	numRemaining             int
	finalizersToNumRemaining map[string]int
}

// deleteNamespace runs one pass for the namespace named name
// (upstream's namespacedResourcesDeleter.Delete).
func (c *Controller) deleteNamespace(ctx context.Context, name string) error {
	ns, err := c.namespaces.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	if ns.Status.Phase != corev1.NamespaceTerminating {
		ns, err = c.updateStatus(ctx, ns, func(n *corev1.Namespace) { n.Status.Phase = corev1.NamespaceTerminating })
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	if finalized(ns) {
		return nil
	}
	estimate, err := c.deleteAllContent(ctx, ns)
	if err != nil {
		return err
	}
	if estimate > 0 {
		return &ResourcesRemainingError{Estimate: estimate}
	}
	return c.finalize(ctx, name)
}

func finalized(ns *corev1.Namespace) bool {
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return false
		}
	}
	return true
}

// updateStatus applies fn to the namespace's status, retrying conflicts
// with a fresh read.
func (c *Controller) updateStatus(ctx context.Context, ns *corev1.Namespace, fn func(*corev1.Namespace)) (*corev1.Namespace, error) {
	for attempt := 0; ; attempt++ {
		n := ns.DeepCopy()
		fn(n)
		out, err := c.namespaces.UpdateStatus(ctx, n, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) && attempt < 5 {
			if ns, err = c.namespaces.Get(ctx, ns.Name, metav1.GetOptions{}); err != nil {
				return nil, err
			}
			continue
		}
		return out, err
	}
}

// finalize removes the "kubernetes" finalizer through namespaces/finalize.
func (c *Controller) finalize(ctx context.Context, name string) error {
	for attempt := 0; ; attempt++ {
		ns, err := c.namespaces.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if finalized(ns) {
			return nil
		}
		var keep []corev1.FinalizerName
		for _, f := range ns.Spec.Finalizers {
			if f != corev1.FinalizerKubernetes {
				keep = append(keep, f)
			}
		}
		ns.Spec.Finalizers = keep
		body, err := json.Marshal(ns)
		if err != nil {
			return err
		}
		_, err = c.cfg.Client.Do(ctx, &client.Request{Method: http.MethodPut, Path: namespacesRes.Path("", name, "finalize"), Body: body})
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
}

// deleteAllContent deletes the namespace's content, pods first, and
// records the conditions; it returns the estimated seconds until the rest
// is gone (0: nothing left).
func (c *Controller) deleteAllContent(ctx context.Context, ns *corev1.Namespace) (int64, error) {
	var errs []error
	u := &conditionUpdater{now: metav1.NewTime(c.cfg.Clock.Now())}
	c.disc.Invalidate()
	resources, err := c.disc.ServerPreferredNamespacedResources(ctx)
	if err != nil {
		// Not fatal: act on what was discovered.
		errs = append(errs, err)
		u.processDiscoverResourcesErr(err)
	}
	deletable := discovery.FilteredBy(discovery.SupportsAllVerbs("delete"), resources)
	gvrs, err := discovery.GroupVersionResources(deletable)
	if err != nil {
		errs = append(errs, err)
		u.processGroupVersionErr(err)
	}
	totals := contentTotals{gvrToNumRemaining: map[schema.GroupResource]int{}, finalizersToNumRemaining: map[string]int{}}
	var estimate int64
	add := func(gvr schema.GroupVersionResource, r metav1.APIResource) {
		m, err := c.deleteAllContentForGVR(ctx, gvr, r, ns)
		if err != nil {
			errs = append(errs, err)
			u.processDeleteContentErr(err)
		}
		if m.finalizerEstimateSeconds > estimate {
			estimate = m.finalizerEstimateSeconds
		}
		if m.numRemaining > 0 {
			totals.gvrToNumRemaining[gvr.GroupResource()] += m.numRemaining
			for f, n := range m.finalizersToNumRemaining {
				totals.finalizersToNumRemaining[f] += n
			}
		}
	}
	// Pods first, waited for (ordered namespace deletion).
	if r, ok := gvrs[podsGVR]; ok {
		add(podsGVR, r)
		delete(gvrs, podsGVR)
	}
	if len(totals.gvrToNumRemaining) == 0 {
		keys := make([]schema.GroupVersionResource, 0, len(gvrs))
		for gvr := range gvrs {
			keys = append(keys, gvr)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, gvr := range keys {
			add(gvr, gvrs[gvr])
		}
	}
	u.processContentTotals(totals)
	if _, err := c.updateStatus(ctx, ns, func(n *corev1.Namespace) { u.apply(&n.Status) }); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	if len(totals.gvrToNumRemaining) > 0 && estimate == 0 && len(errs) == 0 {
		estimate = 1 // pods left without an estimate: look again soon
	}
	return estimate, utilerrors.NewAggregate(errs)
}

// deleteAllContentForGVR deletes one resource's objects in the namespace
// and reports what is left.
func (c *Controller) deleteAllContentForGVR(ctx context.Context, gvr schema.GroupVersionResource, r metav1.APIResource, ns *corev1.Namespace) (gvrDeletion, error) {
	rc := c.meta.Resource(discovery.ResourceOf(gvr, r)).Namespace(ns.Name)
	bg := metav1.DeletePropagationBackground
	if hasVerb(r, "deletecollection") {
		if err := rc.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
			return gvrDeletion{}, err
		}
	} else if hasVerb(r, "list") {
		l, err := rc.List(ctx, metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return gvrDeletion{}, err
		}
		if l != nil {
			for _, item := range l.Items {
				if item.DeletionTimestamp != nil {
					continue
				}
				if err := rc.Delete(ctx, item.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
					return gvrDeletion{}, err
				}
			}
		}
	}
	if !hasVerb(r, "list") {
		return gvrDeletion{}, nil
	}
	// What is left?
	l, err := rc.List(ctx, metav1.ListOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return gvrDeletion{}, nil
		}
		return gvrDeletion{}, err
	}
	if len(l.Items) == 0 {
		return gvrDeletion{}, nil
	}
	finalizers := map[string]int{}
	for _, item := range l.Items {
		for _, f := range item.Finalizers {
			finalizers[f]++
		}
	}
	m := gvrDeletion{numRemaining: len(l.Items), finalizersToNumRemaining: finalizers}
	if gvr == podsGVR {
		// Pods terminating gracefully: their grace period (upstream
		// estimates it before deleting; skiff over the pods still there).
		e, err := c.estimatePods(ctx, ns.Name)
		if err != nil {
			return m, err
		}
		m.finalizerEstimateSeconds = e
	}
	if m.finalizerEstimateSeconds != 0 {
		return m, nil
	}
	if len(finalizers) > 0 {
		m.finalizerEstimateSeconds = finalizerEstimateSeconds
		return m, nil
	}
	return m, fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns.Name, gvr)
}

func hasVerb(r metav1.APIResource, verb string) bool {
	for _, v := range r.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// estimatePods is upstream's graceful-termination estimate: the longest
// grace period of the namespace's pods that have not finished.
func (c *Controller) estimatePods(ctx context.Context, ns string) (int64, error) {
	pods, err := c.pods.Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	var estimate int64
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Spec.TerminationGracePeriodSeconds != nil && *p.Spec.TerminationGracePeriodSeconds > estimate {
			estimate = *p.Spec.TerminationGracePeriodSeconds
		}
		if p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds > estimate {
			estimate = *p.DeletionGracePeriodSeconds
		}
	}
	return estimate, nil
}
