package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplev1alpha1 "github.com/skiff-sh/skiff/examples/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
)

const controllerAgentName = "sample-controller"

// Event reasons and messages, as upstream's sample-controller.
const (
	// SuccessSynced is the reason of the event recorded when a Foo is
	// synced.
	SuccessSynced = "Synced"
	// ErrResourceExists is the reason of the event recorded when a Foo
	// fails to sync because a Deployment of the same name exists that it
	// does not own.
	ErrResourceExists = "ErrResourceExists"

	// MessageResourceExists is that event's message.
	MessageResourceExists = "Resource %q already exists and is not managed by Foo"
	// MessageResourceSynced is the message of the Synced event.
	MessageResourceSynced = "Foo synced successfully"
)

// Controller keeps a Deployment in line with each Foo.
type Controller struct {
	deployments *client.Typed[*appsv1.Deployment, *appsv1.DeploymentList]
	foos        *client.Typed[*samplev1alpha1.Foo, *samplev1alpha1.FooList]

	deploymentLister cache.Lister[*appsv1.Deployment]
	fooLister        cache.Lister[*samplev1alpha1.Foo]
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
	fooInformer *cache.TypedInformer[*samplev1alpha1.Foo], recorder record.EventRecorder,
	limiter workqueue.TypedRateLimiter[string], metrics workqueue.MetricsProvider, logger *slog.Logger) (*Controller, error) {
	ctl := &Controller{
		deployments:      client.For[*appsv1.Deployment, *appsv1.DeploymentList](c),
		foos:             client.NewTyped[*samplev1alpha1.Foo, *samplev1alpha1.FooList](c, samplev1alpha1.FoosResource),
		deploymentLister: deployInformer.Lister(),
		fooLister:        fooInformer.Lister(),
		synced:           []cache.InformerSynced{deployInformer.HasSynced, fooInformer.HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "Foos", MetricsProvider: metrics}),
		recorder: recorder,
		logger:   logger,
	}
	// A Foo changed: sync it.
	if _, err := fooInformer.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*samplev1alpha1.Foo]{
		AddFunc:    func(foo *samplev1alpha1.Foo, _ bool) { ctl.enqueueFoo(foo) },
		UpdateFunc: func(_, foo *samplev1alpha1.Foo) { ctl.enqueueFoo(foo) },
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
			if d.Obj == nil {
				return // deleted while we were not watching, with no known state
			}
			ctl.handleObject(d.Obj)
		},
	}); err != nil {
		return nil, err
	}
	return ctl, nil
}

// enqueueFoo puts a Foo's key on the queue.
func (c *Controller) enqueueFoo(foo *samplev1alpha1.Foo) {
	key, err := cache.MetaNamespaceKeyFunc(foo)
	if err != nil {
		c.logger.Error("cannot key object", "err", err)
		return
	}
	c.queue.Add(key)
}

// handleObject finds the Foo controlling a Deployment (its controller
// owner reference) and enqueues it; Deployments not owned by a Foo are
// ignored.
func (c *Controller) handleObject(d *appsv1.Deployment) {
	owner := metav1.GetControllerOf(d)
	if owner == nil || owner.Kind != "Foo" || owner.APIVersion != samplev1alpha1.SchemeGroupVersion.String() {
		return
	}
	foo, err := c.fooLister.Namespace(d.Namespace).Get(owner.Name)
	if err != nil || foo.UID != owner.UID {
		c.logger.Debug("ignoring orphaned object", "deployment", d.Namespace+"/"+d.Name, "owner", owner.Name)
		return // the owner is gone (or is another object of that name)
	}
	c.enqueueFoo(foo)
}

// Run waits for the caches, then runs workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer c.queue.ShutDown()
	c.logger.Info("Starting Foo controller")
	c.logger.Info("Waiting for informer caches to sync")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return errors.New("failed to wait for caches to sync")
	}
	c.logger.Info("Starting workers", "count", workers)
	done := make(chan struct{})
	for i := 0; i < workers; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for c.processNextWorkItem(ctx) {
			}
		}()
	}
	<-ctx.Done()
	c.logger.Info("Shutting down workers")
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
		c.logger.Info("Error syncing; requeuing for later retry", "key", key, "err", err)
		return true
	}
	// Success: forget the key's failure history.
	c.queue.Forget(key)
	c.logger.Info("Successfully synced", "key", key)
	return true
}

// syncHandler drives the cluster towards what the Foo asks for, and
// reports back on the Foo's status.
func (c *Controller) syncHandler(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		c.logger.Error("invalid resource key", "key", key)
		return nil // a bad key will never work: drop it
	}
	foo, err := c.fooLister.Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// Deleted: the garbage collector removes its Deployment.
		c.logger.Info("Foo referenced by item in work queue no longer exists", "key", key)
		return nil
	}
	if err != nil {
		return err
	}
	deploymentName := foo.Spec.DeploymentName
	if deploymentName == "" {
		// Nothing to do until the user fixes the Foo (its next update
		// brings it back).
		c.logger.Error("deployment name must be specified", "key", key)
		return nil
	}

	d, err := c.deploymentLister.Namespace(ns).Get(deploymentName)
	if apierrors.IsNotFound(err) {
		d, err = c.deployments.Namespace(ns).Create(ctx, newDeployment(foo), metav1.CreateOptions{})
	}
	if err != nil {
		return err // retried with backoff (a conflict, the API server down...)
	}
	if !metav1.IsControlledBy(d, foo) {
		msg := fmt.Sprintf(MessageResourceExists, d.Name)
		c.recorder.Event(foo, corev1.EventTypeWarning, ErrResourceExists, msg)
		return errors.New(msg)
	}
	if foo.Spec.Replicas != nil && (d.Spec.Replicas == nil || *foo.Spec.Replicas != *d.Spec.Replicas) {
		c.logger.Info("Update deployment resource", "foo", key, "currentReplicas", ptrString(d.Spec.Replicas), "desiredReplicas", *foo.Spec.Replicas)
		if d, err = c.deployments.Namespace(ns).Update(ctx, newDeploymentFrom(d, foo), metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if err := c.updateFooStatus(ctx, foo, d); err != nil {
		return err
	}
	c.recorder.Event(foo, corev1.EventTypeNormal, SuccessSynced, MessageResourceSynced)
	return nil
}

func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// updateFooStatus records the Deployment's available replicas on the
// Foo's status subresource.
func (c *Controller) updateFooStatus(ctx context.Context, foo *samplev1alpha1.Foo, d *appsv1.Deployment) error {
	if foo.Status.AvailableReplicas == d.Status.AvailableReplicas {
		return nil
	}
	// Never modify a lister's object: it is the informer cache's.
	cp := foo.DeepCopy()
	cp.Status.AvailableReplicas = d.Status.AvailableReplicas
	_, err := c.foos.Namespace(foo.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	return err
}

// newDeployment is the Deployment a Foo asks for, controlled by the Foo
// (an owner reference with controller: true), so that deleting the Foo
// deletes it (garbage collection) and its changes come back to the Foo
// (handleObject).
func newDeployment(foo *samplev1alpha1.Foo) *appsv1.Deployment {
	lbls := map[string]string{"app": "nginx", "controller": foo.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      foo.Spec.DeploymentName,
			Namespace: foo.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(foo,
				samplev1alpha1.SchemeGroupVersion.WithKind("Foo"))},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: foo.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}}},
			},
		},
	}
}

// newDeploymentFrom is the existing Deployment with the Foo's replica
// count (upstream replaces the spec with newDeployment's; keeping the
// cached object's metadata keeps the update's resourceVersion check).
func newDeploymentFrom(d *appsv1.Deployment, foo *samplev1alpha1.Foo) *appsv1.Deployment {
	cp := d.DeepCopy()
	r := *foo.Spec.Replicas
	cp.Spec.Replicas = &r
	return cp
}
