package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/endpoints"
)

// The InitFuncs of the service-network controllers (endpoints,
// endpointslice, endpointslice-mirroring) and of the disruption
// controller.

func startEndpointsController(cc ControllerContext) (Controller, error) {
	return endpoints.New(endpoints.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
