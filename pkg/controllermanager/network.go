package controllermanager

import (
	"time"

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
	// EndpointUpdatesBatchPeriod and EndpointSliceUpdatesBatchPeriod are
	// --endpoint-updates-batch-period and
	// --endpointslice-updates-batch-period (0): how long pod changes are
	// batched before the Service's endpoints are written.
	EndpointUpdatesBatchPeriod      time.Duration
	EndpointSliceUpdatesBatchPeriod time.Duration
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
		UpdatesBatchPeriod: cc.Config.Network.EndpointUpdatesBatchPeriod,
	})
}

func startEndpointSliceController(cc ControllerContext) (Controller, error) {
	return endpointslice.New(endpointslice.Config{
		Client: cc.Client, Informers: cc.Informers, Recorder: cc.Recorder, Clock: cc.Clock,
		Workers: cc.Workers, Logger: cc.Logger, MetricsProvider: cc.MetricsProvider,
		MaxEndpointsPerSlice: cc.Config.Network.MaxEndpointsPerSlice,
		UpdatesBatchPeriod:   cc.Config.Network.EndpointSliceUpdatesBatchPeriod,
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
