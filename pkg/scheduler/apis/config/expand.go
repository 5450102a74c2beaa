package config

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// ExtensionPoint identifies an extension point of the framework.
type ExtensionPoint int

// The extension points, in the order upstream's framework expands them.
const (
	ExtensionPreFilter ExtensionPoint = iota
	ExtensionFilter
	ExtensionPostFilter
	ExtensionReserve
	ExtensionPreScore
	ExtensionScore
	ExtensionPreBind
	ExtensionBind
	ExtensionPostBind
	ExtensionPermit
	ExtensionPreEnqueue
	ExtensionQueueSort
	numExtensionPoints
)

// ExtensionPoints lists all extension points (upstream's order).
var ExtensionPoints = []ExtensionPoint{
	ExtensionPreFilter, ExtensionFilter, ExtensionPostFilter, ExtensionReserve,
	ExtensionPreScore, ExtensionScore, ExtensionPreBind, ExtensionBind,
	ExtensionPostBind, ExtensionPermit, ExtensionPreEnqueue, ExtensionQueueSort,
}

var extensionNames = [numExtensionPoints]string{
	"PreFilter", "Filter", "PostFilter", "Reserve", "PreScore", "Score",
	"PreBind", "Bind", "PostBind", "Permit", "PreEnqueue", "QueueSort",
}

// String is the extension point's name ("PreFilter").
func (e ExtensionPoint) String() string {
	if e < 0 || e >= numExtensionPoints {
		return fmt.Sprintf("ExtensionPoint(%d)", int(e))
	}
	return extensionNames[e]
}

// pluginType is the name upstream's errors use ("FilterPlugin").
func (e ExtensionPoint) pluginType() string { return e.String() + "Plugin" }

// Set returns the PluginSet of e in p.
func (p *Plugins) Set(e ExtensionPoint) *PluginSet {
	switch e {
	case ExtensionPreFilter:
		return &p.PreFilter
	case ExtensionFilter:
		return &p.Filter
	case ExtensionPostFilter:
		return &p.PostFilter
	case ExtensionReserve:
		return &p.Reserve
	case ExtensionPreScore:
		return &p.PreScore
	case ExtensionScore:
		return &p.Score
	case ExtensionPreBind:
		return &p.PreBind
	case ExtensionBind:
		return &p.Bind
	case ExtensionPostBind:
		return &p.PostBind
	case ExtensionPermit:
		return &p.Permit
	case ExtensionPreEnqueue:
		return &p.PreEnqueue
	case ExtensionQueueSort:
		return &p.QueueSort
	}
	panic(fmt.Sprintf("unknown extension point %d", int(e)))
}

// ExtensionPointSet is a set of extension points (bit i = ExtensionPoint i).
type ExtensionPointSet uint32

// NewExtensionPointSet returns the set of the given points.
func NewExtensionPointSet(eps ...ExtensionPoint) ExtensionPointSet {
	var s ExtensionPointSet
	for _, e := range eps {
		s |= 1 << uint(e)
	}
	return s
}

// Has reports whether e is in s.
func (s ExtensionPointSet) Has(e ExtensionPoint) bool { return s&(1<<uint(e)) != 0 }

// PluginInfo tells Expand which extension points the named plugin
// implements; ok false means the registry has no such plugin. The
// framework runtime builds it from the plugin instances (type assertions).
type PluginInfo func(name string) (implements ExtensionPointSet, ok bool)

// WeightedPlugin is an enabled plugin; Weight is set (>= 1) only in the
// Score list.
type WeightedPlugin struct {
	Name   string
	Weight int32
}

// ExpandedProfile is a profile resolved into what the framework runs.
type ExpandedProfile struct {
	SchedulerName            string
	PercentageOfNodesToScore *int32
	// Needed lists every plugin to instantiate (sorted).
	Needed []string
	// Args holds each needed plugin's args (nil when none configured).
	Args map[string]runtime.Object
	// Plugins is the ordered enabled list per extension point.
	Plugins [numExtensionPoints][]WeightedPlugin
}

// Points returns the ordered plugins of extension point e.
func (x *ExpandedProfile) Points(e ExtensionPoint) []WeightedPlugin { return x.Plugins[e] }

// Expand resolves a defaulted profile as upstream's framework runtime
// (NewFramework) does, so the runtime only has to instantiate plugins:
//   - plugins listed at a specific extension point are enabled there in
//     order; each must exist and implement the point, at most once;
//   - MultiPoint plugins are added to every point they implement unless
//     that point disables them or "*"; a plugin also listed at the specific
//     point is an explicit override: such overrides come first (in the
//     specific point's order), then the MultiPoint plugins, then the rest
//     of the specific point's plugins;
//   - Score weights: the weight given at the score point wins over
//     MultiPoint's, 0 or unset means 1, and the sum of weight*MaxNodeScore
//     must not overflow;
//   - exactly one QueueSort plugin and at least one Bind plugin.
//
// Errors use upstream's messages.
func (p *KubeSchedulerProfile) Expand(info PluginInfo) (*ExpandedProfile, error) {
	x := &ExpandedProfile{
		SchedulerName:            p.Name(),
		PercentageOfNodesToScore: p.PercentageOfNodesToScore,
		Args:                     map[string]runtime.Object{},
	}
	plugins := p.Plugins
	if plugins == nil {
		plugins = &Plugins{}
	}
	for _, pc := range p.PluginConfig {
		if _, dup := x.Args[pc.Name]; dup {
			return nil, fmt.Errorf("repeated config for plugin %s", pc.Name)
		}
		x.Args[pc.Name] = pc.Args.Object
	}
	x.Needed = plugins.Names()
	impl := map[string]ExtensionPointSet{}
	for _, name := range x.Needed {
		s, ok := info(name)
		if !ok {
			// upstream reports the first extension point that lists it
			return nil, fmt.Errorf("%s %q does not exist", firstListing(plugins, name).pluginType(), name)
		}
		impl[name] = s
	}
	for name := range x.Args {
		if _, ok := impl[name]; !ok {
			delete(x.Args, name) // args of plugins not enabled are unused
		}
	}

	// specific extension points
	for _, e := range ExtensionPoints {
		seen := map[string]bool{}
		for _, pl := range plugins.Set(e).Enabled {
			if !impl[pl.Name].Has(e) {
				return nil, fmt.Errorf("plugin %q does not extend %s plugin", pl.Name, e.pluginType())
			}
			if seen[pl.Name] {
				return nil, fmt.Errorf("plugin %q already registered as %q", pl.Name, e.pluginType())
			}
			seen[pl.Name] = true
		}
	}

	// MultiPoint expansion
	for _, e := range ExtensionPoints {
		set := plugins.Set(e)
		disabled := map[string]bool{}
		for _, d := range set.Disabled {
			disabled[d.Name] = true
		}
		specific := make([]string, 0, len(set.Enabled))
		inSpecific := map[string]bool{}
		for _, pl := range set.Enabled {
			specific = append(specific, pl.Name)
			inSpecific[pl.Name] = true
		}
		var multi []string
		override := map[string]bool{}
		if !disabled["*"] {
			inMulti := map[string]bool{}
			for _, pl := range plugins.MultiPoint.Enabled {
				if !impl[pl.Name].Has(e) || disabled[pl.Name] {
					continue
				}
				if inSpecific[pl.Name] {
					override[pl.Name] = true
					continue
				}
				if inMulti[pl.Name] {
					return nil, fmt.Errorf("plugin %q already registered as %q", pl.Name, e.pluginType())
				}
				inMulti[pl.Name] = true
				multi = append(multi, pl.Name)
			}
		}
		var ordered []string
		for _, n := range specific {
			if override[n] {
				ordered = append(ordered, n)
			}
		}
		ordered = append(ordered, multi...)
		for _, n := range specific {
			if !override[n] {
				ordered = append(ordered, n)
			}
		}
		list := make([]WeightedPlugin, len(ordered))
		for i, n := range ordered {
			list[i] = WeightedPlugin{Name: n}
		}
		x.Plugins[e] = list
	}

	// Score weights
	weights := map[string]int32{}
	var total int64
	for _, pl := range append(append([]Plugin(nil), plugins.Score.Enabled...), plugins.MultiPoint.Enabled...) {
		if !impl[pl.Name].Has(ExtensionScore) {
			continue
		}
		if _, ok := weights[pl.Name]; ok {
			continue
		}
		w := deref(pl.Weight)
		if w == 0 {
			w = 1
		}
		weights[pl.Name] = w
		if int64(w)*MaxNodeScore > MaxTotalScore-total {
			return nil, fmt.Errorf("total score of Score plugins could overflow")
		}
		total += int64(w) * MaxNodeScore
	}
	for i := range x.Plugins[ExtensionScore] {
		sp := &x.Plugins[ExtensionScore][i]
		sp.Weight = weights[sp.Name]
	}

	if n := len(x.Plugins[ExtensionQueueSort]); n != 1 {
		return nil, fmt.Errorf("only one queue sort plugin required for profile with scheduler name %q, but got %d", x.SchedulerName, n)
	}
	if len(x.Plugins[ExtensionBind]) == 0 {
		return nil, fmt.Errorf("at least one bind plugin is needed for profile with scheduler name %q", x.SchedulerName)
	}
	return x, nil
}

func firstListing(p *Plugins, name string) ExtensionPoint {
	for _, e := range ExtensionPoints {
		for _, pl := range p.Set(e).Enabled {
			if pl.Name == name {
				return e
			}
		}
	}
	return ExtensionPreFilter
}
