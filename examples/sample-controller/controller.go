package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
)

// A "Foo" here is a ConfigMap labelled foo.samplecontroller.skiff.sh=true
// whose data says which Deployment to run:
//
//	data:
//	  deploymentName: example-foo
//	  replicas: "1"
//
// The controller makes the Deployment exist, owned by the Foo, with that
// many nginx replicas, and reports the Deployment's available replicas back
// on the Foo (the annotation below, our stand-in for a status subresource).
// (Upstream's sample-controller uses a Foo custom resource; skiff serves
// custom resources once CRD serving lands, and this example moves to one.)
const (
	fooLabel            = "foo.samplecontroller.skiff.sh"
	availableAnnotation = "samplecontroller.skiff.sh/available-replicas"
	controllerAgentName = "sample-controller"

	// Event reasons, as upstream's sample-controller.
	SuccessSynced     = "Synced"
	ErrResourceExists = "ErrResourceExists"

	MessageResourceExists = "Resource %q already exists and is not managed by Foo"
	MessageResourceSynced = "Foo synced successfully"
)

// Controller keeps Deployments in line with Foos.
type Controller struct {
	deployments *client.Typed[*appsv1.Deployment, *appsv1.DeploymentList]
	configMaps  *client.Typed[*corev1.ConfigMap, *corev1.ConfigMapList]

	deploymentLister cache.Lister[*appsv1.Deployment]
	fooLister        cache.Lister[*corev1.ConfigMap]
	synced           []cache.InformerSynced

	// queue holds the keys ("namespace/name") of Foos to sync. A key, not
	// an object: the sync reads the current state from the listers
	// (level-triggered), so several changes to one Foo cost one sync.
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	logger   *slog.Logger
}

// NewController wires the two informers' event handlers to the work queue
// (upstream's NewController takes the Deployment and Foo informers too).
func NewController(c *client.Client, deployInformer *cache.TypedInformer[*appsv1.Deployment],
	fooInformer *cache.TypedInformer[*corev1.ConfigMap], recorder record.EventRecorder,
	limiter workqueue.TypedRateLimiter[string], metrics workqueue.MetricsProvider, logger *slog.Logger) (*Controller, error) {
	ctl := &Controller{
		deployments:      client.For[*appsv1.Deployment, *appsv1.DeploymentList](c),
		configMaps:       client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c),
		deploymentLister: deployInformer.Lister(),
		fooLister:        fooInformer.Lister(),
		synced:           []cache.InformerSynced{deployInformer.HasSynced, fooInformer.HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "Foos", MetricsProvider: metrics}),
		recorder: recorder,
		logger:   logger,
	}
	// A Foo changed: sync it.
	if _, err := fooInformer.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { ctl.enqueueFoo(cm) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { ctl.enqueueFoo(cm) },
	}); err != nil {
		return nil, err
	}
	// A Deployment changed: sync the Foo that owns it, if any. A resync
	// delivers updates with equal resourceVersions: nothing changed then.
	if _, err := deployInformer.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*appsv1.Deployment]{
		AddFunc: func(d *appsv1.Deployment, _ bool) { ctl.handleObject(d) },
		UpdateFunc: func(old, d *appsv1.Deployment) {
			if old.ResourceVersion != d.ResourceVersion {
				ctl.handleObject(d)
			}
		},
		DeleteFunc: func(d cache.DeletedObject[*appsv1.Deployment]) {
			if d.FinalStateUnknown != nil && d.Obj == nil {
				return // deleted while we were not watching, with no known state
			}
			ctl.handleObject(d.Obj)
		},
	}); err != nil {
		return nil, err
	}
	return ctl, nil
}

func isFoo(cm *corev1.ConfigMap) bool { return cm.Labels[fooLabel] == "true" }

// enqueueFoo puts a Foo's key on the queue.
func (c *Controller) enqueueFoo(cm *corev1.ConfigMap) {
	if !isFoo(cm) {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(cm)
	if err != nil {
		c.logger.Error("cannot key object", "err", err)
		return
	}
	c.queue.Add(key)
}

// handleObject finds the Foo controlling a Deployment and enqueues it.
func (c *Controller) handleObject(d *appsv1.Deployment) {
	owner := metav1.GetControllerOf(d)
	if owner == nil || owner.Kind != "ConfigMap" {
		return
	}
	foo, err := c.fooLister.Namespace(d.Namespace).Get(owner.Name)
	if err != nil || foo.UID != owner.UID {
		return // the owner is gone (or is another object of that name)
	}
	c.enqueueFoo(foo)
}

// Run waits for the caches, then runs workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer c.queue.ShutDown()
	c.logger.Info("waiting for informer caches to sync")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return errors.New("failed to wait for caches to sync")
	}
	c.logger.Info("starting workers", "count", workers)
	done := make(chan struct{})
	for i := 0; i < workers; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for c.processNextWorkItem(ctx) {
			}
		}()
	}
	<-ctx.Done()
	c.queue.ShutDown()
	for i := 0; i < workers; i++ {
		<-done
	}
	return nil
}

// processNextWorkItem takes one key off the queue and syncs it. The queue
// never hands the same key to two workers at once; Done lets it hand the
// key out again if it was re-added meanwhile.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.syncHandler(ctx, key); err != nil {
		// Retry later, with per-key exponential backoff.
		c.queue.AddRateLimited(key)
		c.logger.Info("requeued after error", "key", key, "err", err)
		return true
	}
	// Success: forget the key's failure history.
	c.queue.Forget(key)
	return true
}

// syncHandler drives the cluster towards what the Foo asks for.
func (c *Controller) syncHandler(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // a bad key will never work: drop it
	}
	foo, err := c.fooLister.Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // deleted: the garbage collector removes its Deployment
	}
	if err != nil {
		return err
	}
	deploymentName := foo.Data["deploymentName"]
	if deploymentName == "" {
		c.logger.Info("Foo has no deploymentName", "key", key)
		return nil
	}
	replicas, err := strconv.Atoi(foo.Data["replicas"])
	if err != nil {
		replicas = 1
	}
	want := int32(replicas)

	d, err := c.deploymentLister.Namespace(ns).Get(deploymentName)
	if apierrors.IsNotFound(err) {
		d, err = c.deployments.Namespace(ns).Create(ctx, newDeployment(foo, deploymentName, want), metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(d, foo) {
		msg := fmt.Sprintf(MessageResourceExists, d.Name)
		c.recorder.Event(foo, corev1.EventTypeWarning, ErrResourceExists, msg)
		return errors.New(msg)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != want {
		from := "unset"
		if d.Spec.Replicas != nil {
			from = strconv.Itoa(int(*d.Spec.Replicas))
		}
		c.logger.Info("scaling deployment", "foo", key, "from", from, "to", want)
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, want)
		if d, err = c.deployments.Namespace(ns).Patch(ctx, d.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	if err := c.updateFooStatus(ctx, foo, d); err != nil {
		return err
	}
	c.recorder.Event(foo, corev1.EventTypeNormal, SuccessSynced, MessageResourceSynced)
	return nil
}

// updateFooStatus records the Deployment's available replicas on the Foo.
func (c *Controller) updateFooStatus(ctx context.Context, foo *corev1.ConfigMap, d *appsv1.Deployment) error {
	available := strconv.Itoa(int(d.Status.AvailableReplicas))
	if foo.Annotations[availableAnnotation] == available {
		return nil
	}
	// Never modify a lister's object: it is the informer cache's.
	cp := foo.DeepCopy()
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations[availableAnnotation] = available
	_, err := c.configMaps.Namespace(foo.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	return err
}

// newDeployment is the Deployment a Foo asks for, owned by the Foo so that
// deleting the Foo deletes it (garbage collection).
func newDeployment(foo *corev1.ConfigMap, name string, replicas int32) *appsv1.Deployment {
	lbls := map[string]string{"app": "nginx", "controller": foo.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: foo.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(foo,
				corev1.SchemeGroupVersion.WithKind("ConfigMap"))},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}}},
			},
		},
	}
}

// FooSelector narrows the ConfigMap informer to Foos.
func FooSelector(o *metav1.ListOptions) { o.LabelSelector = labels.Set{fooLabel: "true"}.String() }
