package replicaset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/controllerref"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/expectations"
	"github.com/skiff-sh/skiff/pkg/controller/internal/podutil"
)

// BurstReplicas is upstream's cap on creations or deletions per sync.
const BurstReplicas = 500

// Event reasons, as upstream's.
const (
	SuccessfulCreateReason = "SuccessfulCreate"
	FailedCreateReason     = "FailedCreate"
	SuccessfulDeleteReason = "SuccessfulDelete"
	FailedDeleteReason     = "FailedDelete"
)

// Config configures a Controller.
type Config struct {
	Client    *client.Client
	Informers *informers.SharedInformerFactory
	Recorder  record.EventRecorder
	Clock     clock.Clock
	Workers   int
	Logger    *slog.Logger
	// BurstReplicas caps creations/deletions per sync (default 500).
	BurstReplicas int
	// NameGenerator, if set, names new pods from their prefix
	// ("<owner>-"); otherwise the API server does (generateName).
	NameGenerator func(prefix string) string
	// MetricsProvider, if set, gets the workqueue's metrics.
	MetricsProvider workqueue.MetricsProvider
}

// Controller manages the pods of ReplicaSets (or ReplicationControllers).
type Controller struct {
	cfg   Config
	name  string
	b     backend
	pods  *client.Typed[*corev1.Pod, *corev1.PodList]
	podIn *cache.TypedInformer[*corev1.Pod]
	queue workqueue.TypedRateLimitingInterface[string]
	// Expectations are the creations/deletions issued and not yet observed.
	Expectations *expectations.Expectations
	log          *slog.Logger
}

// New returns the ReplicaSet controller.
func New(cfg Config) (*Controller, error) {
	rs := cfg.Informers.ReplicaSets()
	b := &rsBackend{inf: rs, client: client.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](cfg.Client)}
	return newController(cfg, "replicaset", b, func(h cache.ResourceEventHandler) error {
		_, err := rs.Informer().AddEventHandler(h)
		return err
	})
}

// NewReplicationManager returns the ReplicationController controller (the
// same logic over ReplicationControllers).
func NewReplicationManager(cfg Config) (*Controller, error) {
	rc := informers.InformerFor[*corev1.ReplicationController, *corev1.ReplicationControllerList](cfg.Informers)
	b := &rcBackend{inf: rc, client: client.For[*corev1.ReplicationController, *corev1.ReplicationControllerList](cfg.Client)}
	return newController(cfg, "replicationmanager", b, func(h cache.ResourceEventHandler) error {
		_, err := rc.Informer().AddEventHandler(h)
		return err
	})
}

func newController(cfg Config, name string, b backend, addOwnerHandler func(cache.ResourceEventHandler) error) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("replicaset: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.BurstReplicas <= 0 {
		cfg.BurstReplicas = BurstReplicas
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{} // drops events
	}
	c := &Controller{
		cfg:          cfg,
		name:         name,
		b:            b,
		pods:         client.For[*corev1.Pod, *corev1.PodList](cfg.Client),
		podIn:        cfg.Informers.Pods(),
		Expectations: expectations.New(cfg.Clock),
		log:          cfg.Logger.With("controller", name),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: cfg.MetricsProvider}),
	}
	if err := addOwnerHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueue(b.toRS(obj)) },
		UpdateFunc: func(_, obj any) {
			c.enqueue(b.toRS(obj))
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if rs := b.toRS(obj); rs != nil {
				key := rs.Namespace + "/" + rs.Name
				c.Expectations.Delete(key)
				c.queue.Add(key)
			}
		},
	}); err != nil {
		return nil, err
	}
	if err := controllerref.AddControllerUIDIndex(c.podIn.Informer()); err != nil {
		return nil, err
	}
	if _, err := c.podIn.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { c.addPod(p) },
		UpdateFunc: c.updatePod,
		DeleteFunc: func(d cache.DeletedObject[*corev1.Pod]) {
			if d.Obj != nil {
				c.deletePod(d.Obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func keyOf(rs *appsv1.ReplicaSet) string { return rs.Namespace + "/" + rs.Name }

func (c *Controller) enqueue(rs *appsv1.ReplicaSet) {
	if rs != nil {
		c.queue.Add(keyOf(rs))
	}
}

// Run waits for the caches and runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Informers.Start(ctx)
	if !cache.WaitForCacheSync(ctx, c.podIn.HasSynced, c.b.informer().HasSynced) {
		return ctx.Err()
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.Sync, func(key string, err error) {
		c.log.Info("sync failed", "key", key, "err", err)
	})
	return nil
}

// resolve returns the owner a controller reference names, if it is ours.
func (c *Controller) resolve(ns string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	rs, _ := controllerref.Resolve(ref, c.b.gvk().Kind, func(name string) (*appsv1.ReplicaSet, error) { return c.b.get(ns, name) })
	return rs
}

// podOwners are the owners whose selector matches an orphan pod.
func (c *Controller) podOwners(p *corev1.Pod) []*appsv1.ReplicaSet {
	all, err := c.b.list(p.Namespace)
	if err != nil {
		return nil
	}
	return controllerref.Selecting(all, func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector }, p.Labels)
}

func (c *Controller) addPod(p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		c.deletePod(p)
		return
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		rs := c.resolve(p.Namespace, ref)
		if rs == nil {
			return
		}
		c.Expectations.CreationObserved(keyOf(rs))
		c.enqueue(rs)
		return
	}
	for _, rs := range c.podOwners(p) {
		c.enqueue(rs)
	}
}

func (c *Controller) updatePod(old, cur *corev1.Pod) {
	if cur.ResourceVersion == old.ResourceVersion {
		return
	}
	labelChanged := !reflect.DeepEqual(cur.Labels, old.Labels)
	if cur.DeletionTimestamp != nil {
		c.deletePod(cur)
		if labelChanged {
			c.deletePod(old)
		}
		return
	}
	curRef, oldRef := metav1.GetControllerOfNoCopy(cur), metav1.GetControllerOfNoCopy(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := c.resolve(old.Namespace, oldRef); rs != nil {
			c.enqueue(rs)
		}
	}
	if curRef != nil {
		rs := c.resolve(cur.Namespace, curRef)
		if rs == nil {
			return
		}
		c.enqueue(rs)
		if !IsPodReady(old) && IsPodReady(cur) && rs.Spec.MinReadySeconds > 0 {
			c.queue.AddAfter(keyOf(rs), time.Duration(rs.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if labelChanged || refChanged {
		for _, rs := range c.podOwners(cur) {
			c.enqueue(rs)
		}
	}
}

func (c *Controller) deletePod(p *corev1.Pod) {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil {
		return
	}
	rs := c.resolve(p.Namespace, ref)
	if rs == nil {
		return
	}
	c.Expectations.DeletionObserved(keyOf(rs), p.Namespace+"/"+p.Name)
	c.enqueue(rs)
}

// Sync reconciles one owner (key "namespace/name"): claim pods, create or
// delete pods when expectations allow, write status.
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	rs, err := c.b.get(ns, name)
	if apierrors.IsNotFound(err) {
		c.Expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	needsSync := c.Expectations.Satisfied(key)
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return nil // invalid selectors never sync (validation forbids them)
	}
	// The pods rs controls and the namespace's orphans (which it may
	// adopt): pods controlled by others are never rs's to claim.
	all, err := controllerref.Controlled[*corev1.Pod](c.podIn.Informer().GetIndexer(), ns, rs.UID, true)
	if err != nil {
		return err
	}
	filtered, err := c.claimPods(ctx, rs, selector, FilterActivePods(all))
	if err != nil {
		return err
	}
	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = c.manageReplicas(ctx, filtered, rs)
	}
	rs = rs.DeepCopy()
	newStatus := CalculateStatus(rs, filtered, manageErr, c.cfg.Clock.Now())
	if c.b.gvk() == replicaSetKind {
		// status.terminatingReplicas (DeploymentReplicaSetTerminatingReplicas,
		// beta and on since 1.35; ReplicationControllers have no such field).
		n := TerminatingPods(rs, selector, all)
		newStatus.TerminatingReplicas = &n
	}
	updated, err := c.updateStatus(ctx, rs, newStatus)
	if err != nil {
		return err
	}
	if manageErr == nil && updated.Spec.MinReadySeconds > 0 &&
		updated.Status.ReadyReplicas == *updated.Spec.Replicas &&
		updated.Status.AvailableReplicas != *updated.Spec.Replicas {
		c.queue.AddAfter(key, time.Duration(updated.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

func (c *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	m := &controllerref.Manager{
		Controller: rs,
		Kind:       c.b.gvk(),
		Selector:   selector,
		CanAdopt: controllerref.RecheckDeletionTimestamp(rs, func(ctx context.Context) (metav1.Object, error) {
			return c.b.liveGet(ctx, rs.Namespace, rs.Name)
		}),
		Patch: controllerref.PatcherFor(c.pods),
	}
	return controllerref.Claim(ctx, m, pods)
}

// relatedPods are the active pods controlled by rs or by an owner sharing
// rs's controller (the other ReplicaSets of its Deployment).
func (c *Controller) relatedPods(rs *appsv1.ReplicaSet) []*corev1.Pod {
	uids := []types.UID{rs.UID}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		if siblings, err := c.b.list(rs.Namespace); err == nil {
			for _, s := range siblings {
				if r := metav1.GetControllerOfNoCopy(s); r != nil && r.UID == ref.UID && s.UID != rs.UID {
					uids = append(uids, s.UID)
				}
			}
		}
	}
	var out []*corev1.Pod
	for _, uid := range uids {
		pods, _ := controllerref.Controlled[*corev1.Pod](c.podIn.Informer().GetIndexer(), rs.Namespace, uid, false)
		for _, p := range pods {
			if IsPodActive(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func (c *Controller) manageReplicas(ctx context.Context, filtered []*corev1.Pod, rs *appsv1.ReplicaSet) error {
	key := keyOf(rs)
	want := int32(1)
	if rs.Spec.Replicas != nil {
		want = *rs.Spec.Replicas
	}
	diff := len(filtered) - int(want)
	switch {
	case diff < 0:
		diff = min(-diff, c.cfg.BurstReplicas)
		c.Expectations.ExpectCreations(key, diff)
		ok, err := SlowStartBatch(diff, 1, func() error { return c.createPod(ctx, rs) })
		for range diff - ok {
			c.Expectations.CreationObserved(key)
		}
		return err
	case diff > 0:
		diff = min(diff, c.cfg.BurstReplicas)
		victims := PodsToDelete(filtered, c.relatedPods(rs), diff, c.cfg.Clock.Now())
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = p.Namespace + "/" + p.Name
		}
		c.Expectations.ExpectDeletions(key, keys)
		errCh := make(chan error, len(victims))
		var wg sync.WaitGroup
		for i, p := range victims {
			wg.Go(func() {
				if err := c.deletePodAPI(ctx, rs, p); err != nil {
					c.Expectations.DeletionObserved(key, keys[i])
					if !apierrors.IsNotFound(err) {
						errCh <- err
					}
				}
			})
		}
		wg.Wait()
		close(errCh)
		return <-errCh
	}
	return nil
}

// PodFromTemplate is the pod an owner creates (upstream's
// GetPodFromTemplate): template labels, annotations, finalizers and spec,
// generateName "<owner>-", the owner as controller.
func PodFromTemplate(rs *appsv1.ReplicaSet, ref *metav1.OwnerReference) *corev1.Pod {
	t := rs.Spec.Template.DeepCopy()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    rs.Namespace,
			GenerateName: rs.Name + "-",
			Labels:       t.Labels,
			Annotations:  t.Annotations,
			Finalizers:   t.Finalizers,
		},
		Spec: t.Spec,
	}
	if ref != nil {
		p.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	return p
}

func (c *Controller) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	p := PodFromTemplate(rs, controllerref.NewControllerRef(rs, c.b.gvk()))
	if c.cfg.NameGenerator != nil {
		p.Name = c.cfg.NameGenerator(p.GenerateName)
		p.GenerateName = ""
	}
	created, err := c.pods.Namespace(rs.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return err
		}
		c.cfg.Recorder.Eventf(c.b.original(rs), corev1.EventTypeWarning, FailedCreateReason, "Error creating: %v", err)
		return err
	}
	c.cfg.Recorder.Eventf(c.b.original(rs), corev1.EventTypeNormal, SuccessfulCreateReason, "Created pod: %v", created.Name)
	return nil
}

func (c *Controller) deletePodAPI(ctx context.Context, rs *appsv1.ReplicaSet, p *corev1.Pod) error {
	err := c.pods.Namespace(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			c.cfg.Recorder.Eventf(c.b.original(rs), corev1.EventTypeWarning, FailedDeleteReason, "Error deleting: %v", err)
		}
		return err
	}
	c.cfg.Recorder.Eventf(c.b.original(rs), corev1.EventTypeNormal, SuccessfulDeleteReason, "Deleted pod: %v", p.Name)
	return nil
}

// SlowStartBatch calls fn count times in batches of 1, 2, 4, ... (starting
// at initial), stopping after the first batch with an error. It returns the
// number of successful calls and the first error.
func SlowStartBatch(count, initial int, fn func() error) (int, error) {
	return podutil.SlowStartBatch(count, initial, func(int) error { return fn() })
}

// CalculateStatus is the owner's status given its claimed active pods and
// the error of this sync's manage step, at now.
func CalculateStatus(rs *appsv1.ReplicaSet, filtered []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	st := *rs.Status.DeepCopy()
	templateSel := labels.SelectorFromSet(rs.Spec.Template.Labels)
	var fully, ready, available int32
	for _, p := range filtered {
		if templateSel.Matches(labels.Set(p.Labels)) {
			fully++
		}
		if IsPodReady(p) {
			ready++
			if IsPodAvailable(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	failure := getCondition(st, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failure == nil:
		want := int32(1)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		reason := FailedCreateReason
		if int32(len(filtered)) > want {
			reason = FailedDeleteReason
		}
		st.Conditions = append(st.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && failure != nil:
		var keep []appsv1.ReplicaSetCondition
		for _, cond := range st.Conditions {
			if cond.Type != appsv1.ReplicaSetReplicaFailure {
				keep = append(keep, cond)
			}
		}
		st.Conditions = keep
	}
	st.Replicas = int32(len(filtered))
	st.FullyLabeledReplicas = fully
	st.ReadyReplicas = ready
	st.AvailableReplicas = available
	return st
}

// TerminatingPods counts the pods rs controls, its selector matches, that
// are being deleted and have not terminated yet.
func TerminatingPods(rs *appsv1.ReplicaSet, selector labels.Selector, all []*corev1.Pod) int32 {
	var n int32
	for _, p := range all {
		if p.DeletionTimestamp == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == rs.UID && selector.Matches(labels.Set(p.Labels)) {
			n++
		}
	}
	return n
}

func getCondition(st appsv1.ReplicaSetStatus, t appsv1.ReplicaSetConditionType) *appsv1.ReplicaSetCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func (c *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	if reflect.DeepEqual(rs.Status, st) && rs.Generation == rs.Status.ObservedGeneration {
		return rs, nil
	}
	st.ObservedGeneration = rs.Generation
	var err error
	for i := 0; i < 2; i++ {
		rs.Status = st
		var out *appsv1.ReplicaSet
		if out, err = c.b.updateStatus(ctx, rs); err == nil {
			return out, nil
		}
		if i == 1 {
			break
		}
		fresh, gerr := c.b.liveGet(ctx, rs.Namespace, rs.Name)
		if gerr != nil {
			return nil, gerr
		}
		switch f := fresh.(type) {
		case *appsv1.ReplicaSet:
			rs = f
		case *corev1.ReplicationController:
			rs = RCToRS(f)
		default:
			return nil, fmt.Errorf("unexpected %T", fresh)
		}
		st.ObservedGeneration = rs.Generation
	}
	return nil, err
}
