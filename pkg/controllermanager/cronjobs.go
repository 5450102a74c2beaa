package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/cronjob"
	"github.com/skiff-sh/skiff/pkg/controller/podgc"
	"github.com/skiff-sh/skiff/pkg/controller/ttlafterfinished"
)

// The InitFuncs of the batch housekeeping controllers: CronJob,
// TTL-after-finished and the pod garbage collector.

func startCronJobController(cc ControllerContext) (Controller, error) {
	return cronjob.New(cronjob.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider, Registry: cc.Registry,
	})
}

func startTTLAfterFinishedController(cc ControllerContext) (Controller, error) {
	return ttlafterfinished.New(ttlafterfinished.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider, Registry: cc.Registry,
	})
}

func startPodGC(cc ControllerContext) (Controller, error) {
	threshold := cc.Config.TerminatedPodGCThreshold
	switch {
	case threshold == 0:
		threshold = podgc.DefaultTerminatedPodThreshold
	case threshold < 0:
		threshold = 0 // off
	}
	return podgc.New(podgc.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Logger: cc.Logger, MetricsProvider: cc.MetricsProvider, Registry: cc.Registry, TerminatedPodThreshold: threshold,
	})
}
