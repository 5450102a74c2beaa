package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName and Version of the configuration API; only v1 is served
// (upstream removed v1beta1..v1beta3).
const (
	GroupName = "kubescheduler.config.k8s.io"
	Version   = "v1"
	// Kind of the top-level object.
	Kind = "KubeSchedulerConfiguration"
)

// SchemeGroupVersion is kubescheduler.config.k8s.io/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

// Upstream's defaults and limits.
const (
	// DefaultSchedulerName is the name of the profile created when none is given.
	DefaultSchedulerName = "default-scheduler"
	// SchedulerDefaultLockObjectNamespace / Name: the leader election lease.
	SchedulerDefaultLockObjectNamespace = metav1.NamespaceSystem
	SchedulerDefaultLockObjectName      = "kube-scheduler"
	// DefaultPercentageOfNodesToScore is 0: adaptive (the scheduler picks
	// the share from the cluster size).
	DefaultPercentageOfNodesToScore int32 = 0
	// MaxCustomPriorityScore is the largest score of a UtilizationShapePoint.
	MaxCustomPriorityScore int64 = 10
	// MaxNodeScore is the largest score a Score plugin returns for a node
	// (after NormalizeScore); MaxTotalScore bounds the sum of weighted scores.
	MaxNodeScore  int64 = 100
	MaxTotalScore int64 = 1<<63 - 1
)

// KubeSchedulerConfiguration is the `--config` file of the scheduler, in
// the kubescheduler.config.k8s.io/v1 wire shape. After SetDefaults every
// pointer field is set.
type KubeSchedulerConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// Parallelism is the number of goroutines filtering and scoring nodes
	// (default 16).
	Parallelism *int32 `json:"parallelism,omitempty"`
	// LeaderElection configures leader election of the scheduler.
	LeaderElection LeaderElectionConfiguration `json:"leaderElection"`
	// ClientConnection configures the connection to the API server.
	ClientConnection ClientConnectionConfiguration `json:"clientConnection"`
	// DebuggingConfiguration (enableProfiling, enableContentionProfiling)
	// is inline as upstream.
	DebuggingConfiguration `json:",inline"`

	// PercentageOfNodesToScore: once this share of the nodes has been found
	// feasible the scheduler stops looking. 0 (the default) is adaptive.
	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
	// PodInitialBackoffSeconds is the initial back-off of unschedulable
	// pods (default 1).
	PodInitialBackoffSeconds *int64 `json:"podInitialBackoffSeconds,omitempty"`
	// PodMaxBackoffSeconds is the maximum back-off (default 10).
	PodMaxBackoffSeconds *int64 `json:"podMaxBackoffSeconds,omitempty"`

	// Profiles are the scheduling profiles, one per schedulerName.
	Profiles []KubeSchedulerProfile `json:"profiles,omitempty"`
	// Extenders are parsed as upstream's, but skiff does not call scheduler
	// extenders: Validate rejects a non-empty list.
	Extenders []Extender `json:"extenders,omitempty"`
	// DelayCacheUntilActive: do not fill the informer caches before this
	// instance becomes leader.
	DelayCacheUntilActive bool `json:"delayCacheUntilActive,omitempty"`
}

// LeaderElectionConfiguration is component-base's v1alpha1 shape.
type LeaderElectionConfiguration struct {
	LeaderElect       *bool           `json:"leaderElect"`
	LeaseDuration     metav1.Duration `json:"leaseDuration"`
	RenewDeadline     metav1.Duration `json:"renewDeadline"`
	RetryPeriod       metav1.Duration `json:"retryPeriod"`
	ResourceLock      string          `json:"resourceLock"`
	ResourceName      string          `json:"resourceName"`
	ResourceNamespace string          `json:"resourceNamespace"`
}

// ClientConnectionConfiguration is component-base's v1alpha1 shape.
type ClientConnectionConfiguration struct {
	Kubeconfig         string  `json:"kubeconfig"`
	AcceptContentTypes string  `json:"acceptContentTypes"`
	ContentType        string  `json:"contentType"`
	QPS                float32 `json:"qps"`
	Burst              int32   `json:"burst"`
}

// DebuggingConfiguration is component-base's v1alpha1 shape.
type DebuggingConfiguration struct {
	EnableProfiling           *bool `json:"enableProfiling,omitempty"`
	EnableContentionProfiling *bool `json:"enableContentionProfiling,omitempty"`
}

// KubeSchedulerProfile is one scheduling profile.
type KubeSchedulerProfile struct {
	// SchedulerName selects the pods of this profile (pod.spec.schedulerName).
	SchedulerName *string `json:"schedulerName,omitempty"`
	// PercentageOfNodesToScore overrides the global value for this profile.
	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
	// Plugins: after SetDefaults, the user's sets merged with the default
	// plugins (MultiPoint holds the defaults).
	Plugins *Plugins `json:"plugins,omitempty"`
	// PluginConfig: args per plugin. After decoding, Args.Object is the
	// typed args (*NodeResourcesFitArgs, ...) for in-tree plugins and a
	// *runtime.Unknown holding the raw JSON for other plugins. After
	// SetDefaults every enabled in-tree plugin that has args has an entry.
	PluginConfig []PluginConfig `json:"pluginConfig,omitempty"`
}

// Name returns the scheduler name ("" when unset).
func (p *KubeSchedulerProfile) Name() string {
	if p.SchedulerName == nil {
		return ""
	}
	return *p.SchedulerName
}

// Args returns the args configured for plugin name (nil if none): typed
// args for in-tree plugins, *runtime.Unknown with raw JSON otherwise.
func (p *KubeSchedulerProfile) Args(name string) runtime.Object {
	for i := range p.PluginConfig {
		if p.PluginConfig[i].Name == name {
			return p.PluginConfig[i].Args.Object
		}
	}
	return nil
}

// Plugins holds one PluginSet per extension point, plus MultiPoint which
// enables a plugin at every extension point it implements.
type Plugins struct {
	PreEnqueue PluginSet `json:"preEnqueue,omitempty"`
	QueueSort  PluginSet `json:"queueSort,omitempty"`
	PreFilter  PluginSet `json:"preFilter,omitempty"`
	Filter     PluginSet `json:"filter,omitempty"`
	PostFilter PluginSet `json:"postFilter,omitempty"`
	PreScore   PluginSet `json:"preScore,omitempty"`
	Score      PluginSet `json:"score,omitempty"`
	Reserve    PluginSet `json:"reserve,omitempty"`
	Permit     PluginSet `json:"permit,omitempty"`
	PreBind    PluginSet `json:"preBind,omitempty"`
	Bind       PluginSet `json:"bind,omitempty"`
	PostBind   PluginSet `json:"postBind,omitempty"`
	MultiPoint PluginSet `json:"multiPoint,omitempty"`
}

// PluginSet lists the plugins enabled and disabled at one extension point.
// Disabled "*" disables every default plugin of that point.
type PluginSet struct {
	Enabled  []Plugin `json:"enabled,omitempty"`
	Disabled []Plugin `json:"disabled,omitempty"`
}

// Plugin names a plugin; Weight only matters for Score plugins (nil or 0
// means 1).
type Plugin struct {
	Name   string `json:"name"`
	Weight *int32 `json:"weight,omitempty"`
}

// PluginConfig holds the args of one plugin. Args.Raw is the JSON as
// written; Args.Object is the decoded args (see KubeSchedulerProfile).
type PluginConfig struct {
	Name string               `json:"name"`
	Args runtime.RawExtension `json:"args,omitempty"`
}

// Extender is upstream's scheduler extender configuration. skiff parses
// it so that upstream files decode, and refuses to start with extenders.
type Extender struct {
	URLPrefix        string                    `json:"urlPrefix"`
	FilterVerb       string                    `json:"filterVerb,omitempty"`
	PreemptVerb      string                    `json:"preemptVerb,omitempty"`
	PrioritizeVerb   string                    `json:"prioritizeVerb,omitempty"`
	Weight           int64                     `json:"weight,omitempty"`
	BindVerb         string                    `json:"bindVerb,omitempty"`
	EnableHTTPS      bool                      `json:"enableHTTPS,omitempty"`
	TLSConfig        *ExtenderTLSConfig        `json:"tlsConfig,omitempty"`
	HTTPTimeout      metav1.Duration           `json:"httpTimeout,omitempty"`
	NodeCacheCapable bool                      `json:"nodeCacheCapable,omitempty"`
	ManagedResources []ExtenderManagedResource `json:"managedResources,omitempty"`
	Ignorable        bool                      `json:"ignorable,omitempty"`
}

// ExtenderManagedResource is upstream's shape.
type ExtenderManagedResource struct {
	Name               string `json:"name"`
	IgnoredByScheduler bool   `json:"ignoredByScheduler,omitempty"`
}

// ExtenderTLSConfig is upstream's shape.
type ExtenderTLSConfig struct {
	Insecure   bool   `json:"insecure,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	CertFile   string `json:"certFile,omitempty"`
	KeyFile    string `json:"keyFile,omitempty"`
	CAFile     string `json:"caFile,omitempty"`
	CertData   []byte `json:"certData,omitempty"`
	KeyData    []byte `json:"keyData,omitempty"`
	CAData     []byte `json:"caData,omitempty"`
}
