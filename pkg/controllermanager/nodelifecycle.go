package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/nodelifecycle"
	"github.com/skiff-sh/skiff/pkg/controller/tainteviction"
)

// The InitFuncs of the node lifecycle and taint eviction controllers.

func startNodeLifecycleController(cc ControllerContext) (Controller, error) {
	return nodelifecycle.New(nodelifecycle.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: nodelifecycle.DefaultWorkers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider, Registry: cc.Registry,
		NodeMonitorPeriod:         cc.Config.NodeLifecycle.NodeMonitorPeriod,
		NodeMonitorGracePeriod:    cc.Config.NodeLifecycle.NodeMonitorGracePeriod,
		NodeStartupGracePeriod:    cc.Config.NodeLifecycle.NodeStartupGracePeriod,
		NodeEvictionRate:          cc.Config.NodeLifecycle.NodeEvictionRate,
		SecondaryNodeEvictionRate: cc.Config.NodeLifecycle.SecondaryNodeEvictionRate,
		LargeClusterSizeThreshold: cc.Config.NodeLifecycle.LargeClusterSizeThreshold,
		UnhealthyZoneThreshold:    cc.Config.NodeLifecycle.UnhealthyZoneThreshold,
	})
}

func startTaintEvictionController(cc ControllerContext) (Controller, error) {
	return tainteviction.New(tainteviction.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: tainteviction.DefaultWorkers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider, Registry: cc.Registry,
	})
}
