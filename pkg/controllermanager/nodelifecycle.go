package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/nodelifecycle"
)

// The InitFunc of the node lifecycle controller.

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
