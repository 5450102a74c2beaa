package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/daemon"
	"github.com/skiff-sh/skiff/pkg/controller/statefulset"
)

// The InitFuncs of the StatefulSet and DaemonSet controllers.

func startStatefulSetController(cc ControllerContext) (Controller, error) {
	return statefulset.New(statefulset.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}

func startDaemonSetController(cc ControllerContext) (Controller, error) {
	return daemon.New(daemon.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
