package controllermanager

import "github.com/skiff-sh/skiff/pkg/controller/job"

// The InitFunc of the Job controller.

func startJobController(cc ControllerContext) (Controller, error) {
	return job.New(job.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider, Registry: cc.Registry,
	})
}
