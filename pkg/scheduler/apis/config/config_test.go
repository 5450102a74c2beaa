package config

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error
	}{
		{"v1beta3 removed", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
			[]string{`no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3"`, "removed upstream", "kubescheduler.config.k8s.io/v1"}},
		{"wrong kind", "apiVersion: v1\nkind: Pod\n", []string{`no kind "Pod" is registered for version "v1"`}},
		{"missing type meta", "parallelism: 3\n", []string{"apiVersion and kind must be set"}},
		{"unknown fields at every level", header + "foo: 1\nhealthzBindAddress: 0.0.0.0:10251\nprofiles:\n- schedulerName: x\n  bar: 2\n  plugins:\n    score:\n      enabled: [{name: A, wieght: 2}]\n",
			[]string{"strict decoding error", `unknown field "foo"`, `unknown field "healthzBindAddress"`, `unknown field "profiles[0].bar"`, `unknown field "profiles[0].plugins.score.enabled[0].wieght"`}},
		{"unknown field in typed args", header + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 2}\n  - name: NodeResourcesFit\n    args:\n      baz: 1\n",
			[]string{`decoding .profiles[0].pluginConfig[1]: strict decoding error: decoding args for plugin NodeResourcesFit: strict decoding error: unknown field "baz"`}},
		{"field names are case sensitive", header + "Parallelism: 3\n", []string{`unknown field "Parallelism"`}},
		{"duplicate key", header + "parallelism: 3\nparallelism: 4\n", []string{"strict decoding error", "parallelism"}},
		{"wrong type", header + "parallelism: many\n", []string{"parallelism"}},
		{"args of another kind", header + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {kind: InterPodAffinityArgs}\n",
			[]string{"decoding .profiles[0].pluginConfig[0]: args for plugin NodeResourcesFit were not of type NodeResourcesFitArgs.kubescheduler.config.k8s.io, got InterPodAffinityArgs"}},
		{"bad yaml", header + "profiles: [\n", []string{"parsing YAML"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Decode([]byte(tc.in))
			if err == nil {
				t.Fatalf("Decode succeeded: %+v", cfg)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDecodeTypedAndUnknownArgs(t *testing.T) {
	in := header + `
parallelism: 8
percentageOfNodesToScore: 50
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: /etc/k.conf
  qps: 20
profiles:
- schedulerName: my-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: MyPlugin
        weight: 4
  pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 3
        - name: nvidia.com/gpu
  - name: MyPlugin
    args:
      answer: 42
      nested: {a: [1, 2]}
  - name: OtherPlugin
`
	cfg, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if *cfg.Parallelism != 8 || *cfg.PercentageOfNodesToScore != 50 || *cfg.LeaderElection.LeaderElect || cfg.ClientConnection.Kubeconfig != "/etc/k.conf" || cfg.ClientConnection.QPS != 20 {
		t.Errorf("top-level fields: %+v", cfg)
	}
	prof := &cfg.Profiles[0]
	fit, ok := prof.Args(names.NodeResourcesFit).(*NodeResourcesFitArgs)
	if !ok {
		t.Fatalf("NodeResourcesFit args are %T", prof.Args(names.NodeResourcesFit))
	}
	if fit.ScoringStrategy.Type != MostAllocated || len(fit.ScoringStrategy.Resources) != 2 || fit.ScoringStrategy.Resources[1].Weight != 0 {
		t.Errorf("fit args before defaults: %+v", fit.ScoringStrategy)
	}
	u, ok := prof.Args("MyPlugin").(*runtime.Unknown)
	if !ok {
		t.Fatalf("MyPlugin args are %T", prof.Args("MyPlugin"))
	}
	if string(u.Raw) != `{"answer":42,"nested":{"a":[1,2]}}` || u.ContentType != runtime.ContentTypeJSON {
		t.Errorf("raw args %q %q", u.Raw, u.ContentType)
	}
	if prof.Args("OtherPlugin") != nil {
		t.Errorf("OtherPlugin without args: %v", prof.Args("OtherPlugin"))
	}

	SetDefaults(cfg)
	if err := Validate(cfg); err != nil {
		t.Fatal(err)
	}
	// The user's partial args are defaulted: weight 0 -> 1.
	if got := fit.ScoringStrategy.Resources[1]; got.Name != "nvidia.com/gpu" || got.Weight != 1 {
		t.Errorf("defaulted resource %+v", got)
	}
	// JSON input decodes the same.
	js := `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"j","pluginConfig":[{"name":"InterPodAffinity","args":{"hardPodAffinityWeight":7}}]}]}`
	jcfg, err := Decode([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if w := *jcfg.Profiles[0].Args(names.InterPodAffinity).(*InterPodAffinityArgs).HardPodAffinityWeight; w != 7 {
		t.Errorf("json hardPodAffinityWeight %d", w)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Decode([]byte(header))
	if err != nil {
		t.Fatal(err)
	}
	SetDefaults(cfg)
	if err := Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if *cfg.Parallelism != 16 || *cfg.PercentageOfNodesToScore != 0 || *cfg.PodInitialBackoffSeconds != 1 || *cfg.PodMaxBackoffSeconds != 10 {
		t.Errorf("scalars: %d %d %d %d", *cfg.Parallelism, *cfg.PercentageOfNodesToScore, *cfg.PodInitialBackoffSeconds, *cfg.PodMaxBackoffSeconds)
	}
	le := cfg.LeaderElection
	if !*le.LeaderElect || le.LeaseDuration.Duration != 15*time.Second || le.RenewDeadline.Duration != 10*time.Second || le.RetryPeriod.Duration != 2*time.Second ||
		le.ResourceLock != "leases" || le.ResourceNamespace != "kube-system" || le.ResourceName != "kube-scheduler" {
		t.Errorf("leader election %+v", le)
	}
	cc := cfg.ClientConnection
	if cc.QPS != 50 || cc.Burst != 100 || cc.ContentType != "application/vnd.kubernetes.protobuf" {
		t.Errorf("client connection %+v", cc)
	}
	if !*cfg.EnableProfiling || !*cfg.EnableContentionProfiling {
		t.Errorf("profiling not on by default")
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].Name() != "default-scheduler" {
		t.Fatalf("profiles %+v", cfg.Profiles)
	}
	prof := cfg.Profiles[0]
	if !reflect.DeepEqual(prof.Plugins, DefaultPlugins()) {
		t.Errorf("plugins %+v", prof.Plugins)
	}
	var got []string
	for _, pc := range prof.PluginConfig {
		got = append(got, pc.Name)
	}
	want := []string{"DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread", "VolumeBinding"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pluginConfig names %v, want %v", got, want)
	}
	checks := []struct {
		plugin string
		want   runtime.Object
	}{
		{names.DefaultPreemption, &DefaultPreemptionArgs{MinCandidateNodesPercentage: ptrTo[int32](10), MinCandidateNodesAbsolute: ptrTo[int32](100)}},
		{names.InterPodAffinity, &InterPodAffinityArgs{HardPodAffinityWeight: ptrTo[int32](1)}},
		{names.NodeAffinity, &NodeAffinityArgs{}},
		{names.NodeResourcesBalancedAllocation, &NodeResourcesBalancedAllocationArgs{Resources: []ResourceSpec{{"cpu", 1}, {"memory", 1}}}},
		{names.NodeResourcesFit, &NodeResourcesFitArgs{ScoringStrategy: &ScoringStrategy{Type: LeastAllocated, Resources: []ResourceSpec{{"cpu", 1}, {"memory", 1}}}}},
		{names.PodTopologySpread, &PodTopologySpreadArgs{DefaultingType: SystemDefaulting}},
		{names.VolumeBinding, &VolumeBindingArgs{BindTimeoutSeconds: ptrTo[int64](600)}},
	}
	for _, c := range checks {
		w, _ := newArgs(c.plugin)
		// newArgs sets the TypeMeta; copy it onto the expectation.
		c.want.GetObjectKind().SetGroupVersionKind(w.GetObjectKind().GroupVersionKind())
		if got := prof.Args(c.plugin); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s args = %+v, want %+v", c.plugin, got, c.want)
		}
	}
	if d := prof.Args(names.DynamicResources).(*DynamicResourcesArgs); d.FilterTimeout.Duration != 10*time.Second {
		t.Errorf("DynamicResources filterTimeout %v", d.FilterTimeout)
	}

	// Idempotent.
	before, _ := Encode(cfg)
	SetDefaults(cfg)
	after, _ := Encode(cfg)
	if string(before) != string(after) {
		t.Errorf("SetDefaults not idempotent:\n%s\n---\n%s", before, after)
	}
	// Default() is the same as an empty file.
	def, _ := Encode(Default())
	if string(def) != string(before) {
		t.Errorf("Default() differs from an empty file:\n%s\n---\n%s", def, before)
	}
}

func names_(ps []Plugin) []string {
	var out []string
	for _, p := range ps {
		s := p.Name
		if p.Weight != nil {
			s += ":" + string(rune('0'+*p.Weight))
		}
		out = append(out, s)
	}
	return out
}

func TestMergePlugins(t *testing.T) {
	in := header + `
profiles:
- schedulerName: a
  plugins:
    multiPoint:
      enabled:
      - name: MyPlugin
      - name: TaintToleration
        weight: 5
      disabled:
      - name: ImageLocality
      - name: NodeResourcesFit
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 4
- schedulerName: b
  plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: NodeName}]
    filter:
      disabled: [{name: NodeName}]
`
	cfg, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	SetDefaults(cfg)
	if err := Validate(cfg); err != nil {
		t.Fatal(err)
	}
	a := cfg.Profiles[0].Plugins
	wantA := []string{"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration:5", "NodeAffinity:2", "NodePorts",
		"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread:2", "InterPodAffinity:2",
		"DynamicResources", "DefaultPreemption", "NodeResourcesBalancedAllocation:1", "DefaultBinder", "MyPlugin"}
	if got := names_(a.MultiPoint.Enabled); !reflect.DeepEqual(got, wantA) {
		t.Errorf("profile a multiPoint\n got %v\nwant %v", got, wantA)
	}
	if got := names_(a.MultiPoint.Disabled); !reflect.DeepEqual(got, []string{"ImageLocality", "NodeResourcesFit"}) {
		t.Errorf("profile a disabled %v", got)
	}
	if got := names_(a.Score.Enabled); !reflect.DeepEqual(got, []string{"NodeResourcesFit:4"}) {
		t.Errorf("profile a score %v", got)
	}
	// NodeResourcesFit is still enabled (at score) so it keeps its args;
	// ImageLocality has none anyway.
	if cfg.Profiles[0].Args(names.NodeResourcesFit) == nil {
		t.Errorf("NodeResourcesFit args dropped")
	}
	b := cfg.Profiles[1].Plugins
	if got := names_(b.MultiPoint.Enabled); !reflect.DeepEqual(got, []string{"PrioritySort", "DefaultBinder", "NodeName"}) {
		t.Errorf("profile b multiPoint %v", got)
	}
	var pcs []string
	for _, pc := range cfg.Profiles[1].PluginConfig {
		pcs = append(pcs, pc.Name)
	}
	if len(pcs) != 0 {
		t.Errorf("profile b has args for plugins it does not enable: %v", pcs)
	}
	// Two profiles, neither named default-scheduler.
	if cfg.Profiles[0].Name() != "a" || cfg.Profiles[1].Name() != "b" {
		t.Errorf("names %q %q", cfg.Profiles[0].Name(), cfg.Profiles[1].Name())
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"scalars", header + "parallelism: 0\npercentageOfNodesToScore: 101\npodInitialBackoffSeconds: 20\nclientConnection: {burst: -1}\n",
			[]string{"parallelism: Invalid value: 0: should be an integer value greater than zero",
				"percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
				"podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds",
				"clientConnection.burst: Invalid value: -1: must be non-negative"}},
		{"negative initial backoff", header + "podInitialBackoffSeconds: -1\n", []string{"podInitialBackoffSeconds: Invalid value: -1: must be greater than 0"}},
		{"leader election", header + "leaderElection: {leaseDuration: 1s, resourceLock: endpoints}\n",
			[]string{"leaderElection.leaseDuration: Invalid value: \"10s\": must be greater than `RenewDeadline`",
				`leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"`}},
		{"leader election off skips checks", header + "leaderElection: {leaderElect: false, leaseDuration: 1s}\nparallelism: -2\n",
			[]string{"parallelism"}},
		{"profiles", header + "profiles:\n- schedulerName: x\n  percentageOfNodesToScore: -1\n- schedulerName: x\n- {}\n",
			[]string{"profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
				`profiles[1].schedulerName: Duplicate value: "x"`,
				"profiles[2].schedulerName: Required value"}},
		{"queue sort differs", header + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled: [{name: Foo}]\n",
			[]string{"profiles[1].plugins.queueSort: Invalid value:", "must be the same for all profiles"}},
		{"duplicate plugin config", header + "profiles:\n- pluginConfig:\n  - name: Foo\n  - name: Foo\n",
			[]string{`profiles[0].pluginConfig[1]: Duplicate value: "Foo"`}},
		{"removed plugin", header + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n",
			[]string{`profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version "kubescheduler.config.k8s.io/v1"`}},
		{"extenders refused", header + "extenders:\n- urlPrefix: http://x\n", []string{"extenders: Forbidden: scheduler extenders are not supported by skiff"}},
		{"plugin args", header + `profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 300}
  - name: NodeResourcesFit
    args:
      ignoredResourceGroups: [example.com/foo]
      scoringStrategy:
        type: Bogus
        resources: [{name: cpu, weight: 200}]
        requestedToCapacityRatio: {shape: [{utilization: 50, score: 11}, {utilization: 40, score: 1}]}
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 2}, {name: cpu}]}
  - name: PodTopologySpread
    args:
      defaultConstraints:
      - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: Sometimes}
      - {maxSkew: 1, topologyKey: "", whenUnsatisfiable: DoNotSchedule, labelSelector: {}}
  - name: VolumeBinding
    args: {bindTimeoutSeconds: -1, shape: [{utilization: 0, score: 10}]}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: a, operator: Foo}]
            matchFields: [{key: metadata.name, operator: In, values: [a, b]}]
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 1
          preference:
            matchExpressions: [{key: "a b", operator: In, values: [x]}]
  - name: DynamicResources
    args: {filterTimeout: -1s}
`, []string{
			"profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 300: not in valid range [0, 100]",
			`profiles[0].pluginConfig[1].args.ignoredResourceGroups[0]: Invalid value: "example.com/foo": resource group name can't contain '/'`,
			`profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: "Bogus": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"`,
			"profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: Invalid value: 200: resource weight of cpu not in valid range (0, 100]",
			"profiles[0].pluginConfig[1].args.scoringStrategy.shape[1].utilization: Invalid value: 40: values must be sorted in increasing order",
			"profiles[0].pluginConfig[1].args.scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
			"profiles[0].pluginConfig[2].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
			"profiles[0].pluginConfig[2].args.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
			"profiles[0].pluginConfig[3].args.resources[0].weight: Invalid value: 2: must be 1",
			`profiles[0].pluginConfig[3].args.resources[1].name: Duplicate value: "cpu"`,
			`profiles[0].pluginConfig[4].args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty`,
			"profiles[0].pluginConfig[4].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
			`profiles[0].pluginConfig[4].args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes"`,
			"profiles[0].pluginConfig[4].args.defaultConstraints[1].topologyKey: Required value: can not be empty",
			"profiles[0].pluginConfig[4].args.defaultConstraints[1].labelSelector: Forbidden: constraint must not define a selector",
			"profiles[0].pluginConfig[5].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value",
			"profiles[0].pluginConfig[5].args.shape: Invalid value:",
			`profiles[0].pluginConfig[6].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Foo"`,
			"profiles[0].pluginConfig[6].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values: Invalid value:",
			"profiles[0].pluginConfig[6].args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].key: Invalid value: \"a b\"",
			"profiles[0].pluginConfig[7].args.filterTimeout: Invalid value:",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Decode([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			SetDefaults(cfg)
			err = Validate(cfg)
			if err == nil {
				t.Fatal("Validate succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte(header+"profiles:\n- schedulerName: s1\n- schedulerName: s2\n"), 0o600)
	cfg, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Profiles) != 2 || cfg.Profiles[1].Plugins == nil || len(cfg.Profiles[1].PluginConfig) == 0 {
		t.Errorf("Load did not default: %+v", cfg.Profiles)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(header+"profiles:\n- schedulerName: s1\n  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 101}]}}\n"), 0o600)
	_, err = Load(bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight") {
		t.Errorf("Load(bad) = %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	in := header + "profiles:\n- schedulerName: x\n  pluginConfig:\n  - name: MyPlugin\n    args: {a: 1}\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 5}\n"
	cfg, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	SetDefaults(cfg)
	out, err := Encode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg2, err := Decode(out)
	if err != nil {
		t.Fatalf("re-decoding:\n%s\n%v", out, err)
	}
	SetDefaults(cfg2)
	out2, _ := Encode(cfg2)
	if string(out) != string(out2) {
		t.Errorf("round trip differs:\n%s\n---\n%s", out, out2)
	}
	if w := *cfg2.Profiles[0].Args(names.InterPodAffinity).(*InterPodAffinityArgs).HardPodAffinityWeight; w != 5 {
		t.Errorf("weight %d", w)
	}
	for _, s := range []string{"kind: InterPodAffinityArgs", "apiVersion: kubescheduler.config.k8s.io/v1", "a: 1"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("encoded config lacks %q:\n%s", s, out)
		}
	}
}

// upstreamPoints says which extension points upstream 1.34's default
// plugins implement.
var upstreamPoints = map[string]ExtensionPointSet{
	names.SchedulingGates:    NewExtensionPointSet(ExtensionPreEnqueue),
	names.PrioritySort:       NewExtensionPointSet(ExtensionQueueSort),
	names.NodeUnschedulable:  NewExtensionPointSet(ExtensionFilter),
	names.NodeName:           NewExtensionPointSet(ExtensionFilter),
	names.TaintToleration:    NewExtensionPointSet(ExtensionFilter, ExtensionPreScore, ExtensionScore),
	names.NodeAffinity:       NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter, ExtensionPreScore, ExtensionScore),
	names.NodePorts:          NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter),
	names.NodeResourcesFit:   NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter, ExtensionPreScore, ExtensionScore),
	names.VolumeRestrictions: NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter),
	names.NodeVolumeLimits:   NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter),
	names.VolumeBinding: NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter, ExtensionReserve, ExtensionPreBind,
		ExtensionPreScore, ExtensionScore),
	names.VolumeZone:        NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter),
	names.PodTopologySpread: NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter, ExtensionPreScore, ExtensionScore),
	names.InterPodAffinity:  NewExtensionPointSet(ExtensionPreFilter, ExtensionFilter, ExtensionPreScore, ExtensionScore),
	names.DynamicResources: NewExtensionPointSet(ExtensionPreEnqueue, ExtensionPreFilter, ExtensionFilter, ExtensionPostFilter,
		ExtensionReserve, ExtensionPreBind),
	names.DefaultPreemption:               NewExtensionPointSet(ExtensionPostFilter, ExtensionPreEnqueue),
	names.NodeResourcesBalancedAllocation: NewExtensionPointSet(ExtensionPreScore, ExtensionScore),
	names.ImageLocality:                   NewExtensionPointSet(ExtensionScore),
	names.DefaultBinder:                   NewExtensionPointSet(ExtensionBind),
	"MyScore":                             NewExtensionPointSet(ExtensionScore, ExtensionFilter),
}

func info(name string) (ExtensionPointSet, bool) {
	s, ok := upstreamPoints[name]
	return s, ok
}

func weighted(ps []WeightedPlugin) []string {
	var out []string
	for _, p := range ps {
		s := p.Name
		if p.Weight != 0 {
			s += ":" + string(rune('0'+p.Weight))
		}
		out = append(out, s)
	}
	return out
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name    string
		profile string // YAML of one profile's plugins, indented under "  plugins:"
		want    map[ExtensionPoint][]string
		wantErr string
	}{
		{name: "defaults", want: map[ExtensionPoint][]string{
			ExtensionPreEnqueue: {"SchedulingGates", "DynamicResources", "DefaultPreemption"},
			ExtensionQueueSort:  {"PrioritySort"},
			ExtensionPreFilter: {"NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
				"VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"},
			ExtensionFilter: {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
				"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"},
			ExtensionPostFilter: {"DynamicResources", "DefaultPreemption"},
			ExtensionPreScore:   {"TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation"},
			ExtensionScore: {"TaintToleration:3", "NodeAffinity:2", "NodeResourcesFit:1", "VolumeBinding:1", "PodTopologySpread:2",
				"InterPodAffinity:2", "NodeResourcesBalancedAllocation:1", "ImageLocality:1"},
			ExtensionReserve:  {"VolumeBinding", "DynamicResources"},
			ExtensionPermit:   nil,
			ExtensionPreBind:  {"VolumeBinding", "DynamicResources"},
			ExtensionBind:     {"DefaultBinder"},
			ExtensionPostBind: nil,
		}},
		{name: "explicit score overrides come first with their weight", profile: `
    score:
      enabled: [{name: MyScore, weight: 7}, {name: ImageLocality, weight: 5}]
      disabled: [{name: TaintToleration}]
    filter:
      disabled: [{name: "*"}]
      enabled: [{name: MyScore}]`,
			want: map[ExtensionPoint][]string{
				ExtensionScore: {"ImageLocality:5", "NodeAffinity:2", "NodeResourcesFit:1", "VolumeBinding:1", "PodTopologySpread:2",
					"InterPodAffinity:2", "NodeResourcesBalancedAllocation:1", "MyScore:7"},
				ExtensionFilter: {"MyScore"},
			}},
		{name: "unknown plugin", profile: "\n    multiPoint:\n      enabled: [{name: Nope}]", wantErr: `PreFilterPlugin "Nope" does not exist`},
		{name: "unknown plugin at a point", profile: "\n    score:\n      enabled: [{name: Nope}]", wantErr: `ScorePlugin "Nope" does not exist`},
		{name: "does not extend", profile: "\n    bind:\n      enabled: [{name: ImageLocality}]", wantErr: `plugin "ImageLocality" does not extend BindPlugin plugin`},
		{name: "registered twice", profile: "\n    score:\n      enabled: [{name: MyScore}, {name: MyScore}]", wantErr: `plugin "MyScore" already registered as "ScorePlugin"`},
		{name: "twice in multipoint", profile: "\n    multiPoint:\n      enabled: [{name: MyScore}, {name: MyScore}]", wantErr: `plugin "MyScore" already registered as "FilterPlugin"`},
		{name: "no queue sort", profile: "\n    multiPoint:\n      disabled: [{name: PrioritySort}]", wantErr: `only one queue sort plugin required for profile with scheduler name "p", but got 0`},
		{name: "no binder", profile: "\n    bind:\n      disabled: [{name: \"*\"}]", wantErr: `at least one bind plugin is needed for profile with scheduler name "p"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := header + "profiles:\n- schedulerName: p\n"
			if tc.profile != "" {
				in += "  plugins:" + tc.profile + "\n"
			}
			cfg, err := Decode([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			SetDefaults(cfg)
			if err := Validate(cfg); err != nil {
				t.Fatal(err)
			}
			x, err := cfg.Profiles[0].Expand(info)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for e, want := range tc.want {
				if got := weighted(x.Points(e)); !reflect.DeepEqual(got, want) {
					t.Errorf("%s:\n got %v\nwant %v", e, got, want)
				}
			}
			if x.SchedulerName != "p" || x.Args[names.NodeResourcesFit] == nil {
				t.Errorf("expanded profile %q args %v", x.SchedulerName, x.Args)
			}
		})
	}
}

// A profile built in code, without MultiPoint and without defaults.
func TestExpandExplicitOnly(t *testing.T) {
	p := KubeSchedulerProfile{SchedulerName: ptrTo("p"), Plugins: &Plugins{
		QueueSort: PluginSet{Enabled: []Plugin{{Name: names.PrioritySort}}},
		Filter:    PluginSet{Enabled: []Plugin{{Name: "MyScore"}, {Name: names.NodeName}}},
		Score:     PluginSet{Enabled: []Plugin{{Name: "MyScore"}}},
		Bind:      PluginSet{Enabled: []Plugin{{Name: names.DefaultBinder}}},
	}}
	x, err := p.Expand(info)
	if err != nil {
		t.Fatal(err)
	}
	if got := weighted(x.Points(ExtensionFilter)); !reflect.DeepEqual(got, []string{"MyScore", "NodeName"}) {
		t.Errorf("filter %v", got)
	}
	if got := weighted(x.Points(ExtensionScore)); !reflect.DeepEqual(got, []string{"MyScore:1"}) {
		t.Errorf("score %v", got)
	}
	if !reflect.DeepEqual(x.Needed, []string{"DefaultBinder", "MyScore", "NodeName", "PrioritySort"}) {
		t.Errorf("needed %v", x.Needed)
	}
	if got := SystemDefaultConstraints[1]; got.TopologyKey != corev1.LabelTopologyZone || got.MaxSkew != 5 {
		t.Errorf("system default constraints %+v", SystemDefaultConstraints)
	}
}

// normalize makes a defaulted configuration comparable with upstream's
// --write-config-to output: upstream writes weight 0 for unweighted
// plugins and sorts pluginConfig by name.
func normalize(cfg *KubeSchedulerConfiguration) {
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		for _, s := range p.Plugins.sets() {
			for _, l := range [][]Plugin{s.set.Enabled, s.set.Disabled} {
				for j := range l {
					if l[j].Weight != nil && *l[j].Weight == 0 {
						l[j].Weight = nil
					}
				}
			}
		}
		sort.Slice(p.PluginConfig, func(a, b int) bool { return p.PluginConfig[a].Name < p.PluginConfig[b].Name })
	}
}

func TestGoldenUpstream(t *testing.T) {
	for _, name := range []string{"default", "merge"} {
		t.Run(name, func(t *testing.T) {
			load := func(file string) string {
				data, err := os.ReadFile(filepath.Join("testdata", file))
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := Decode(data)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				SetDefaults(cfg)
				if err := Validate(cfg); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				normalize(cfg)
				out, err := Encode(cfg)
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
			ours, upstream := load(name+".in.yaml"), load(name+".upstream.yaml")
			if ours != upstream {
				t.Errorf("skiff's defaulted %s.in.yaml differs from upstream's:\n%s\n--- upstream ---\n%s", name, ours, upstream)
			}
		})
	}
}

func TestDecodeIntoAndDefaultArgs(t *testing.T) {
	type myArgs struct {
		Answer int              `json:"answer"`
		Nested map[string][]int `json:"nested"`
	}
	cfg, err := Decode([]byte(header + "profiles:\n- pluginConfig:\n  - name: MyPlugin\n    args: {answer: 42, nested: {a: [1]}}\n  - name: Bad\n    args: {answr: 1}\n  - name: None\n"))
	if err != nil {
		t.Fatal(err)
	}
	prof := &cfg.Profiles[0]
	var a myArgs
	if err := DecodeInto(prof.Args("MyPlugin"), &a); err != nil || a.Answer != 42 || a.Nested["a"][0] != 1 {
		t.Errorf("DecodeInto = %v, %+v", err, a)
	}
	if err := DecodeInto(prof.Args("Bad"), &a); err == nil || !strings.Contains(err.Error(), `unknown field "answr"`) {
		t.Errorf("DecodeInto of an unknown field: %v", err)
	}
	a = myArgs{Answer: 7}
	if err := DecodeInto(prof.Args("None"), &a); err != nil || a.Answer != 7 {
		t.Errorf("DecodeInto(nil) = %v, %+v", err, a)
	}
	if err := DecodeInto(DefaultArgs(names.NodeResourcesFit), &a); err == nil {
		t.Error("DecodeInto of typed args succeeded")
	}
	fit, ok := DefaultArgs(names.NodeResourcesFit).(*NodeResourcesFitArgs)
	if !ok || fit.ScoringStrategy.Type != LeastAllocated || fit.Kind != "NodeResourcesFitArgs" {
		t.Errorf("DefaultArgs(NodeResourcesFit) = %+v", fit)
	}
	if DefaultArgs(names.ImageLocality) != nil {
		t.Error("ImageLocality has no args")
	}
	// A factory validates its args without a path.
	bad := &InterPodAffinityArgs{HardPodAffinityWeight: ptrTo[int32](-1)}
	if errs := ValidatePluginArgs(nil, bad); len(errs) != 1 || errs[0].Field != "hardPodAffinityWeight" {
		t.Errorf("ValidatePluginArgs(nil) = %v", errs)
	}
	// DeepCopyObject copies the pointers.
	cp := bad.DeepCopyObject().(*InterPodAffinityArgs)
	*cp.HardPodAffinityWeight = 5
	if *bad.HardPodAffinityWeight != -1 {
		t.Error("DeepCopyObject shares HardPodAffinityWeight")
	}
}

func TestDeepCopy(t *testing.T) {
	cfg, err := Decode([]byte(header + "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: MyPlugin\n    args: {x: 1}\nextenders:\n- urlPrefix: u\n  tlsConfig: {certData: YWJj}\n"))
	if err != nil {
		t.Fatal(err)
	}
	SetDefaults(cfg)
	before, _ := Encode(cfg)
	cp := cfg.DeepCopy()
	if got, _ := Encode(cp); string(got) != string(before) {
		t.Fatalf("copy differs:\n%s\n---\n%s", got, before)
	}
	*cp.Parallelism = 1
	*cp.Profiles[0].SchedulerName = "b"
	*cp.Profiles[0].Plugins.MultiPoint.Enabled[4].Weight = 9
	cp.Profiles[0].Args(names.NodeResourcesFit).(*NodeResourcesFitArgs).ScoringStrategy.Resources[0].Weight = 9
	cp.Profiles[0].Args("MyPlugin").(*runtime.Unknown).Raw[0] = 'X'
	cp.Extenders[0].TLSConfig.CertData[0] = 'X'
	if after, _ := Encode(cfg); string(after) != string(before) {
		t.Errorf("modifying the copy changed the original:\n%s\n---\n%s", after, before)
	}
}
