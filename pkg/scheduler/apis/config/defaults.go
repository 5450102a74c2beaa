package config

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

func ptrTo[T any](v T) *T { return &v }

// DefaultPlugins returns upstream 1.34's default plugin set (all in
// MultiPoint, in upstream's order, with its Score weights; DynamicResources
// is in it because DynamicResourceAllocation is GA and on in 1.34). Each
// call returns a fresh value.
func DefaultPlugins() *Plugins {
	return &Plugins{
		MultiPoint: PluginSet{Enabled: []Plugin{
			{Name: names.SchedulingGates},
			{Name: names.PrioritySort},
			{Name: names.NodeUnschedulable},
			{Name: names.NodeName},
			{Name: names.TaintToleration, Weight: ptrTo[int32](3)},
			{Name: names.NodeAffinity, Weight: ptrTo[int32](2)},
			{Name: names.NodePorts},
			{Name: names.NodeResourcesFit, Weight: ptrTo[int32](1)},
			{Name: names.VolumeRestrictions},
			{Name: names.NodeVolumeLimits},
			{Name: names.VolumeBinding},
			{Name: names.VolumeZone},
			{Name: names.PodTopologySpread, Weight: ptrTo[int32](2)},
			{Name: names.InterPodAffinity, Weight: ptrTo[int32](2)},
			{Name: names.DynamicResources},
			{Name: names.DefaultPreemption},
			{Name: names.NodeResourcesBalancedAllocation, Weight: ptrTo[int32](1)},
			{Name: names.ImageLocality, Weight: ptrTo[int32](1)},
			{Name: names.DefaultBinder},
		}},
	}
}

// defaultResourceSpec is cpu:1, memory:1 (fresh slice each call).
func defaultResourceSpec() []ResourceSpec {
	return []ResourceSpec{
		{Name: string(corev1.ResourceCPU), Weight: 1},
		{Name: string(corev1.ResourceMemory), Weight: 1},
	}
}

// SetDefaults applies upstream v1's defaulting
// (SetDefaults_KubeSchedulerConfiguration) in place: parallelism 16, one
// profile "default-scheduler" when none is given, every profile's plugins
// merged with DefaultPlugins and a pluginConfig entry with defaulted args
// for every enabled in-tree plugin that has args, leader election and
// client connection defaults, back-off 1s/10s, percentageOfNodesToScore 0
// (adaptive), profiling on. Idempotent.
func SetDefaults(obj *KubeSchedulerConfiguration) {
	if obj.Parallelism == nil {
		obj.Parallelism = ptrTo[int32](16)
	}
	if len(obj.Profiles) == 0 {
		obj.Profiles = append(obj.Profiles, KubeSchedulerProfile{})
	}
	if len(obj.Profiles) == 1 && obj.Profiles[0].SchedulerName == nil {
		obj.Profiles[0].SchedulerName = ptrTo(corev1.DefaultSchedulerName)
	}
	for i := range obj.Profiles {
		setDefaultsProfile(&obj.Profiles[i])
	}
	if obj.PercentageOfNodesToScore == nil {
		obj.PercentageOfNodesToScore = ptrTo(DefaultPercentageOfNodesToScore)
	}

	le := &obj.LeaderElection
	if le.ResourceLock == "" {
		le.ResourceLock = "leases"
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = SchedulerDefaultLockObjectNamespace
	}
	if le.ResourceName == "" {
		le.ResourceName = SchedulerDefaultLockObjectName
	}
	if le.LeaseDuration.Duration == 0 {
		le.LeaseDuration = metav1.Duration{Duration: 15 * time.Second}
	}
	if le.RenewDeadline.Duration == 0 {
		le.RenewDeadline = metav1.Duration{Duration: 10 * time.Second}
	}
	if le.RetryPeriod.Duration == 0 {
		le.RetryPeriod = metav1.Duration{Duration: 2 * time.Second}
	}
	if le.LeaderElect == nil {
		le.LeaderElect = ptrTo(true)
	}

	cc := &obj.ClientConnection
	if cc.ContentType == "" {
		cc.ContentType = "application/vnd.kubernetes.protobuf"
	}
	if cc.QPS == 0 {
		cc.QPS = 50
	}
	if cc.Burst == 0 {
		cc.Burst = 100
	}

	if obj.PodInitialBackoffSeconds == nil {
		obj.PodInitialBackoffSeconds = ptrTo[int64](1)
	}
	if obj.PodMaxBackoffSeconds == nil {
		obj.PodMaxBackoffSeconds = ptrTo[int64](10)
	}
	if obj.EnableProfiling == nil {
		obj.EnableProfiling = ptrTo(true)
	}
	if *obj.EnableProfiling && obj.EnableContentionProfiling == nil {
		obj.EnableContentionProfiling = ptrTo(true)
	}
}

func setDefaultsProfile(prof *KubeSchedulerProfile) {
	prof.Plugins = MergePlugins(DefaultPlugins(), prof.Plugins)
	have := map[string]bool{}
	for j := range prof.PluginConfig {
		pc := &prof.PluginConfig[j]
		have[pc.Name] = true
		if pc.Args.Object == nil {
			// A typed plugin configured without args gets empty args, as
			// Decode does; others keep nil.
			if obj, ok := newArgs(pc.Name); ok {
				pc.Args.Object = obj
			}
		}
		SetDefaultsArgs(pc.Args.Object)
	}
	for _, name := range prof.Plugins.Names() {
		if have[name] {
			continue
		}
		obj, ok := newArgs(name)
		if !ok {
			continue
		}
		SetDefaultsArgs(obj)
		prof.PluginConfig = append(prof.PluginConfig, PluginConfig{Name: name, Args: runtime.RawExtension{Object: obj}})
	}
}

// Names returns the sorted, de-duplicated names of the plugins enabled at
// any extension point (MultiPoint included).
func (p *Plugins) Names() []string {
	if p == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range p.sets() {
		for _, pl := range s.set.Enabled {
			if !seen[pl.Name] {
				seen[pl.Name] = true
				out = append(out, pl.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

type namedSet struct {
	name string // JSON name of the field
	set  *PluginSet
}

// sets lists every PluginSet with its JSON field name, MultiPoint first.
func (p *Plugins) sets() []namedSet {
	return []namedSet{
		{"multiPoint", &p.MultiPoint},
		{"preEnqueue", &p.PreEnqueue},
		{"queueSort", &p.QueueSort},
		{"preFilter", &p.PreFilter},
		{"filter", &p.Filter},
		{"postFilter", &p.PostFilter},
		{"preScore", &p.PreScore},
		{"score", &p.Score},
		{"reserve", &p.Reserve},
		{"permit", &p.Permit},
		{"preBind", &p.PreBind},
		{"bind", &p.Bind},
		{"postBind", &p.PostBind},
	}
}

// MergePlugins merges a user's plugins into defaults as upstream's
// mergePlugins does, per extension point: the defaults' enabled plugins in
// their order minus the disabled ones (all of them when "*" is disabled),
// a default re-enabled by the user replaced in place by the user's entry
// (e.g. a new weight), then the user's other enabled plugins in the user's
// order. Disabled lists are kept (user's first). custom nil returns
// defaults. defaults is modified and returned.
func MergePlugins(defaults, custom *Plugins) *Plugins {
	if custom == nil {
		return defaults
	}
	ds, cs := defaults.sets(), custom.sets()
	for i := range ds {
		*ds[i].set = mergePluginSet(*ds[i].set, *cs[i].set)
	}
	return defaults
}

func mergePluginSet(def, custom PluginSet) PluginSet {
	disabledNames := map[string]bool{}
	var disabled []Plugin
	for _, p := range custom.Disabled {
		disabled = append(disabled, Plugin{Name: p.Name})
		disabledNames[p.Name] = true
	}
	for _, p := range def.Disabled {
		disabled = append(disabled, Plugin{Name: p.Name})
		disabledNames[p.Name] = true
	}
	customIndex := map[string]int{}
	for i, p := range custom.Enabled {
		customIndex[p.Name] = i
	}
	replaced := map[int]bool{}
	var enabled []Plugin
	if !disabledNames["*"] {
		for _, p := range def.Enabled {
			if disabledNames[p.Name] {
				continue
			}
			if i, ok := customIndex[p.Name]; ok {
				p = custom.Enabled[i]
				replaced[i] = true
			}
			enabled = append(enabled, p)
		}
	}
	for i, p := range custom.Enabled {
		if !replaced[i] {
			enabled = append(enabled, p)
		}
	}
	return PluginSet{Enabled: enabled, Disabled: disabled}
}

// SetDefaultsArgs defaults typed plugin args in place as upstream v1 does;
// other objects (nil, *runtime.Unknown) are left alone.
func SetDefaultsArgs(obj runtime.Object) {
	switch a := obj.(type) {
	case *DefaultPreemptionArgs:
		if a.MinCandidateNodesPercentage == nil {
			a.MinCandidateNodesPercentage = ptrTo[int32](10)
		}
		if a.MinCandidateNodesAbsolute == nil {
			a.MinCandidateNodesAbsolute = ptrTo[int32](100)
		}
	case *InterPodAffinityArgs:
		if a.HardPodAffinityWeight == nil {
			a.HardPodAffinityWeight = ptrTo[int32](1)
		}
	case *VolumeBindingArgs:
		if a.BindTimeoutSeconds == nil {
			a.BindTimeoutSeconds = ptrTo[int64](600)
		}
		// Shape is only defaulted with the StorageCapacityScoring feature
		// (alpha, off in 1.34).
	case *NodeResourcesBalancedAllocationArgs:
		if len(a.Resources) == 0 {
			a.Resources = defaultResourceSpec()
			break
		}
		for i := range a.Resources {
			if a.Resources[i].Weight == 0 {
				a.Resources[i].Weight = 1
			}
		}
	case *PodTopologySpreadArgs:
		if a.DefaultingType == "" {
			a.DefaultingType = SystemDefaulting
		}
	case *NodeResourcesFitArgs:
		if a.ScoringStrategy == nil {
			a.ScoringStrategy = &ScoringStrategy{Type: LeastAllocated, Resources: defaultResourceSpec()}
		}
		if len(a.ScoringStrategy.Resources) == 0 {
			a.ScoringStrategy.Resources = defaultResourceSpec()
		}
		for i := range a.ScoringStrategy.Resources {
			if a.ScoringStrategy.Resources[i].Weight == 0 {
				a.ScoringStrategy.Resources[i].Weight = 1
			}
		}
	case *DynamicResourcesArgs:
		// DRASchedulerFilterTimeout is beta and on in 1.34.
		if a.FilterTimeout == nil {
			a.FilterTimeout = &metav1.Duration{Duration: DynamicResourcesFilterTimeoutDefault}
		}
	}
}

// DefaultArgs returns fresh defaulted args for an in-tree plugin that has
// args (what SetDefaults puts in pluginConfig), nil for other names. A
// factory given nil args (a profile built in code) can start from it.
func DefaultArgs(plugin string) runtime.Object {
	obj, ok := newArgs(plugin)
	if !ok {
		return nil
	}
	SetDefaultsArgs(obj)
	return obj
}
