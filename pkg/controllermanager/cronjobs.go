package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/cronjob"
)

// The InitFuncs of the batch housekeeping controllers: CronJob,
// TTL-after-finished and the pod garbage collector.

func startCronJobController(cc ControllerContext) (Controller, error) {
	return cronjob.New(cronjob.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
