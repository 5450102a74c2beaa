package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/garbagecollector"
	"github.com/skiff-sh/skiff/pkg/controller/namespace"
)

func startGarbageCollector(cc ControllerContext) (Controller, error) {
	return garbagecollector.New(garbagecollector.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}

func startNamespaceController(cc ControllerContext) (Controller, error) {
	return namespace.New(namespace.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
