// Package config is skiff's KubeSchedulerConfiguration: the
// kubescheduler.config.k8s.io/v1 wire shape of upstream kube-scheduler's
// `--config` file (same JSON field names), the args types of the in-tree
// plugins, upstream's defaulting and validation, and the resolution of a
// profile into per-extension-point plugin lists. It is written from
// upstream's documented behaviour; it imports only apimachinery, k8s.io/api,
// sigs.k8s.io/yaml, sigs.k8s.io/json and the plugin names package.
//
// # Using it
//
//	cfg, err := config.Load(path) // decode + SetDefaults + Validate
//	cfg := config.Default()        // no --config given
//	for i := range cfg.Profiles {
//		prof := &cfg.Profiles[i]
//		x, err := prof.Expand(info) // per-extension-point lists, weights, args
//		args := prof.Args(names.NodeResourcesFit).(*config.NodeResourcesFitArgs)
//	}
//
// Plugin factories: in-tree ones type-assert their args
// (args.(*config.NodeResourcesFitArgs); DefaultArgs(name) when given nil,
// ValidatePluginArgs(nil, args) to check args built in code); out-of-tree
// ones call DecodeInto(args, &theirArgs) (strict JSON). Encode writes a
// configuration back as YAML (--write-config-to); DeepCopy copies it.
//
// Decode parses without defaulting (tests, tools); SetDefaults and
// Validate (or ValidateKubeSchedulerConfiguration for the field.ErrorList)
// are separate steps as upstream's.
//
// # One set of types
//
// Upstream has versioned (pointer) types and internal types. skiff keeps
// only the v1 wire types; after SetDefaults every pointer that upstream
// defaults is set, so consumers dereference without nil checks
// (*cfg.Parallelism, *cfg.PodInitialBackoffSeconds, *args.HardPodAffinityWeight,
// prof.Name()). PluginConfig.Args is a runtime.RawExtension as in v1: Raw is
// the JSON as written, Object the decoded args: *NodeResourcesFitArgs etc.
// for in-tree plugins that have args (a pointer to the object in the
// configuration; factories must not modify it), *runtime.Unknown (Raw
// JSON) for other names, so an out-of-tree plugin factory decodes its own
// args from it; nil when no args were given for an out-of-tree plugin.
//
// # Invariants
//
//   - Decoding is strict as upstream's: apiVersion must be
//     kubescheduler.config.k8s.io/v1 and kind KubeSchedulerConfiguration
//     (v1beta1..3 are refused with a message saying they were removed);
//     unknown or duplicate fields are reported all at once, by path
//     (`strict decoding error: unknown field "profiles[0].foo"`), also inside
//     the args of in-tree plugins. healthzBindAddress/metricsBindAddress are
//     not v1 fields: upstream 1.34 rejects them and so does skiff.
//   - SetDefaults is upstream v1's SetDefaults_KubeSchedulerConfiguration
//     for 1.34 feature-gate defaults (DynamicResources in the default set,
//     DRA filter timeout 10s, no VolumeBinding shape). It is idempotent.
//     Each profile's Plugins become MergePlugins(DefaultPlugins(), user's):
//     defaults stay in MultiPoint; a user's explicit extension-point list
//     stays at that point. Every enabled in-tree plugin with args gets a
//     pluginConfig entry with defaulted args (appended in name order).
//   - Validate expects a defaulted configuration and reports every error
//     with upstream's field path and message. Deviations from upstream:
//     NodeResourcesFit args are validated here (upstream only when building
//     the plugin, with no path) and a non-empty `extenders` is refused
//     (skiff does not run extenders). Score weights are not range-checked
//     (as upstream); Expand checks the overflow as upstream's runtime.
//
// # Who expands MultiPoint
//
// KubeSchedulerProfile.Expand resolves MultiPoint here, not in the
// framework runtime: given a PluginInfo that says which extension points
// each registered plugin implements (the runtime computes it from the
// plugin instances), it returns the ordered enabled plugins per extension
// point with Score weights, the plugins to instantiate and their args,
// with upstream's ordering (explicit overrides, then MultiPoint, then the
// other explicit plugins) and upstream's error messages. The runtime
// instantiates prof.Plugins.Names() (each with prof.Args(name)), answers
// PluginInfo from those instances (type assertions) and calls Expand.
package config
