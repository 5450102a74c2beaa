package controllermanager

import (
	"github.com/skiff-sh/skiff/pkg/controller/disruption"
	"github.com/skiff-sh/skiff/pkg/controller/endpoints"
	"github.com/skiff-sh/skiff/pkg/controller/endpointslice"
	"github.com/skiff-sh/skiff/pkg/controller/endpointslicemirroring"
)

// NetworkConfig is upstream's flags of the endpointslice controllers.
type NetworkConfig struct {
	// MaxEndpointsPerSlice is --max-endpoints-per-slice (100, at most
	// 1000).
	MaxEndpointsPerSlice int
	// MirroringMaxEndpointsPerSubset is
	// --mirroring-max-endpoints-per-subset (1000): the most addresses of
	// one Endpoints subset mirrored into EndpointSlices.
	MirroringMaxEndpointsPerSubset int
}

// Upstream's defaults of NetworkConfig.
const (
	DefaultMaxEndpointsPerSlice           = 100
	DefaultMirroringMaxEndpointsPerSubset = 1000
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

func startEndpointSliceController(cc ControllerContext) (Controller, error) {
	return endpointslice.New(endpointslice.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
		MaxEndpointsPerSlice: cc.Config.Network.MaxEndpointsPerSlice,
	})
}

func startEndpointSliceMirroringController(cc ControllerContext) (Controller, error) {
	return endpointslicemirroring.New(endpointslicemirroring.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
		MaxEndpointsPerSubset: cc.Config.Network.MirroringMaxEndpointsPerSubset,
	})
}

func startDisruptionController(cc ControllerContext) (Controller, error) {
	return disruption.New(disruption.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
	})
}
