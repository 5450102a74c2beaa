package controllermanager

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/client/workqueue"
	"github.com/skiff-sh/skiff/pkg/clock"
)

// Controller is a started controller: Run works until ctx ends (it waits
// for its informers' caches first) and then returns nil.
type Controller interface {
	Run(ctx context.Context) error
}

// InitFunc builds a controller. It registers the informers (and their
// handlers) the controller needs on cc.Informers; it must not start
// them, nor block.
type InitFunc func(cc ControllerContext) (Controller, error)

// ControllerContext is what an InitFunc gets: the manager's shared pieces
// and this controller's settings.
type ControllerContext struct {
	// Name is the controller's canonical name ("replicaset-controller").
	Name string
	// Client is the controller's own API client (its own --kube-api-qps
	// token bucket, as upstream's client builder gives each controller;
	// User-Agent "<manager's>/<upstream's client name>", with service
	// account credentials ".../system:serviceaccount:kube-system:<name>";
	// identities.go); ClientConfig its configuration.
	// Informers share the manager's client.
	Client       *client.Client
	ClientConfig client.Config
	// Informers is the manager's one shared informer factory.
	Informers *informers.SharedInformerFactory
	// Recorder records events with source component Name; Broadcaster
	// makes recorders for other components.
	Recorder    record.EventRecorder
	Broadcaster record.EventBroadcaster
	// MetricsProvider is to be passed, with Name (or the controller's
	// upstream queue name), to the controller's workqueues.
	MetricsProvider workqueue.MetricsProvider
	// Registry takes a controller's own metrics (upstream's
	// job_controller_*, ...), served on /metrics.
	Registry prometheus.Registerer
	// Workers is the controller's --concurrent-*-syncs value.
	Workers int
	Clock   clock.Clock
	// Logger carries controller=Name.
	Logger *slog.Logger
	// Config is the manager's configuration (controller-specific knobs
	// such as RootCAFile); read only.
	Config *Config
}

// Descriptor describes one controller of the table.
type Descriptor struct {
	// Name is upstream's canonical name; Aliases its older names, which
	// --controllers accepts too.
	Name    string
	Aliases []string
	// Init builds the controller; nil: skiff does not implement it yet
	// (it is accepted by --controllers and skipped).
	Init InitFunc
	// DisabledByDefault controllers only run when --controllers names them.
	DisabledByDefault bool
	// WorkersFlag is upstream's worker-count flag without "--"
	// ("concurrent-replicaset-syncs"); "" when upstream has none.
	// DefaultWorkers is upstream's default (1 when 0).
	WorkersFlag    string
	DefaultWorkers int
}

// Controllers is the table of upstream's kube-controller-manager
// controllers, in upstream's start order. Controllers skiff implements
// have an Init; register one by setting Init on its entry.
func Controllers() []Descriptor {
	return []Descriptor{
		{Name: "serviceaccount-token-controller", Aliases: []string{"serviceaccount-token"}, WorkersFlag: "concurrent-serviceaccount-token-syncs", DefaultWorkers: 5},
		{Name: "endpoints-controller", Aliases: []string{"endpoint"}, WorkersFlag: "concurrent-endpoint-syncs", DefaultWorkers: 5, Init: startEndpointsController},
		{Name: "endpointslice-controller", Aliases: []string{"endpointslice"}, WorkersFlag: "concurrent-service-endpoint-syncs", DefaultWorkers: 5, Init: startEndpointSliceController},
		{Name: "endpointslice-mirroring-controller", Aliases: []string{"endpointslicemirroring"}, WorkersFlag: "mirroring-concurrent-service-endpoint-syncs", DefaultWorkers: 5, Init: startEndpointSliceMirroringController},
		{Name: "replicationcontroller-controller", Aliases: []string{"replicationcontroller"}, WorkersFlag: "concurrent-rc-syncs", DefaultWorkers: 5, Init: startReplicationController},
		{Name: "pod-garbage-collector-controller", Aliases: []string{"podgc"}, Init: startPodGC},
		{Name: "resourcequota-controller", Aliases: []string{"resourcequota"}, WorkersFlag: "concurrent-resource-quota-syncs", DefaultWorkers: 5, Init: startResourceQuotaController},
		{Name: "namespace-controller", Aliases: []string{"namespace"}, WorkersFlag: "concurrent-namespace-syncs", DefaultWorkers: 10, Init: startNamespaceController},
		{Name: "serviceaccount-controller", Aliases: []string{"serviceaccount"}, Init: startServiceAccountController},
		{Name: "garbage-collector-controller", Aliases: []string{"garbagecollector"}, WorkersFlag: "concurrent-gc-syncs", DefaultWorkers: 20, Init: startGarbageCollector},
		{Name: "daemonset-controller", Aliases: []string{"daemonset"}, WorkersFlag: "concurrent-daemonset-syncs", DefaultWorkers: 2, Init: startDaemonSetController},
		{Name: "job-controller", Aliases: []string{"job"}, WorkersFlag: "concurrent-job-syncs", DefaultWorkers: 5, Init: startJobController},
		{Name: "deployment-controller", Aliases: []string{"deployment"}, WorkersFlag: "concurrent-deployment-syncs", DefaultWorkers: 5, Init: startDeploymentController},
		{Name: "replicaset-controller", Aliases: []string{"replicaset"}, WorkersFlag: "concurrent-replicaset-syncs", DefaultWorkers: 5, Init: startReplicaSetController},
		{Name: "horizontal-pod-autoscaler-controller", Aliases: []string{"horizontalpodautoscaling"}, WorkersFlag: "concurrent-horizontal-pod-autoscaler-syncs", DefaultWorkers: 5, Init: startHPAController},
		{Name: "disruption-controller", Aliases: []string{"disruption"}, Init: startDisruptionController},
		{Name: "statefulset-controller", Aliases: []string{"statefulset"}, WorkersFlag: "concurrent-statefulset-syncs", DefaultWorkers: 5, Init: startStatefulSetController},
		{Name: "cronjob-controller", Aliases: []string{"cronjob"}, WorkersFlag: "concurrent-cron-job-syncs", DefaultWorkers: 5, Init: startCronJobController},
		{Name: "certificatesigningrequest-signing-controller", Aliases: []string{"csrsigning"}, Init: startCSRSigningController},
		{Name: "certificatesigningrequest-approving-controller", Aliases: []string{"csrapproving"}, Init: startCSRApprovingController},
		{Name: "certificatesigningrequest-cleaner-controller", Aliases: []string{"csrcleaner"}, Init: startCSRCleanerController},
		{Name: "ttl-controller", Aliases: []string{"ttl"}},
		{Name: "bootstrap-signer-controller", Aliases: []string{"bootstrapsigner"}, DisabledByDefault: true},
		{Name: "token-cleaner-controller", Aliases: []string{"tokencleaner"}, DisabledByDefault: true},
		{Name: "node-ipam-controller", Aliases: []string{"nodeipam"}, Init: startNodeIpamController},
		{Name: "node-lifecycle-controller", Aliases: []string{"nodelifecycle"}, Init: startNodeLifecycleController},
		{Name: "taint-eviction-controller", Init: startTaintEvictionController},
		{Name: "persistentvolume-binder-controller", Aliases: []string{"persistentvolume-binder"}, Init: startPersistentVolumeBinder},
		{Name: "persistentvolume-attach-detach-controller", Aliases: []string{"attachdetach"}},
		{Name: "persistentvolume-expander-controller", Aliases: []string{"persistentvolume-expander"}},
		{Name: "clusterrole-aggregation-controller", Aliases: []string{"clusterrole-aggregation"}, Init: startClusterRoleAggregationController},
		{Name: "persistentvolumeclaim-protection-controller", Aliases: []string{"pvc-protection"}, Init: startPVCProtectionController},
		{Name: "persistentvolume-protection-controller", Aliases: []string{"pv-protection"}, Init: startPVProtectionController},
		{Name: "ttl-after-finished-controller", Aliases: []string{"ttl-after-finished"}, WorkersFlag: "concurrent-ttl-after-finished-syncs", DefaultWorkers: 5, Init: startTTLAfterFinishedController},
		{Name: "root-ca-certificate-publisher-controller", Aliases: []string{"root-ca-cert-publisher"}, Init: startRootCACertPublisher},
		{Name: "ephemeral-volume-controller", Aliases: []string{"ephemeral-volume"}, WorkersFlag: "concurrent-ephemeralvolume-syncs", DefaultWorkers: 5, Init: startEphemeralVolumeController},
		{Name: "storageversion-garbage-collector-controller", Aliases: []string{"storage-version-gc"}},
		{Name: "resourceclaim-controller", Aliases: []string{"resource-claim-controller"}},
		{Name: "legacy-serviceaccount-token-cleaner-controller", Aliases: []string{"legacy-service-account-token-cleaner"}},
		{Name: "validatingadmissionpolicy-status-controller", WorkersFlag: "concurrent-validating-admission-policy-status-syncs", DefaultWorkers: 5},
		{Name: "service-cidr-controller"},
		{Name: "selinux-warning-controller", DisabledByDefault: true},
		// skiff's own, not upstream's: the provisioner of the default
		// local-path StorageClass (k3s ships Rancher's).
		{Name: "skiff-local-path-provisioner", Init: startLocalPathProvisioner},
	}
}
