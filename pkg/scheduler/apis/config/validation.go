package config

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks a defaulted configuration with upstream's rules and
// returns nil or one error listing every problem with its field path
// ("profiles[0].pluginConfig[1].args.hardPodAffinityWeight: Invalid value:
// 300: not in valid range [0, 100]").
func Validate(cc *KubeSchedulerConfiguration) error {
	return ValidateKubeSchedulerConfiguration(cc).ToAggregate()
}

// ValidateKubeSchedulerConfiguration is upstream's validation of a
// defaulted configuration, in upstream's order, plus skiff's refusal of
// extenders (which skiff does not run) and the validation of
// NodeResourcesFit args, which upstream only runs when building the plugin.
func ValidateKubeSchedulerConfiguration(cc *KubeSchedulerConfiguration) field.ErrorList {
	var errs field.ErrorList

	if cc.ClientConnection.Burst < 0 {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "burst"), cc.ClientConnection.Burst, "must be non-negative"))
	}
	errs = append(errs, validateLeaderElection(&cc.LeaderElection, field.NewPath("leaderElection"))...)

	if deref(cc.Parallelism) <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("parallelism"), deref(cc.Parallelism), "should be an integer value greater than zero"))
	}

	profilesPath := field.NewPath("profiles")
	if len(cc.Profiles) == 0 {
		errs = append(errs, field.Required(profilesPath, ""))
	} else {
		seen := make(map[string]bool, len(cc.Profiles))
		for i := range cc.Profiles {
			prof := &cc.Profiles[i]
			path := profilesPath.Index(i)
			errs = append(errs, validateProfile(path, prof)...)
			if seen[prof.Name()] {
				errs = append(errs, field.Duplicate(path.Child("schedulerName"), prof.Name()))
			}
			seen[prof.Name()] = true
		}
		errs = append(errs, validateCommonQueueSort(profilesPath, cc.Profiles)...)
	}

	errs = append(errs, validatePercentage(field.NewPath("percentageOfNodesToScore"), cc.PercentageOfNodesToScore)...)
	initial, maxBackoff := deref(cc.PodInitialBackoffSeconds), deref(cc.PodMaxBackoffSeconds)
	if initial <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("podInitialBackoffSeconds"), initial, "must be greater than 0"))
	}
	if maxBackoff < initial {
		errs = append(errs, field.Invalid(field.NewPath("podMaxBackoffSeconds"), maxBackoff, "must be greater than or equal to PodInitialBackoffSeconds"))
	}
	if len(cc.Extenders) > 0 {
		errs = append(errs, field.Forbidden(field.NewPath("extenders"), "scheduler extenders are not supported by skiff; use an out-of-tree plugin instead"))
	}
	return errs
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func validateLeaderElection(le *LeaderElectionConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !deref(le.LeaderElect) {
		return nil
	}
	if le.LeaseDuration.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("leaseDuration"), le.LeaseDuration, "must be greater than zero"))
	}
	if le.RenewDeadline.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("renewDeadline"), le.RenewDeadline, "must be greater than zero"))
	}
	if le.RetryPeriod.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("retryPeriod"), le.RetryPeriod, "must be greater than zero"))
	}
	if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
		// upstream reports the renew deadline as the value
		errs = append(errs, field.Invalid(path.Child("leaseDuration"), le.RenewDeadline, "must be greater than `RenewDeadline`"))
	}
	if le.ResourceLock == "" {
		errs = append(errs, field.Required(path.Child("resourceLock"), ""))
	}
	if le.ResourceNamespace == "" {
		errs = append(errs, field.Required(path.Child("resourceNamespace"), ""))
	}
	if le.ResourceName == "" {
		errs = append(errs, field.Required(path.Child("resourceName"), ""))
	}
	if le.ResourceLock != "" && le.ResourceLock != "leases" {
		errs = append(errs, field.Invalid(path.Child("resourceLock"), le.ResourceLock, `resourceLock value must be "leases"`))
	}
	return errs
}

func validatePercentage(path *field.Path, p *int32) field.ErrorList {
	if p != nil && (*p < 0 || *p > 100) {
		return field.ErrorList{field.Invalid(path, *p, "not in valid range [0-100]")}
	}
	return nil
}

// invalidPlugins were removed before v1 (upstream rejects them by name).
var invalidPlugins = map[string]bool{"AzureDiskLimits": true, "CinderLimits": true, "EBSLimits": true, "GCEPDLimits": true}

func invalidPluginMessage() string {
	v := SchemeGroupVersion.String()
	return fmt.Sprintf("was invalid in version %q (KubeSchedulerConfiguration is version %q)", v, v)
}

func validateProfile(path *field.Path, prof *KubeSchedulerProfile) field.ErrorList {
	var errs field.ErrorList
	if prof.Name() == "" {
		errs = append(errs, field.Required(path.Child("schedulerName"), ""))
	}
	errs = append(errs, validatePercentage(path.Child("percentageOfNodesToScore"), prof.PercentageOfNodesToScore)...)
	if prof.Plugins != nil {
		for _, s := range prof.Plugins.sets() {
			if s.name == "multiPoint" {
				continue // upstream does not check MultiPoint here
			}
			for i, p := range s.set.Enabled {
				if invalidPlugins[p.Name] {
					errs = append(errs, field.Invalid(path.Child("plugins", s.name, "enabled").Index(i), p.Name, invalidPluginMessage()))
				}
			}
		}
	}
	seen := map[string]bool{}
	for i := range prof.PluginConfig {
		pcPath := path.Child("pluginConfig").Index(i)
		pc := &prof.PluginConfig[i]
		if seen[pc.Name] {
			errs = append(errs, field.Duplicate(pcPath, pc.Name))
		}
		seen[pc.Name] = true
		if invalidPlugins[pc.Name] {
			errs = append(errs, field.Invalid(pcPath, pc.Name, invalidPluginMessage()))
			continue
		}
		if !HasArgs(pc.Name) {
			continue
		}
		want, _ := newArgs(pc.Name)
		if pc.Args.Object == nil || fmt.Sprintf("%T", pc.Args.Object) != fmt.Sprintf("%T", want) {
			errs = append(errs, field.Invalid(pcPath.Child("args"), pc.Args.Object, "has to match plugin args"))
			continue
		}
		errs = append(errs, ValidatePluginArgs(pcPath.Child("args"), pc.Args.Object)...)
	}
	return errs
}

// ValidatePluginArgs validates defaulted typed args of an in-tree plugin
// under path (a plugin factory may call it with field.NewPath("args") or
// nil); other objects pass.
func ValidatePluginArgs(path *field.Path, obj runtime.Object) field.ErrorList {
	switch a := obj.(type) {
	case *DefaultPreemptionArgs:
		return ValidateDefaultPreemptionArgs(path, a)
	case *InterPodAffinityArgs:
		return ValidateInterPodAffinityArgs(path, a)
	case *NodeAffinityArgs:
		return ValidateNodeAffinityArgs(path, a)
	case *NodeResourcesBalancedAllocationArgs:
		return ValidateNodeResourcesBalancedAllocationArgs(path, a)
	case *NodeResourcesFitArgs:
		return ValidateNodeResourcesFitArgs(path, a)
	case *PodTopologySpreadArgs:
		return ValidatePodTopologySpreadArgs(path, a)
	case *VolumeBindingArgs:
		return ValidateVolumeBindingArgs(path, a)
	case *DynamicResourcesArgs:
		return ValidateDynamicResourcesArgs(path, a)
	}
	return nil
}

// validateCommonQueueSort: all profiles use the same queueSort set and the
// same args for it (upstream's rule; it compares the queueSort sets, not
// MultiPoint).
func validateCommonQueueSort(path *field.Path, profiles []KubeSchedulerProfile) field.ErrorList {
	var errs field.ErrorList
	var canon PluginSet
	var queueSortName string
	var queueSortArgs runtime.Object
	if profiles[0].Plugins != nil {
		canon = profiles[0].Plugins.QueueSort
		if n := len(canon.Enabled); n != 0 {
			queueSortName = canon.Enabled[0].Name
			if n > 1 {
				errs = append(errs, field.Invalid(path.Index(0).Child("plugins", "queueSort", "Enabled"), n, "only one queue sort plugin can be enabled"))
			}
		}
	}
	for _, pc := range profiles[0].PluginConfig {
		if queueSortName != "" && pc.Name == queueSortName {
			queueSortArgs = pc.Args.Object
		}
	}
	for i := 1; i < len(profiles); i++ {
		var curr PluginSet
		if profiles[i].Plugins != nil {
			curr = profiles[i].Plugins.QueueSort
		}
		if !equality.Semantic.DeepEqual(canon, curr) {
			errs = append(errs, field.Invalid(path.Index(i).Child("plugins", "queueSort"), curr, "must be the same for all profiles"))
		}
		for _, pc := range profiles[i].PluginConfig {
			if pc.Name == queueSortName && !equality.Semantic.DeepEqual(queueSortArgs, pc.Args.Object) {
				errs = append(errs, field.Invalid(path.Index(i).Child("pluginConfig", "args"), pc.Args.Object, "queueSort must be the same for all profiles"))
			}
		}
	}
	return errs
}

// fieldErrors turns an error from apimachinery helpers (an aggregate of
// *field.Error, usually) into a field.ErrorList.
func fieldErrors(path *field.Path, value any, err error) field.ErrorList {
	if err == nil {
		return nil
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		var out field.ErrorList
		for _, e := range agg.Errors() {
			out = append(out, fieldErrors(path, value, e)...)
		}
		return out
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return field.ErrorList{fe}
	}
	return field.ErrorList{field.Invalid(path, value, err.Error())}
}
