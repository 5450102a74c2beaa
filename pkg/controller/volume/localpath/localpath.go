package localpath

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/controller/internal/volumeutil"
)

// Defaults.
const (
	// ProvisionerName is the provisioner of the local-path class.
	ProvisionerName = "skiff.io/local-path"
	// ClassName is the StorageClass ensured at start.
	ClassName = "local-path"
	// DefaultStorageDir is where volumes live on a node without
	// Config.StorageDir (skiff up uses <data dir>/storage).
	DefaultStorageDir = "/var/lib/skiff/storage"
	// QueueName is the queue's (and its metrics') name.
	QueueName = "local-path-provisioner"

	hostnameLabel = "kubernetes.io/hostname"
)

// The external provisioner library's event reasons.
const (
	EventProvisioning          = "Provisioning"
	EventProvisioningSucceeded = "ProvisioningSucceeded"
	EventProvisioningFailed    = "ProvisioningFailed"
	EventVolumeFailedDelete    = "VolumeFailedDelete"
)

// Config configures the provisioner.
type Config struct {
	Client          *client.Client
	Informers       *informers.SharedInformerFactory
	Recorder        record.EventRecorder
	Clock           clock.Clock
	Workers         int
	Logger          *slog.Logger
	MetricsProvider workqueue.MetricsProvider
	// StorageDir holds the volumes' directories on the nodes
	// (DefaultStorageDir when empty).
	StorageDir string
	// ManageDirectories: the nodes' file system is this process's (skiff
	// up): create the directories at provisioning, remove them at deletion.
	ManageDirectories bool
	// NoDefaultClass leaves the local-path StorageClass out.
	NoDefaultClass bool
}

// Controller is the local-path provisioner.
type Controller struct {
	cfg  Config
	pvs  *client.Typed[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	pvcs *client.Typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	scs  *client.Typed[*storagev1.StorageClass, *storagev1.StorageClassList]

	volumes cache.Lister[*corev1.PersistentVolume]
	claims  cache.Lister[*corev1.PersistentVolumeClaim]
	classes cache.Lister[*storagev1.StorageClass]
	nodes   cache.Lister[*corev1.Node]
	pods    cache.Indexer
	synced  []cache.InformerSynced

	// queue holds "claim/<namespace>/<name>" and "volume/<name>" keys.
	queue workqueue.TypedRateLimitingInterface[string]
}

const (
	claimPrefix  = "claim/"
	volumePrefix = "volume/"
)

// New registers the provisioner's informer handlers.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("localpath: Client and Informers are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{} // drops events
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.StorageDir == "" {
		cfg.StorageDir = DefaultStorageDir
	}
	c := &Controller{
		cfg:  cfg,
		pvs:  client.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](cfg.Client),
		pvcs: client.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](cfg.Client),
		scs:  client.For[*storagev1.StorageClass, *storagev1.StorageClassList](cfg.Client),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiterWithClock[string](cfg.Clock),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: QueueName, MetricsProvider: cfg.MetricsProvider, Clock: cfg.Clock}),
	}
	pvInf, pvcInf, scInf, podInf, nodeInf := cfg.Informers.PersistentVolumes(), cfg.Informers.PersistentVolumeClaims(),
		cfg.Informers.StorageClasses(), cfg.Informers.Pods(), cfg.Informers.Nodes()
	enqueueClaim := func(pvc *corev1.PersistentVolumeClaim) {
		c.queue.Add(claimPrefix + volumeutil.ClaimKey(pvc.Namespace, pvc.Name))
	}
	if _, err := pvcInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolumeClaim]{
		AddFunc:    func(pvc *corev1.PersistentVolumeClaim, _ bool) { enqueueClaim(pvc) },
		UpdateFunc: func(_, pvc *corev1.PersistentVolumeClaim) { enqueueClaim(pvc) },
	}); err != nil {
		return nil, err
	}
	if _, err := pvInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.PersistentVolume]{
		AddFunc:    func(pv *corev1.PersistentVolume, _ bool) { c.queue.Add(volumePrefix + pv.Name) },
		UpdateFunc: func(_, pv *corev1.PersistentVolume) { c.queue.Add(volumePrefix + pv.Name) },
	}); err != nil {
		return nil, err
	}
	// A pod placed on a node may decide where its claims go.
	enqueuePodClaims := func(pod *corev1.Pod) {
		if pod.Spec.NodeName == "" {
			return
		}
		keys, _ := volumeutil.PodPVCIndexFunc(pod)
		for _, k := range keys {
			c.queue.Add(claimPrefix + k)
		}
	}
	if _, err := podInf.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { enqueuePodClaims(p) },
		UpdateFunc: func(_, p *corev1.Pod) { enqueuePodClaims(p) },
	}); err != nil {
		return nil, err
	}
	if err := volumeutil.AddPodPVCIndex(podInf.Informer()); err != nil {
		return nil, err
	}
	c.volumes, c.claims, c.classes, c.nodes = pvInf.Lister(), pvcInf.Lister(), scInf.Lister(), nodeInf.Lister()
	c.pods = podInf.Informer().GetIndexer()
	c.synced = []cache.InformerSynced{pvInf.HasSynced, pvcInf.HasSynced, scInf.HasSynced, podInf.HasSynced, nodeInf.HasSynced}
	return c, nil
}

// Run ensures the local-path StorageClass, waits for the caches and runs
// the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.cfg.Logger.Info("Starting local-path provisioner", "provisioner", ProvisionerName, "storageDir", c.cfg.StorageDir)
	defer c.cfg.Logger.Info("Shutting down local-path provisioner")
	if !cache.WaitForCacheSync(ctx, c.synced...) {
		return nil
	}
	if !c.cfg.NoDefaultClass {
		if err := c.ensureClass(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logger.Error("Cannot create the local-path StorageClass", "err", err)
		}
	}
	workqueue.RunWorkers(ctx, c.queue, c.cfg.Workers, c.sync, func(key string, err error) {
		c.cfg.Logger.Error("Syncing failed", "key", key, "err", err)
	})
	return nil
}

// ensureClass creates the local-path StorageClass unless it exists;
// default unless another class already is.
func (c *Controller) ensureClass(ctx context.Context) error {
	if _, err := c.scs.Get(ctx, ClassName, metav1.GetOptions{}); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	list, err := c.scs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	isDefault := "true"
	for i := range list.Items {
		if volumeutil.IsDefaultClass(&list.Items[i]) {
			isDefault = "false"
		}
	}
	_, err = c.scs.Create(ctx, DefaultClass(isDefault == "true"), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// DefaultClass is the local-path StorageClass.
func DefaultClass(isDefault bool) *storagev1.StorageClass {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	policy := corev1.PersistentVolumeReclaimDelete
	def := "false"
	if isDefault {
		def = "true"
	}
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: ClassName, Annotations: map[string]string{volumeutil.AnnDefaultClass: def}},
		Provisioner:       ProvisionerName,
		VolumeBindingMode: &mode,
		ReclaimPolicy:     &policy,
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	switch {
	case strings.HasPrefix(key, claimPrefix):
		return c.syncClaim(ctx, strings.TrimPrefix(key, claimPrefix))
	case strings.HasPrefix(key, volumePrefix):
		return c.syncVolume(ctx, strings.TrimPrefix(key, volumePrefix))
	}
	return nil
}

// syncClaim provisions the claim of key "namespace/name" if it is ours.
func (c *Controller) syncClaim(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	claim, err := c.claims.Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil {
		return nil // bound, or going
	}
	class, err := c.classes.Get(volumeutil.ClaimClass(claim))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if class.Provisioner != ProvisionerName {
		return nil
	}
	node := claim.Annotations[volumeutil.AnnSelectedNode]
	wffc := class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
	if node == "" && wffc {
		return c.selectNodeFromPod(ctx, claim)
	}
	if claim.Annotations[volumeutil.AnnStorageProvisioner] != ProvisionerName && claim.Annotations[volumeutil.AnnBetaStorageProvisioner] != ProvisionerName {
		return nil // not handed over by the binder (yet)
	}
	pvName := "pvc-" + string(claim.UID)
	if _, err := c.volumes.Get(pvName); err == nil {
		return nil // provisioned already
	}
	if node == "" {
		c.failed(claim, class, "configuration error, no node was specified")
		return nil
	}
	if claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock {
		c.failed(claim, class, "Only support Filesystem volume mode")
		return nil
	}
	if claim.Spec.Selector != nil {
		c.failed(claim, class, "claim.Spec.Selector is not supported")
		return nil
	}
	c.cfg.Recorder.Event(claim, corev1.EventTypeNormal, EventProvisioning, fmt.Sprintf("External provisioner is provisioning volume for claim %q", key))
	path := filepath.Join(c.cfg.StorageDir, fmt.Sprintf("%s_%s_%s", pvName, claim.Namespace, claim.Name))
	if c.cfg.ManageDirectories {
		if err := os.MkdirAll(path, 0o777); err != nil {
			c.failed(claim, class, err.Error())
			return err
		}
		if err := os.Chmod(path, 0o777); err != nil { // whatever the umask, as Rancher's mkdir -m 0777
			c.failed(claim, class, err.Error())
			return err
		}
	}
	pv := c.newVolume(pvName, path, node, claim, class)
	if _, err := c.pvs.Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		c.failed(claim, class, err.Error())
		return err
	}
	c.cfg.Logger.Info("Volume provisioned", "claim", key, "volume", pvName, "node", node, "path", path)
	c.cfg.Recorder.Event(claim, corev1.EventTypeNormal, EventProvisioningSucceeded, fmt.Sprintf("Successfully provisioned volume %s", pvName))
	return nil
}

func (c *Controller) failed(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, msg string) {
	c.cfg.Recorder.Event(claim, corev1.EventTypeWarning, EventProvisioningFailed,
		fmt.Sprintf("failed to provision volume with StorageClass %q: %s", class.Name, msg))
}

// selectNodeFromPod stands in for the scheduler: a pod using the claim
// that already runs on (names) a node selects that node for the claim.
func (c *Controller) selectNodeFromPod(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	pods, err := volumeutil.PodsUsingClaim(c.pods, claim.Namespace, claim.Name)
	if err != nil {
		return err
	}
	node := ""
	for _, p := range pods {
		if p.Spec.NodeName != "" && !volumeutil.IsPodTerminated(p) && (node == "" || p.Spec.NodeName < node) {
			node = p.Spec.NodeName
		}
	}
	if node == "" {
		return nil // waits for a pod on a node
	}
	clone := claim.DeepCopy()
	metav1.SetMetaDataAnnotation(&clone.ObjectMeta, volumeutil.AnnSelectedNode, node)
	_, err = c.pvcs.Namespace(claim.Namespace).Update(ctx, clone, metav1.UpdateOptions{})
	return err
}

// newVolume is the hostPath volume of a claim on node.
func (c *Controller) newVolume(name, path, node string, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) *corev1.PersistentVolume {
	hostname := node
	if n, err := c.nodes.Get(node); err == nil && n.Labels[hostnameLabel] != "" {
		hostname = n.Labels[hostnameLabel]
	}
	policy := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		policy = *class.ReclaimPolicy
	}
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	fs := corev1.PersistentVolumeFilesystem
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{volumeutil.AnnDynamicallyProvisioned: ProvisionerName}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    &fs,
			StorageClassName:              class.Name,
			PersistentVolumeReclaimPolicy: policy,
			MountOptions:                  class.MountOptions,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace,
				Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &dirOrCreate}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{hostname}}},
			}}}},
		},
	}
}

// syncVolume deletes a Released volume of ours whose policy is Delete.
func (c *Controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pv.Annotations[volumeutil.AnnDynamicallyProvisioned] != ProvisionerName ||
		pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return nil
	}
	if c.cfg.ManageDirectories && pv.Spec.HostPath != nil {
		if err := c.removeDirectory(pv); err != nil {
			c.cfg.Recorder.Event(pv, corev1.EventTypeWarning, EventVolumeFailedDelete, err.Error())
			return err
		}
	}
	if err := c.pvs.Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}}); err != nil &&
		!apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	c.cfg.Logger.Info("Volume deleted", "volume", pv.Name)
	return nil
}

// removeDirectory removes the volume's directory: only a directory
// directly under StorageDir whose name starts with the volume's name.
func (c *Controller) removeDirectory(pv *corev1.PersistentVolume) error {
	path := filepath.Clean(pv.Spec.HostPath.Path)
	if filepath.Dir(path) != filepath.Clean(c.cfg.StorageDir) || !strings.HasPrefix(filepath.Base(path), pv.Name+"_") {
		return fmt.Errorf("refusing to remove %s: not a volume directory of %s under %s", path, pv.Name, c.cfg.StorageDir)
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}
