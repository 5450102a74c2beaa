package plugins

import (
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/defaultbinder"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/defaultpreemption"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/dynamicresources"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/imagelocality"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/interpodaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/nodeaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/nodename"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/nodeports"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/noderesources"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/nodeunschedulable"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/nodevolumelimits"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/podtopologyspread"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/queuesort"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/schedulinggates"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/tainttoleration"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/volumebinding"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/volumerestrictions"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/volumezone"
)

// NewInTreeRegistry returns the factories of every in-tree plugin, by
// upstream's plugin name.
func NewInTreeRegistry() framework.Registry {
	r := framework.Registry{
		// One line per plugin: names.X: x.New,
		names.PrioritySort:                    queuesort.New,
		names.SchedulingGates:                 schedulinggates.New,
		names.NodeName:                        nodename.New,
		names.NodeUnschedulable:               nodeunschedulable.New,
		names.NodePorts:                       nodeports.New,
		names.ImageLocality:                   imagelocality.New,
		names.DefaultBinder:                   defaultbinder.New,
		names.NodeAffinity:                    nodeaffinity.New,
		names.InterPodAffinity:                interpodaffinity.New,
		names.TaintToleration:                 tainttoleration.New,
		names.NodeResourcesFit:                noderesources.NewFit,
		names.NodeResourcesBalancedAllocation: noderesources.NewBalancedAllocation,
		names.DefaultPreemption:               defaultpreemption.New,
		names.PodTopologySpread:               podtopologyspread.New,
		names.VolumeBinding:                   volumebinding.New,
		names.VolumeRestrictions:              volumerestrictions.New,
		names.VolumeZone:                      volumezone.New,
		names.NodeVolumeLimits:                nodevolumelimits.New,
		names.DynamicResources:                dynamicresources.New,
	}
	return r
}
